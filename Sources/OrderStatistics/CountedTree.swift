/// A sorted set that knows positions: inserting, removing, the element at an index and the index
/// of an element each take O(log n) in the worst case. An AVL tree whose nodes count the
/// elements below them (the "order statistic" tree), kept in one dense array, nodes referring to
/// each other by index: the set is one value (copied on write, `Sendable` with its elements), its
/// storage is exactly its elements, and nothing is allocated per element.
///
/// A removal moves the last node of the array into the freed slot (found by searching for its
/// element), so the array never has holes.
///
/// The API is `@inlinable` (its internals `@usableFromInline`), so code in other modules is
/// specialized to its element type.
public struct CountedTree<Element: Comparable> {
    @usableFromInline
    struct Node {
        @usableFromInline var element: Element
        @usableFromInline var left: Int32
        @usableFromInline var right: Int32
        /// Elements in the subtree rooted here, this one included.
        @usableFromInline var size: Int32
        /// Nodes on the longest path down from here, this one included.
        @usableFromInline var height: Int8

        @inlinable
        init(element: Element, left: Int32, right: Int32, size: Int32, height: Int8) {
            self.element = element
            self.left = left
            self.right = right
            self.size = size
            self.height = height
        }
    }

    /// The index that stands for no node.
    @inlinable static var none: Int32 { -1 }

    @usableFromInline var nodes: [Node]
    @usableFromInline var root: Int32

    /// An empty set.
    @inlinable
    public init() {
        nodes = []
        root = Self.none
    }

    /// How many elements it holds.
    @inlinable public var count: Int { nodes.count }

    /// Whether it holds no element.
    @inlinable public var isEmpty: Bool { nodes.isEmpty }

    /// Bytes its storage holds (room reserved included).
    public var storageBytes: Int { nodes.capacity * MemoryLayout<Node>.stride }

    /// Makes room for `count` elements, so a bulk load does not regrow the storage.
    @inlinable
    public mutating func reserveCapacity(_ count: Int) { nodes.reserveCapacity(count) }

    /// Gives back the storage beyond its elements (after a bulk load that grew it by doubling).
    public mutating func shrinkToFit() {
        guard nodes.capacity > nodes.count else { return }
        nodes = Array(unsafeUninitializedCapacity: nodes.count) { buffer, initialized in
            initialized = buffer.initialize(from: nodes).1
        }
    }

    /// Whether `element` is in the set.
    @inlinable
    public func contains(_ element: Element) -> Bool { index(of: element) != nil }

    /// The position of `element` in ascending order, or nil when it is not in the set.
    @inlinable
    public func index(of element: Element) -> Int? {
        var node = root
        var before = 0
        while node != Self.none {
            let current = nodes[Int(node)]
            if element < current.element {
                node = current.left
            } else if current.element < element {
                before += size(current.left) + 1
                node = current.right
            } else {
                return before + size(current.left)
            }
        }
        return nil
    }

    /// How many elements come before the first for which `isBefore` is false. `isBefore` must be
    /// true for a prefix of the set in ascending order and false for the rest (a partition
    /// point, found in O(log n) calls).
    @inlinable
    public func prefixCount(while isBefore: (Element) -> Bool) -> Int {
        var node = root
        var count = 0
        while node != Self.none {
            let current = nodes[Int(node)]
            if isBefore(current.element) {
                count += size(current.left) + 1
                node = current.right
            } else {
                node = current.left
            }
        }
        return count
    }

    /// The element at `index` in ascending order (0 ..< count).
    @inlinable
    public subscript(index: Int) -> Element {
        precondition(index >= 0 && index < count, "index out of range")
        var node = root
        var index = index
        while true {
            let current = nodes[Int(node)]
            let left = size(current.left)
            if index < left {
                node = current.left
            } else if index == left {
                return current.element
            } else {
                index -= left + 1
                node = current.right
            }
        }
    }

    /// Adds `element`; false (and nothing changes) when an equal one is there already.
    @inlinable @discardableResult
    public mutating func insert(_ element: Element) -> Bool {
        precondition(nodes.count < Int(Int32.max), "too many elements")
        var inserted = false
        root = insert(element, into: root, inserted: &inserted)
        return inserted
    }

    /// Removes the element equal to `element`; false when there is none.
    @inlinable @discardableResult
    public mutating func remove(_ element: Element) -> Bool {
        var removed = Self.none
        root = remove(element, from: root, removed: &removed)
        guard removed != Self.none else { return false }
        // Fill the freed slot with the last node, so the array stays dense.
        let last = Int32(nodes.count - 1)
        if removed != last {
            let moved = nodes[Int(last)]
            replaceLink(to: last, of: moved.element, with: removed)
            nodes[Int(removed)] = moved
        }
        nodes.removeLast()
        return true
    }

    /// Removes every element.
    @inlinable
    public mutating func removeAll() {
        nodes.removeAll()
        root = Self.none
    }

    /// The elements from `index` on, in ascending order (none when `index` is outside
    /// 0 ..< count): O(log n) to reach the first, then O(1) amortized per element.
    @inlinable
    public func elements(from index: Int) -> Elements {
        Elements(tree: self, from: index)
    }

    /// The elements from an index on, in ascending order (a copy of the set is kept, so changing
    /// the set meanwhile changes nothing here).
    public struct Elements: Sequence, IteratorProtocol {
        @usableFromInline let tree: CountedTree
        /// The nodes still to visit, each before its right subtree; the next is last.
        @usableFromInline var stack: [Int32]

        @inlinable
        init(tree: CountedTree, from index: Int) {
            self.tree = tree
            stack = []
            guard index >= 0, index < tree.count else { return }
            // Walk down to the index, keeping each node the walk leaves by its left.
            var node = tree.root
            var index = index
            while node != CountedTree.none {
                let current = tree.nodes[Int(node)]
                let left = tree.size(current.left)
                if index < left {
                    stack.append(node)
                    node = current.left
                } else if index == left {
                    stack.append(node)
                    break
                } else {
                    index -= left + 1
                    node = current.right
                }
            }
        }

        /// The next element, or nil after the last.
        @inlinable
        public mutating func next() -> Element? {
            guard let node = stack.popLast() else { return nil }
            let current = tree.nodes[Int(node)]
            var child = current.right
            while child != CountedTree.none {
                stack.append(child)
                child = tree.nodes[Int(child)].left
            }
            return current.element
        }
    }

    // MARK: The tree

    @inlinable
    func size(_ node: Int32) -> Int { node == Self.none ? 0 : Int(nodes[Int(node)].size) }

    @inlinable
    func height(_ node: Int32) -> Int { node == Self.none ? 0 : Int(nodes[Int(node)].height) }

    @inlinable
    mutating func update(_ node: Int32) {
        let left = nodes[Int(node)].left
        let right = nodes[Int(node)].right
        nodes[Int(node)].size = Int32(1 + size(left) + size(right))
        nodes[Int(node)].height = Int8(1 + max(height(left), height(right)))
    }

    @inlinable
    mutating func rotateRight(_ node: Int32) -> Int32 {
        let pivot = nodes[Int(node)].left
        nodes[Int(node)].left = nodes[Int(pivot)].right
        nodes[Int(pivot)].right = node
        update(node)
        update(pivot)
        return pivot
    }

    @inlinable
    mutating func rotateLeft(_ node: Int32) -> Int32 {
        let pivot = nodes[Int(node)].right
        nodes[Int(node)].right = nodes[Int(pivot)].left
        nodes[Int(pivot)].left = node
        update(node)
        update(pivot)
        return pivot
    }

    /// Updates `node`'s counts and restores the AVL balance at it (its subtrees are balanced and
    /// their heights differ by at most 2); returns the subtree's new root.
    @inlinable
    mutating func rebalance(_ node: Int32) -> Int32 {
        update(node)
        let left = nodes[Int(node)].left
        let right = nodes[Int(node)].right
        let balance = height(left) - height(right)
        if balance > 1 {
            if height(nodes[Int(left)].left) < height(nodes[Int(left)].right) {
                nodes[Int(node)].left = rotateLeft(left)
            }
            return rotateRight(node)
        }
        if balance < -1 {
            if height(nodes[Int(right)].right) < height(nodes[Int(right)].left) {
                nodes[Int(node)].right = rotateRight(right)
            }
            return rotateLeft(node)
        }
        return node
    }

    @inlinable
    mutating func insert(_ element: Element, into node: Int32, inserted: inout Bool) -> Int32 {
        guard node != Self.none else {
            nodes.append(Node(element: element, left: Self.none, right: Self.none, size: 1, height: 1))
            inserted = true
            return Int32(nodes.count - 1)
        }
        let current = nodes[Int(node)].element
        if element < current {
            let left = insert(element, into: nodes[Int(node)].left, inserted: &inserted)
            nodes[Int(node)].left = left
        } else if current < element {
            let right = insert(element, into: nodes[Int(node)].right, inserted: &inserted)
            nodes[Int(node)].right = right
        } else {
            return node
        }
        return inserted ? rebalance(node) : node
    }

    /// Unlinks the node equal to `element` from the subtree at `node` (its slot is left for
    /// ``remove(_:)`` to fill) and returns the subtree's new root.
    @inlinable
    mutating func remove(_ element: Element, from node: Int32, removed: inout Int32) -> Int32 {
        guard node != Self.none else { return Self.none }
        let current = nodes[Int(node)]
        if element < current.element {
            let left = remove(element, from: current.left, removed: &removed)
            nodes[Int(node)].left = left
        } else if current.element < element {
            let right = remove(element, from: current.right, removed: &removed)
            nodes[Int(node)].right = right
        } else {
            removed = node
            guard current.left != Self.none else { return current.right }
            guard current.right != Self.none else { return current.left }
            // The successor takes this node's place in the tree (its slot stays its own).
            var successor = Self.none
            let right = removeFirst(from: current.right, removed: &successor)
            nodes[Int(successor)].left = current.left
            nodes[Int(successor)].right = right
            return rebalance(successor)
        }
        return removed == Self.none ? node : rebalance(node)
    }

    /// Unlinks the first node of the subtree at `node` and returns the subtree's new root.
    @inlinable
    mutating func removeFirst(from node: Int32, removed: inout Int32) -> Int32 {
        let left = nodes[Int(node)].left
        guard left != Self.none else {
            removed = node
            return nodes[Int(node)].right
        }
        nodes[Int(node)].left = removeFirst(from: left, removed: &removed)
        return rebalance(node)
    }

    /// Makes the link that points to slot `old` (the root, or a child link on the search path
    /// of `element`, which that slot holds) point to slot `new`.
    @inlinable
    mutating func replaceLink(to old: Int32, of element: Element, with new: Int32) {
        if root == old {
            root = new
            return
        }
        var node = root
        while true {
            let current = nodes[Int(node)]
            if element < current.element {
                if current.left == old {
                    nodes[Int(node)].left = new
                    return
                }
                node = current.left
            } else {
                if current.right == old {
                    nodes[Int(node)].right = new
                    return
                }
                node = current.right
            }
        }
    }

    // MARK: Checks for tests

    /// Whether every invariant holds: ascending order, counts, heights, AVL balance, every slot
    /// in the tree once. O(n), for tests.
    public func invariantsHold() -> Bool {
        var seen = 0
        func check(_ node: Int32, above: Element?, below: Element?) -> (size: Int, height: Int)? {
            guard node != Self.none else { return (0, 0) }
            seen += 1
            let current = nodes[Int(node)]
            if let above, !(above < current.element) { return nil }
            if let below, !(current.element < below) { return nil }
            guard let left = check(current.left, above: above, below: current.element),
                  let right = check(current.right, above: current.element, below: below),
                  abs(left.height - right.height) <= 1,
                  Int(current.size) == left.size + right.size + 1,
                  Int(current.height) == max(left.height, right.height) + 1
            else { return nil }
            return (Int(current.size), Int(current.height))
        }
        guard let top = check(root, above: nil, below: nil) else { return false }
        return top.size == nodes.count && seen == nodes.count
    }

    /// The tree's height (0 when empty), for tests of its balance.
    public var height: Int { height(root) }
}

extension CountedTree: Sendable where Element: Sendable {}

extension CountedTree.Node: Sendable where Element: Sendable {}

extension CountedTree.Elements: Sendable where Element: Sendable {}
