extension CountedBTree {
    /// A set of `elements`, which must be ascending and distinct (checked), built bottom up in
    /// O(n) with its nodes packed full (the last two of a level share what is left), so its
    /// storage is about its elements' own bytes: the way to load a large set at once. The first
    /// insertion into a full leaf splits it in two halves.
    @inlinable
    public init(sorted elements: some Sequence<Element>) {
        self.init()
        build(from: elements, expectedCount: elements.underestimatedCount)
    }

    /// Makes room for `count` elements inserted in a random order (which leaves nodes about 70%
    /// full), so a bulk load does not regrow the storage. A best effort: other orders may need
    /// more, or less.
    public mutating func reserveCapacity(_ count: Int) {
        let leaves = (count * 3 / 2 + Self.leafCapacity - 1) / Self.leafCapacity
        let branches = leaves * 3 / (2 * Self.branchCapacity) + 8
        leafElements.reserveCapacity(leaves * Self.leafCapacity)
        leafCounts.reserveCapacity(leaves)
        nextLeaf.reserveCapacity(leaves)
        keys.reserveCapacity(branches * Self.branchCapacity)
        sizes.reserveCapacity(branches * Self.branchCapacity)
        children.reserveCapacity(branches * Self.branchCapacity)
        childCounts.reserveCapacity(branches)
    }

    /// Rebuilds the storage as ``init(sorted:)`` does: nodes packed full, no free nodes, no room
    /// beyond them. O(n), after a bulk load or many removals.
    public mutating func shrinkToFit() {
        var packed = CountedBTree()
        packed.build(from: elements(from: 0), expectedCount: count)
        self = packed
    }

    /// Adds `element`; false (and nothing changes) when an equal one is there already.
    @inlinable @discardableResult
    public mutating func insert(_ element: Element) -> Bool {
        guard levels > 0 else {
            root = Int32(newLeaf(filledWith: element))
            leafCounts[Int(root)] = 1
            levels = 1
            elementCount = 1
            return true
        }
        precondition(elementCount < Int(Int32.max), "too many elements")
        switch insert(element, into: Int(root), levels: levels) {
        case .alreadyThere:
            return false
        case .added:
            elementCount += 1
            return true
        case .split(let right, let rightSize):
            // A new root above the two halves.
            elementCount += 1
            let left = Int(root)
            let branch = newBranch(filledWith: element)
            let base = branch * Self.branchCapacity
            keys[base] = firstElement(of: left, levels: levels)
            sizes[base] = Int32(elementCount - rightSize)
            children[base] = Int32(left)
            keys[base + 1] = firstElement(of: right, levels: levels)
            sizes[base + 1] = Int32(rightSize)
            children[base + 1] = Int32(right)
            childCounts[branch] = 2
            root = Int32(branch)
            levels += 1
            return true
        }
    }

    /// Removes the element equal to `element`; false when there is none.
    @inlinable @discardableResult
    public mutating func remove(_ element: Element) -> Bool {
        guard levels > 0, remove(element, from: Int(root), levels: levels) else { return false }
        elementCount -= 1
        if elementCount == 0 {
            clear(keepingCapacity: true)
        } else if levels > 1, childCounts[Int(root)] == 1 {
            // A root with one child gives way to it.
            let old = Int(root)
            root = children[old * Self.branchCapacity]
            releaseBranch(old)
            levels -= 1
        }
        return true
    }

    /// Removes every element (and gives back the storage).
    @inlinable
    public mutating func removeAll() { clear(keepingCapacity: false) }

    // MARK: Inserting

    /// What inserting into a subtree did.
    @usableFromInline
    enum Insertion {
        case alreadyThere
        case added
        /// Added, and the subtree's root split: `node` is its new right half (a node of the same
        /// level), holding `size` elements.
        case split(node: Int, size: Int)
    }

    @inlinable
    mutating func insert(_ element: Element, into node: Int, levels: Int) -> Insertion {
        guard levels > 1 else { return insert(element, intoLeaf: node) }
        let child = childIndex(in: node, where: { !(element < $0) })
        let slot = node * Self.branchCapacity + child
        switch insert(element, into: Int(children[slot]), levels: levels - 1) {
        case .alreadyThere:
            return .alreadyThere
        case .added:
            sizes[slot] += 1
            // Only the first child can get a new first element.
            if child == 0, element < keys[slot] { keys[slot] = element }
            return .added
        case .split(let right, let rightSize):
            sizes[slot] += 1 - Int32(rightSize)
            if child == 0, element < keys[slot] { keys[slot] = element }
            let first = firstElement(of: right, levels: levels - 1)
            return insertChild(right, size: rightSize, first: first, at: child + 1, into: node)
        }
    }

    @inlinable
    mutating func insert(_ element: Element, intoLeaf leaf: Int) -> Insertion {
        let base = leaf * Self.leafCapacity
        let count = Int(leafCounts[leaf])
        let position = leafPrefixCount(leaf, while: { $0 < element })
        if position < count, !(element < leafElements[base + position]) { return .alreadyThere }
        guard count == Self.leafCapacity else {
            place(element, at: position, in: leaf)
            return .added
        }
        // Split: the upper half moves to a new leaf, then the element goes into its half.
        let right = newLeaf(filledWith: element)
        let half = (Self.leafCapacity + 1) / 2
        let kept = position < half ? half - 1 : half
        Self.move(&leafElements, from: base + kept, to: right * Self.leafCapacity, count: count - kept)
        leafCounts[leaf] = Int32(kept)
        leafCounts[right] = Int32(count - kept)
        nextLeaf[right] = nextLeaf[leaf]
        nextLeaf[leaf] = Int32(right)
        if position < half {
            place(element, at: position, in: leaf)
        } else {
            place(element, at: position - kept, in: right)
        }
        return .split(node: right, size: Int(leafCounts[right]))
    }

    /// Puts `element` at `position` of `leaf`, which has room, moving the ones after it up.
    @inlinable
    mutating func place(_ element: Element, at position: Int, in leaf: Int) {
        let slot = leaf * Self.leafCapacity + position
        let count = Int(leafCounts[leaf])
        Self.move(&leafElements, from: slot, to: slot + 1, count: count - position)
        leafElements[slot] = element
        leafCounts[leaf] = Int32(count + 1)
    }

    /// Adds `child` (holding `size` elements, `first` the first) to `branch` as its child
    /// `position`, splitting `branch` when it is full.
    @inlinable
    mutating func insertChild(_ child: Int, size: Int, first: Element, at position: Int, into branch: Int) -> Insertion {
        let count = Int(childCounts[branch])
        guard count == Self.branchCapacity else {
            placeChild(child, size: size, first: first, at: position, in: branch)
            return .added
        }
        let right = newBranch(filledWith: first)
        let half = (Self.branchCapacity + 1) / 2
        let kept = position < half ? half - 1 : half
        moveChildren(from: branch * Self.branchCapacity + kept, to: right * Self.branchCapacity, count: count - kept)
        childCounts[branch] = Int32(kept)
        childCounts[right] = Int32(count - kept)
        if position < half {
            placeChild(child, size: size, first: first, at: position, in: branch)
        } else {
            placeChild(child, size: size, first: first, at: position - kept, in: right)
        }
        return .split(node: right, size: elementsBefore(Int(childCounts[right]), in: right))
    }

    @inlinable
    mutating func placeChild(_ child: Int, size: Int, first: Element, at position: Int, in branch: Int) {
        let slot = branch * Self.branchCapacity + position
        let count = Int(childCounts[branch])
        moveChildren(from: slot, to: slot + 1, count: count - position)
        keys[slot] = first
        sizes[slot] = Int32(size)
        children[slot] = Int32(child)
        childCounts[branch] = Int32(count + 1)
    }

    // MARK: Removing

    @inlinable
    mutating func remove(_ element: Element, from node: Int, levels: Int) -> Bool {
        guard levels > 1 else { return remove(element, fromLeaf: node) }
        let child = childIndex(in: node, where: { !(element < $0) })
        let slot = node * Self.branchCapacity + child
        let childNode = Int(children[slot])
        guard remove(element, from: childNode, levels: levels - 1) else { return false }
        sizes[slot] -= 1
        keys[slot] = firstElement(of: childNode, levels: levels - 1)
        let underfull = levels == 2
            ? Int(leafCounts[childNode]) < Self.leafCapacity / 2
            : Int(childCounts[childNode]) < Self.branchCapacity / 2
        if underfull {
            // Share with or merge into a neighbour: the one on the left when there is one.
            let left = max(child - 1, 0)
            if levels == 2 { balanceLeaves(at: left, in: node) } else { balanceBranches(at: left, in: node) }
        }
        return true
    }

    @inlinable
    mutating func remove(_ element: Element, fromLeaf leaf: Int) -> Bool {
        let base = leaf * Self.leafCapacity
        let count = Int(leafCounts[leaf])
        let position = leafPrefixCount(leaf, while: { $0 < element })
        guard position < count, !(element < leafElements[base + position]) else { return false }
        Self.move(&leafElements, from: base + position + 1, to: base + position, count: count - position - 1)
        leafCounts[leaf] = Int32(count - 1)
        // The removed element's own copy gives way to one still in the set.
        if position == count - 1, position > 0 { leafElements[base + position] = leafElements[base] }
        return true
    }

    /// Merges the leaves that are children `left` and `left + 1` of `branch` when they fit in
    /// one, else shares their elements evenly.
    @inlinable
    mutating func balanceLeaves(at left: Int, in branch: Int) {
        let slot = branch * Self.branchCapacity + left
        let leftLeaf = Int(children[slot])
        let rightLeaf = Int(children[slot + 1])
        let leftBase = leftLeaf * Self.leafCapacity
        let rightBase = rightLeaf * Self.leafCapacity
        let leftCount = Int(leafCounts[leftLeaf])
        let rightCount = Int(leafCounts[rightLeaf])
        let total = leftCount + rightCount
        if total <= Self.leafCapacity {
            Self.move(&leafElements, from: rightBase, to: leftBase + leftCount, count: rightCount)
            leafCounts[leftLeaf] = Int32(total)
            nextLeaf[leftLeaf] = nextLeaf[rightLeaf]
            releaseLeaf(rightLeaf)
            sizes[slot] = Int32(total)
            removeChild(at: left + 1, from: branch)
            return
        }
        let newLeftCount = total / 2
        if leftCount < newLeftCount {
            let moved = newLeftCount - leftCount
            Self.move(&leafElements, from: rightBase, to: leftBase + leftCount, count: moved)
            Self.move(&leafElements, from: rightBase + moved, to: rightBase, count: rightCount - moved)
        } else {
            let moved = leftCount - newLeftCount
            Self.move(&leafElements, from: rightBase, to: rightBase + moved, count: rightCount)
            Self.move(&leafElements, from: leftBase + newLeftCount, to: rightBase, count: moved)
        }
        leafCounts[leftLeaf] = Int32(newLeftCount)
        leafCounts[rightLeaf] = Int32(total - newLeftCount)
        sizes[slot] = Int32(newLeftCount)
        sizes[slot + 1] = Int32(total - newLeftCount)
        keys[slot + 1] = leafElements[rightBase]
    }

    /// Merges the branches that are children `left` and `left + 1` of `branch` when they fit in
    /// one, else shares their children evenly.
    @inlinable
    mutating func balanceBranches(at left: Int, in branch: Int) {
        let slot = branch * Self.branchCapacity + left
        let leftBranch = Int(children[slot])
        let rightBranch = Int(children[slot + 1])
        let leftBase = leftBranch * Self.branchCapacity
        let rightBase = rightBranch * Self.branchCapacity
        let leftCount = Int(childCounts[leftBranch])
        let rightCount = Int(childCounts[rightBranch])
        let total = leftCount + rightCount
        if total <= Self.branchCapacity {
            moveChildren(from: rightBase, to: leftBase + leftCount, count: rightCount)
            childCounts[leftBranch] = Int32(total)
            sizes[slot] += sizes[slot + 1]
            releaseBranch(rightBranch)
            removeChild(at: left + 1, from: branch)
            return
        }
        let newLeftCount = total / 2
        var movedElements: Int32 = 0
        if leftCount < newLeftCount {
            let moved = newLeftCount - leftCount
            for from in rightBase ..< rightBase + moved { movedElements += sizes[from] }
            moveChildren(from: rightBase, to: leftBase + leftCount, count: moved)
            moveChildren(from: rightBase + moved, to: rightBase, count: rightCount - moved)
        } else {
            let moved = leftCount - newLeftCount
            for from in leftBase + newLeftCount ..< leftBase + leftCount { movedElements -= sizes[from] }
            moveChildren(from: rightBase, to: rightBase + moved, count: rightCount)
            moveChildren(from: leftBase + newLeftCount, to: rightBase, count: moved)
        }
        childCounts[leftBranch] = Int32(newLeftCount)
        childCounts[rightBranch] = Int32(total - newLeftCount)
        sizes[slot] += movedElements
        sizes[slot + 1] -= movedElements
        keys[slot + 1] = keys[rightBase]
    }

    /// Removes child `position` of `branch`, moving the ones after it down.
    @inlinable
    mutating func removeChild(at position: Int, from branch: Int) {
        let base = branch * Self.branchCapacity
        let count = Int(childCounts[branch])
        moveChildren(from: base + position + 1, to: base + position, count: count - position - 1)
        childCounts[branch] = Int32(count - 1)
        if position == count - 1 { keys[base + position] = keys[base] }
    }

    // MARK: Storage

    /// Copies `count` values of `array` from `source` on to `destination` on (the ranges may overlap).
    @inlinable
    static func move<Value>(_ array: inout [Value], from source: Int, to destination: Int, count: Int) {
        guard count > 0, source != destination else { return }
        precondition(source >= 0 && destination >= 0 && max(source, destination) + count <= array.count)
        array.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            (base + destination).update(from: base + source, count: count)
        }
    }

    /// Copies `count` children (first elements, sizes, indices) from slot `source` on to slot
    /// `destination` on (the ranges may overlap).
    @inlinable
    mutating func moveChildren(from source: Int, to destination: Int, count: Int) {
        Self.move(&keys, from: source, to: destination, count: count)
        Self.move(&sizes, from: source, to: destination, count: count)
        Self.move(&children, from: source, to: destination, count: count)
    }

    /// An empty leaf: a free one, or new slots filled with copies of `filler`.
    @inlinable
    mutating func newLeaf(filledWith filler: Element) -> Int {
        if freeLeaf != Self.none {
            let leaf = Int(freeLeaf)
            freeLeaf = nextLeaf[leaf]
            nextLeaf[leaf] = Self.none
            return leaf
        }
        leafElements.append(contentsOf: repeatElement(filler, count: Self.leafCapacity))
        leafCounts.append(0)
        nextLeaf.append(Self.none)
        return leafCounts.count - 1
    }

    /// An empty branch: a free one, or new slots filled with copies of `filler`.
    @inlinable
    mutating func newBranch(filledWith filler: Element) -> Int {
        if freeBranch != Self.none {
            let branch = Int(freeBranch)
            freeBranch = children[branch * Self.branchCapacity]
            return branch
        }
        keys.append(contentsOf: repeatElement(filler, count: Self.branchCapacity))
        sizes.append(contentsOf: repeatElement(0, count: Self.branchCapacity))
        children.append(contentsOf: repeatElement(Self.none, count: Self.branchCapacity))
        childCounts.append(0)
        return childCounts.count - 1
    }

    @inlinable
    mutating func releaseLeaf(_ leaf: Int) {
        leafCounts[leaf] = 0
        nextLeaf[leaf] = freeLeaf
        freeLeaf = Int32(leaf)
    }

    @inlinable
    mutating func releaseBranch(_ branch: Int) {
        childCounts[branch] = 0
        children[branch * Self.branchCapacity] = freeBranch
        freeBranch = Int32(branch)
    }

    @inlinable
    mutating func clear(keepingCapacity: Bool) {
        leafElements.removeAll(keepingCapacity: keepingCapacity)
        leafCounts.removeAll(keepingCapacity: keepingCapacity)
        nextLeaf.removeAll(keepingCapacity: keepingCapacity)
        keys.removeAll(keepingCapacity: keepingCapacity)
        sizes.removeAll(keepingCapacity: keepingCapacity)
        children.removeAll(keepingCapacity: keepingCapacity)
        childCounts.removeAll(keepingCapacity: keepingCapacity)
        root = Self.none
        levels = 0
        elementCount = 0
        freeLeaf = Self.none
        freeBranch = Self.none
    }

    // MARK: Building

    /// Fills this empty set with `elements` (ascending, distinct), packed full, room reserved
    /// for `expectedCount` of them.
    @inlinable
    mutating func build(from elements: some Sequence<Element>, expectedCount: Int) {
        let leafCapacity = Self.leafCapacity
        let branchCapacity = Self.branchCapacity
        let expectedLeaves = (expectedCount + leafCapacity - 1) / leafCapacity
        leafElements.reserveCapacity(expectedLeaves * leafCapacity)
        leafCounts.reserveCapacity(expectedLeaves)
        nextLeaf.reserveCapacity(expectedLeaves)
        var expectedBranches = 0
        var nodes = expectedLeaves
        while nodes > 1 {
            nodes = (nodes + branchCapacity - 1) / branchCapacity
            expectedBranches += nodes
        }
        keys.reserveCapacity(expectedBranches * branchCapacity)
        sizes.reserveCapacity(expectedBranches * branchCapacity)
        children.reserveCapacity(expectedBranches * branchCapacity)
        childCounts.reserveCapacity(expectedBranches)

        var previous: Element?
        var leaf = -1
        var filled = leafCapacity
        for element in elements {
            if let previous { precondition(previous < element, "elements not ascending and distinct") }
            previous = element
            if filled == leafCapacity {
                let next = newLeaf(filledWith: element)
                if leaf >= 0 {
                    leafCounts[leaf] = Int32(leafCapacity)
                    nextLeaf[leaf] = Int32(next)
                }
                leaf = next
                filled = 0
            }
            leafElements[leaf * leafCapacity + filled] = element
            filled += 1
        }
        guard leaf >= 0 else { return }
        leafCounts[leaf] = Int32(filled)
        elementCount = leaf * leafCapacity + filled
        precondition(elementCount <= Int(Int32.max), "too many elements")
        if leaf > 0, filled < leafCapacity / 2 {
            // The last two leaves share their elements.
            let lastCount = (leafCapacity + filled) / 2
            let moved = lastCount - filled
            Self.move(&leafElements, from: leaf * leafCapacity, to: leaf * leafCapacity + moved, count: filled)
            Self.move(&leafElements, from: leaf * leafCapacity - moved, to: leaf * leafCapacity, count: moved)
            leafCounts[leaf - 1] = Int32(leafCapacity - moved)
            leafCounts[leaf] = Int32(lastCount)
        }

        // One level of branches above another, until one node is left.
        var level = (0 ... leaf).map { Int32($0) }
        levels = 1
        while level.count > 1 {
            var above: [Int32] = []
            above.reserveCapacity(level.count / branchCapacity + 1)
            var start = 0
            while start < level.count {
                let remaining = level.count - start
                var count = min(remaining, branchCapacity)
                // The last two branches share what is left when the last would be underfull.
                if remaining > branchCapacity, remaining - branchCapacity < branchCapacity / 2 {
                    count = remaining - remaining / 2
                }
                let branch = newBranch(filledWith: firstElement(of: Int(level[start]), levels: levels))
                for position in 0 ..< count {
                    let child = Int(level[start + position])
                    let slot = branch * branchCapacity + position
                    keys[slot] = firstElement(of: child, levels: levels)
                    sizes[slot] = levels == 1 ? leafCounts[child] : Int32(elementsBefore(Int(childCounts[child]), in: child))
                    children[slot] = Int32(child)
                }
                childCounts[branch] = Int32(count)
                above.append(Int32(branch))
                start += count
            }
            level = above
            levels += 1
        }
        root = level[0]
    }
}
