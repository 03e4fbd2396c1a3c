/// A sorted set that knows positions, like ``CountedTree``, laid out as a B+tree: the elements
/// sit in ascending order in leaves of up to ``leafCapacity``, and each branch keeps, for each
/// of its up to ``branchCapacity`` children, the child's first element and how many elements it
/// holds. A rank, a select or a partition point reads one node per level (four for a million
/// elements, where a binary tree reads about twenty), each a few contiguous cache lines.
///
/// Nodes live in flat arrays, one fixed-size stripe per node, and refer to each other by Int32
/// index: the set is one value (copied on write, `Sendable` with its elements), and nothing is
/// allocated per element or per node. Every node but the root is at least half full (a removal
/// borrows from or merges with a neighbour), freed nodes wait on free lists for the next split,
/// and the leaves are linked in order, so ``elements(from:)`` walks them without climbing back.
///
/// Slots beyond a node's count hold copies of elements (the array needs some value there): an
/// element holding references may stay alive after its removal until its slot is reused.
///
/// The API is `@inlinable` (its internals `@usableFromInline`), so code in other modules is
/// specialized to its element type.
public struct CountedBTree<Element: Comparable> {
    /// Elements a leaf holds at most; every leaf but the root holds at least half as many.
    @inlinable static var leafCapacity: Int { 64 }

    /// Children a branch holds at most; every branch but the root holds at least half as many.
    @inlinable static var branchCapacity: Int { 64 }

    /// The index that stands for no node.
    @inlinable static var none: Int32 { -1 }

    /// The leaves' elements, ``leafCapacity`` slots per leaf, the first `leafCounts[leaf]` in use.
    @usableFromInline var leafElements: [Element]
    @usableFromInline var leafCounts: [Int32]
    /// Each leaf's successor in ascending order (for a free leaf, the next free one), or none.
    @usableFromInline var nextLeaf: [Int32]

    /// The branches' children, ``branchCapacity`` slots per branch, the first
    /// `childCounts[branch]` in use: each child's first element, its number of elements and its
    /// index (a leaf's in the branches just above the leaves, a branch's above them).
    @usableFromInline var keys: [Element]
    @usableFromInline var sizes: [Int32]
    @usableFromInline var children: [Int32]
    @usableFromInline var childCounts: [Int32]

    @usableFromInline var root: Int32
    /// Nodes on every path from the root to a leaf: 0 when empty, 1 when the root is a leaf.
    @usableFromInline var levels: Int
    @usableFromInline var elementCount: Int
    /// The first free leaf (the rest linked through `nextLeaf`) and the first free branch (the
    /// rest linked through its first child slot), or none.
    @usableFromInline var freeLeaf: Int32
    @usableFromInline var freeBranch: Int32

    /// An empty set.
    @inlinable
    public init() {
        leafElements = []
        leafCounts = []
        nextLeaf = []
        keys = []
        sizes = []
        children = []
        childCounts = []
        root = Self.none
        levels = 0
        elementCount = 0
        freeLeaf = Self.none
        freeBranch = Self.none
    }

    /// How many elements it holds.
    @inlinable public var count: Int { elementCount }

    /// Whether it holds no element.
    @inlinable public var isEmpty: Bool { elementCount == 0 }

    /// Bytes its storage holds (room reserved, free nodes and the slack of partly full ones included).
    public var storageBytes: Int {
        let elementSlots = leafElements.capacity + keys.capacity
        let indexSlots = leafCounts.capacity + nextLeaf.capacity + sizes.capacity + children.capacity + childCounts.capacity
        return elementSlots * MemoryLayout<Element>.stride + indexSlots * MemoryLayout<Int32>.stride
    }

    /// Whether `element` is in the set.
    @inlinable
    public func contains(_ element: Element) -> Bool { index(of: element) != nil }

    /// The position of `element` in ascending order, or nil when it is not in the set.
    @inlinable
    public func index(of element: Element) -> Int? {
        guard levels > 0 else { return nil }
        var node = Int(root)
        var before = 0
        for _ in 1 ..< levels {
            let child = childIndex(in: node, where: { !(element < $0) })
            before += elementsBefore(child, in: node)
            node = Int(children[node * Self.branchCapacity + child])
        }
        let position = leafPrefixCount(node, while: { $0 < element })
        guard position < Int(leafCounts[node]),
              !(element < leafElements[node * Self.leafCapacity + position])
        else { return nil }
        return before + position
    }

    /// How many elements come before the first for which `isBefore` is false. `isBefore` must be
    /// true for a prefix of the set in ascending order and false for the rest (a partition
    /// point, found by a binary search in each node on the way down: about log2(count) calls).
    @inlinable
    public func prefixCount(while isBefore: (Element) -> Bool) -> Int {
        guard levels > 0 else { return 0 }
        var node = Int(root)
        var count = 0
        for _ in 1 ..< levels {
            let child = childIndex(in: node, where: isBefore)
            count += elementsBefore(child, in: node)
            node = Int(children[node * Self.branchCapacity + child])
        }
        return count + leafPrefixCount(node, while: isBefore)
    }

    /// The element at `index` in ascending order (0 ..< count).
    @inlinable
    public subscript(index: Int) -> Element {
        precondition(index >= 0 && index < elementCount, "index out of range")
        let (leaf, position) = leafAndPosition(ofRank: index)
        return leafElements[leaf * Self.leafCapacity + position]
    }

    /// Calls `body` with the element at each of `ranks` (ascending, repeats allowed, each in
    /// 0 ..< count), in one walk down the tree: a node on the paths to several ranks is read
    /// once, and ranks in one leaf cost a read each.
    @inlinable
    public func forEach(atAscendingRanks ranks: [Int], _ body: (Element) -> Void) {
        guard let first = ranks.first, let last = ranks.last else { return }
        precondition(first >= 0 && last < elementCount, "rank out of range")
        for position in ranks.indices.dropFirst() {
            precondition(ranks[position - 1] <= ranks[position], "ranks not ascending")
        }
        visit(Int(root), levels: levels, ranks: ranks[...], offset: 0, body)
    }

    /// Calls `body` for `ranks` (ascending, all in the subtree at `node`, whose first element
    /// has rank `offset`).
    @inlinable
    func visit(_ node: Int, levels: Int, ranks: ArraySlice<Int>, offset: Int, _ body: (Element) -> Void) {
        guard levels > 1 else {
            let base = node * Self.leafCapacity - offset
            for rank in ranks { body(leafElements[base + rank]) }
            return
        }
        var slot = node * Self.branchCapacity
        var first = ranks.startIndex
        var childStart = offset
        while first < ranks.endIndex {
            let childEnd = childStart + Int(sizes[slot])
            var end = first
            while end < ranks.endIndex, ranks[end] < childEnd { end += 1 }
            if end > first {
                visit(Int(children[slot]), levels: levels - 1, ranks: ranks[first ..< end], offset: childStart, body)
            }
            first = end
            childStart = childEnd
            slot += 1
        }
    }

    /// The elements from `index` on, in ascending order (none when `index` is outside
    /// 0 ..< count): O(log n) to reach the first, then O(1) per element.
    @inlinable
    public func elements(from index: Int) -> Elements {
        Elements(tree: self, from: index)
    }

    /// The elements from an index on, in ascending order, leaf after leaf (the storage of the
    /// set is kept, so changing the set meanwhile changes nothing here).
    public struct Elements: Sequence, IteratorProtocol {
        @usableFromInline let leafElements: [Element]
        @usableFromInline let leafCounts: [Int32]
        @usableFromInline let nextLeaf: [Int32]
        /// The leaf being read, or none when done.
        @usableFromInline var leaf: Int32
        /// The slot of the next element in `leafElements`, and the end of the leaf's elements.
        @usableFromInline var slot: Int
        @usableFromInline var end: Int

        @inlinable
        init(tree: CountedBTree, from index: Int) {
            leafElements = tree.leafElements
            leafCounts = tree.leafCounts
            nextLeaf = tree.nextLeaf
            guard index >= 0, index < tree.count else {
                leaf = CountedBTree.none
                slot = 0
                end = 0
                return
            }
            let (leaf, position) = tree.leafAndPosition(ofRank: index)
            self.leaf = Int32(leaf)
            slot = leaf * CountedBTree.leafCapacity + position
            end = leaf * CountedBTree.leafCapacity + Int(tree.leafCounts[leaf])
        }

        /// The next element, or nil after the last.
        @inlinable
        public mutating func next() -> Element? {
            if slot == end {
                guard leaf != CountedBTree.none else { return nil }
                leaf = nextLeaf[Int(leaf)]
                guard leaf != CountedBTree.none else { return nil }
                slot = Int(leaf) * CountedBTree.leafCapacity
                end = slot + Int(leafCounts[Int(leaf)])
            }
            defer { slot += 1 }
            return leafElements[slot]
        }
    }

    // MARK: The tree

    /// The child of `branch` where the partition point of `isBefore` lies: the last whose first
    /// element is before (the first child when none is).
    @inlinable
    func childIndex(in branch: Int, where isBefore: (Element) -> Bool) -> Int {
        let base = branch * Self.branchCapacity
        var low = 1
        var high = Int(childCounts[branch])
        while low < high {
            let middle = (low + high) >> 1
            if isBefore(keys[base + middle]) { low = middle + 1 } else { high = middle }
        }
        return low - 1
    }

    /// How many elements of `leaf` come before the first for which `isBefore` is false.
    @inlinable
    func leafPrefixCount(_ leaf: Int, while isBefore: (Element) -> Bool) -> Int {
        let base = leaf * Self.leafCapacity
        var low = 0
        var high = Int(leafCounts[leaf])
        while low < high {
            let middle = (low + high) >> 1
            if isBefore(leafElements[base + middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Elements under the children of `branch` before child `child`.
    @inlinable
    func elementsBefore(_ child: Int, in branch: Int) -> Int {
        let base = branch * Self.branchCapacity
        var total = 0
        for slot in base ..< base + child { total += Int(sizes[slot]) }
        return total
    }

    /// The leaf holding the element of rank `rank` (0 ..< count), and its position there.
    @inlinable
    func leafAndPosition(ofRank rank: Int) -> (leaf: Int, position: Int) {
        var node = Int(root)
        var rank = rank
        for _ in 1 ..< levels {
            var slot = node * Self.branchCapacity
            while true {
                let size = Int(sizes[slot])
                if rank < size { break }
                rank -= size
                slot += 1
            }
            node = Int(children[slot])
        }
        return (node, rank)
    }

    /// The first element of `node`, a leaf when `levels` is 1, else a branch.
    @inlinable
    func firstElement(of node: Int, levels: Int) -> Element {
        levels == 1 ? leafElements[node * Self.leafCapacity] : keys[node * Self.branchCapacity]
    }

    // MARK: Checks for tests

    /// Whether every invariant holds: ascending order, every count and first element a branch
    /// keeps, the fill of every node (the root's excepted), the leaves' links in order, every
    /// node either in the tree once or free. O(n), for tests.
    public func invariantsHold() -> Bool {
        let leafCapacity = Self.leafCapacity
        let branchCapacity = Self.branchCapacity
        guard leafElements.count == leafCounts.count * leafCapacity, nextLeaf.count == leafCounts.count,
              keys.count == childCounts.count * branchCapacity, sizes.count == keys.count, children.count == keys.count
        else { return false }
        guard levels > 0 else { return root == Self.none && elementCount == 0 && leafCounts.isEmpty && childCounts.isEmpty }
        var leafSeen = [Bool](repeating: false, count: leafCounts.count)
        var branchSeen = [Bool](repeating: false, count: childCounts.count)
        var leavesInOrder: [Int32] = []
        var previous: Element?
        /// The number of elements under `node`, or nil when something is wrong there.
        func check(_ node: Int, levels: Int, isRoot: Bool) -> Int? {
            if levels == 1 {
                guard node >= 0, node < leafCounts.count, !leafSeen[node] else { return nil }
                leafSeen[node] = true
                leavesInOrder.append(Int32(node))
                let count = Int(leafCounts[node])
                guard count <= leafCapacity, count >= (isRoot ? 1 : leafCapacity / 2) else { return nil }
                for element in leafElements[node * leafCapacity ..< node * leafCapacity + count] {
                    if let previous, !(previous < element) { return nil }
                    previous = element
                }
                return count
            }
            guard node >= 0, node < childCounts.count, !branchSeen[node] else { return nil }
            branchSeen[node] = true
            let count = Int(childCounts[node])
            guard count <= branchCapacity, count >= (isRoot ? 2 : branchCapacity / 2) else { return nil }
            var total = 0
            for slot in node * branchCapacity ..< node * branchCapacity + count {
                let child = Int(children[slot])
                guard let size = check(child, levels: levels - 1, isRoot: false), size == Int(sizes[slot]),
                      keys[slot] == firstElement(of: child, levels: levels - 1)
                else { return nil }
                total += size
            }
            return total
        }
        guard check(Int(root), levels: levels, isRoot: true) == elementCount else { return false }
        // The leaves' links follow the tree's order.
        var leaf = leavesInOrder[0]
        for expected in leavesInOrder {
            guard leaf == expected else { return false }
            leaf = nextLeaf[Int(leaf)]
        }
        guard leaf == Self.none else { return false }
        // Every other node is free, once.
        var free = freeLeaf
        while free != Self.none {
            guard free >= 0, Int(free) < leafCounts.count, !leafSeen[Int(free)] else { return false }
            leafSeen[Int(free)] = true
            free = nextLeaf[Int(free)]
        }
        free = freeBranch
        while free != Self.none {
            guard free >= 0, Int(free) < childCounts.count, !branchSeen[Int(free)] else { return false }
            branchSeen[Int(free)] = true
            free = children[Int(free) * branchCapacity]
        }
        return !leafSeen.contains(false) && !branchSeen.contains(false)
    }

    /// Nodes on every path from the root to a leaf (0 when empty), for tests of its balance.
    public var height: Int { levels }
}

extension CountedBTree: Sendable where Element: Sendable {}

extension CountedBTree.Elements: Sendable where Element: Sendable {}
