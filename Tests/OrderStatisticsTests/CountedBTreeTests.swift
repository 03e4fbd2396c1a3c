import Foundation
@testable import OrderStatistics
import Testing

private typealias Tree = CountedBTree<Int>

private let leafCapacity = Tree.leafCapacity
private let branchCapacity = Tree.branchCapacity

/// A tree holding `values`, inserted in that order.
private func makeTree(_ values: some Sequence<Int>) -> Tree {
    var tree = Tree()
    for value in values { tree.insert(value) }
    return tree
}

/// Where `value` is or would go in `sorted` (the count of elements below it).
private func lowerBound(_ value: Int, in sorted: [Int]) -> Int {
    var low = 0
    var high = sorted.count
    while low < high {
        let middle = (low + high) / 2
        if sorted[middle] < value { low = middle + 1 } else { high = middle }
    }
    return low
}

/// Checks everything `tree` answers against `sorted`, its elements in ascending order.
private func expectMatches(_ tree: Tree, _ sorted: [Int], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(tree.invariantsHold(), sourceLocation: sourceLocation)
    #expect(tree.count == sorted.count, sourceLocation: sourceLocation)
    #expect(tree.isEmpty == sorted.isEmpty, sourceLocation: sourceLocation)
    #expect(Array(tree.elements(from: 0)) == sorted, sourceLocation: sourceLocation)
    var all: [Int] = []
    tree.forEach(atAscendingRanks: Array(sorted.indices)) { all.append($0) }
    #expect(all == sorted, sourceLocation: sourceLocation)
    for (index, element) in sorted.enumerated() {
        #expect(tree[index] == element, sourceLocation: sourceLocation)
        #expect(tree.index(of: element) == index, sourceLocation: sourceLocation)
        #expect(tree.contains(element), sourceLocation: sourceLocation)
    }
}

@Suite("CountedBTree: an order-statistic set as a counted B+tree")
struct CountedBTreeTests {
    @Test("thousands of seeded random inserts and removals agree with a sorted array")
    func randomOperations() {
        var random = SplitMix64(seed: 0xC0FFEE)
        var tree = Tree()
        var model: [Int] = []  // ascending, no duplicates: the brute force
        for step in 0 ..< 20_000 {
            // Phases of mostly inserts and mostly removals, so the set grows and shrinks.
            let insertChance = step / 2500 % 2 == 0 ? 75 : 25
            let value = Int.random(in: 0 ... 3000, using: &random)
            let position = lowerBound(value, in: model)
            let present = position < model.count && model[position] == value
            if Int.random(in: 0 ..< 100, using: &random) < insertChance {
                let wasInserted = tree.insert(value)
                #expect(wasInserted == !present, "step \(step)")
                if !present { model.insert(value, at: position) }
                #expect(tree.index(of: value) == position, "step \(step)")
            } else {
                let wasRemoved = tree.remove(value)
                #expect(wasRemoved == present, "step \(step)")
                if present { model.remove(at: position) }
                #expect(tree.index(of: value) == nil, "step \(step)")
            }
            #expect(tree.count == model.count)
            #expect(tree.contains(value) == model.contains(value))
            if !model.isEmpty {
                let index = Int.random(in: 0 ..< model.count, using: &random)
                #expect(tree[index] == model[index], "step \(step)")
                #expect(tree.index(of: model[index]) == index, "step \(step)")
            }
            if step % 500 == 0 || step < 50 {
                expectMatches(tree, model)
                let threshold = Int.random(in: -1 ... 3001, using: &random)
                #expect(tree.prefixCount(while: { $0 < threshold }) == model.filter { $0 < threshold }.count)
                #expect(tree.index(of: -1) == nil && !tree.contains(3001))
            }
        }
        expectMatches(tree, model)
        // Then empty it in a random order.
        for (step, value) in model.shuffled(using: &random).enumerated() {
            let wasRemoved = tree.remove(value)
            #expect(wasRemoved)
            #expect(!tree.contains(value))
            if step % 100 == 0 { #expect(tree.invariantsHold()) }
        }
        expectMatches(tree, [])
    }

    /// A seed and a key range: small ranges hit duplicates and present removals often, large
    /// ones grow the tree and miss on most removals.
    @Test("random operations checked step by step against a sorted array", arguments: [1, 2, 3] as [UInt64], [300, 1_000_000])
    func modelBased(seed: UInt64, keyRange: Int) {
        var random = SplitMix64(seed: seed)
        var tree = Tree()
        var model: [Int] = []
        for step in 0 ..< 6000 {
            let insertChance = step / 1500 % 2 == 0 ? 80 : 35
            let value = Int.random(in: 0 ... keyRange, using: &random)
            let position = lowerBound(value, in: model)
            let present = position < model.count && model[position] == value
            if Int.random(in: 0 ..< 100, using: &random) < insertChance {
                let wasInserted = tree.insert(value)
                #expect(wasInserted == !present, "step \(step)")
                if !present { model.insert(value, at: position) }
                #expect(tree.index(of: value) == position, "step \(step)")
            } else {
                // A removal of a present element half the time, else of a random (often missing) one.
                let removed = !model.isEmpty && random.next() % 2 == 0 ? model[Int.random(in: 0 ..< model.count, using: &random)] : value
                let removedPosition = lowerBound(removed, in: model)
                let removedPresent = removedPosition < model.count && model[removedPosition] == removed
                let wasRemoved = tree.remove(removed)
                #expect(wasRemoved == removedPresent, "step \(step)")
                if removedPresent { model.remove(at: removedPosition) }
                #expect(tree.index(of: removed) == nil, "step \(step)")
            }
            #expect(tree.count == model.count, "step \(step)")
            if step % 250 == 0 { #expect(tree.invariantsHold(), "step \(step)") }
            let threshold = Int.random(in: -1 ... keyRange + 1, using: &random)
            #expect(tree.prefixCount(while: { $0 <= threshold }) == lowerBound(threshold + 1, in: model), "step \(step)")
            guard !model.isEmpty else { continue }
            let rank = Int.random(in: 0 ..< model.count, using: &random)
            #expect(tree[rank] == model[rank], "step \(step)")
            #expect(tree.index(of: model[rank]) == rank, "step \(step)")
            // Ranks close together (repeats included), as a map's sample of a range asks.
            let low = Int.random(in: 0 ..< model.count, using: &random)
            let high = min(model.count - 1, low + Int.random(in: 0 ... 3 * leafCapacity, using: &random))
            let ranks = (0 ..< Int.random(in: 1 ... 16, using: &random)).map { _ in Int.random(in: low ... high, using: &random) }.sorted()
            var seen: [Int] = []
            tree.forEach(atAscendingRanks: ranks) { seen.append($0) }
            #expect(seen == ranks.map { model[$0] }, "step \(step)")
            let start = Int.random(in: 0 ... model.count, using: &random)
            #expect(Array(tree.elements(from: start).prefix(2 * leafCapacity + 3)) == Array(model[start...].prefix(2 * leafCapacity + 3)), "step \(step)")
        }
        #expect(tree.invariantsHold())
        #expect(Array(tree.elements(from: 0)) == model)
    }

    @Test("an element equal to one in the set is not inserted, and the first stays")
    func duplicatesRejected() {
        var numbers = makeTree(0 ..< 1000)
        for value in 0 ..< 1000 {
            let wasInserted = numbers.insert(value)
            #expect(!wasInserted)
        }
        expectMatches(numbers, Array(0 ..< 1000))

        var keyed = CountedBTree<Keyed>()
        let first = keyed.insert(Keyed(key: 1, tag: "first"))
        let second = keyed.insert(Keyed(key: 1, tag: "second"))
        #expect(first && !second)
        #expect(keyed.count == 1)
        #expect(keyed[0].tag == "first")
        #expect(keyed.index(of: Keyed(key: 1, tag: "other")) == 0)
        let removed = keyed.remove(Keyed(key: 1, tag: "other"))
        let removedAgain = keyed.remove(Keyed(key: 1, tag: "first"))
        #expect(removed && !removedAgain)
        #expect(keyed.isEmpty)
    }

    @Test("prefixCount finds the partition point of a predicate, with a binary search per node")
    func prefixCountPartition() {
        #expect(Tree().prefixCount(while: { _ in true }) == 0)
        var random = SplitMix64(seed: 28)
        let sorted = Array(stride(from: 0, to: 20_000, by: 2))
        let tree = makeTree(sorted.shuffled(using: &random))
        #expect(tree.height >= 3)
        #expect(tree.prefixCount(while: { _ in true }) == sorted.count)
        #expect(tree.prefixCount(while: { _ in false }) == 0)
        // ceil(log2(branchCapacity)) calls per branch, ceil(log2(leafCapacity + 1)) in the leaf.
        let callBound = (tree.height - 1) * Int(log2(Double(branchCapacity)).rounded(.up))
            + Int(log2(Double(leafCapacity + 1)).rounded(.up))
        for threshold in stride(from: -1, through: 20_000, by: 3) {
            var calls = 0
            let count = tree.prefixCount(while: { calls += 1; return $0 < threshold })
            #expect(count == (threshold + 1) / 2, "below \(threshold)")
            #expect(calls <= callBound)
            // The same point reached through `<=`: up to and including the threshold.
            #expect(tree.prefixCount(while: { $0 <= threshold }) == min((threshold + 2) / 2, sorted.count))
        }
    }

    @Test("elements(from:) lists the elements from an index on, from a copy of the set")
    func elementsFrom() {
        var random = SplitMix64(seed: 7)
        let sorted = (0 ..< 3000).map { $0 * 3 }
        var tree = makeTree(sorted.shuffled(using: &random))
        for index in 0 ... sorted.count {
            #expect(Array(tree.elements(from: index)) == Array(sorted[index...]), "from \(index)")
        }
        #expect(Array(tree.elements(from: sorted.count + 5)).isEmpty)
        #expect(Array(tree.elements(from: -1)).isEmpty)
        #expect(Array(Tree().elements(from: 0)).isEmpty)
        // Taken lazily: the first few, and then the set changing does not change them.
        var elements = tree.elements(from: 10)
        #expect(elements.next() == sorted[10])
        tree.removeAll()
        tree.insert(31)
        #expect(Array(elements.prefix(3)) == Array(sorted[11 ..< 14]))
    }

    @Test("an iterator keeps its elements through later insertions, removals and splits")
    func iteratorUnaffectedByMutation() {
        var random = SplitMix64(seed: 11)
        let sorted = (0 ..< 5000).map { $0 * 2 }
        var tree = makeTree(sorted.shuffled(using: &random))
        var elements = tree.elements(from: 100)
        let firstHalf = (0 ..< 1000).compactMap { _ in elements.next() }
        for value in sorted.shuffled(using: &random).prefix(4000) { tree.remove(value) }
        for value in 0 ..< 3000 { tree.insert(value * 2 + 1) }
        #expect(tree.invariantsHold())
        #expect(firstHalf + Array(elements) == Array(sorted[100...]))
    }

    @Test("forEach(atAscendingRanks:) gives the elements a subscript per rank gives, in order, repeats included", arguments: 0 ..< 20 as Range<UInt64>)
    func elementsAtRanks(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let count = Int.random(in: 0 ... 5000, using: &random)
        let sorted = (0 ..< count).map { $0 * 2 + 1 }
        let tree = makeTree(sorted.shuffled(using: &random))
        let ranks = count == 0 ? [] : (0 ..< Int.random(in: 0 ... 40, using: &random)).map { _ in Int.random(in: 0 ..< count, using: &random) }.sorted()
        var seen: [Int] = []
        tree.forEach(atAscendingRanks: ranks) { seen.append($0) }
        #expect(seen == ranks.map { sorted[$0] }, "ranks \(ranks)")
    }

    @Test("removeAll empties the set, which then works as a new one")
    func removeAll() {
        var random = SplitMix64(seed: 1)
        var tree = makeTree((0 ..< 10_000).shuffled(using: &random))
        tree.removeAll()
        expectMatches(tree, [])
        #expect(tree.height == 0)
        #expect(tree.storageBytes == 0)
        #expect(!tree.contains(5) && tree.index(of: 5) == nil)
        #expect(tree.prefixCount(while: { _ in true }) == 0)
        let wasRemoved = tree.remove(5)
        #expect(!wasRemoved)
        for value in [3, 1, 2] {
            let wasInserted = tree.insert(value)
            #expect(wasInserted)
        }
        expectMatches(tree, [1, 2, 3])
    }

    @Test("a copy is a value: changing one leaves the other as it was", arguments: [100, 20_000])
    func valueSemantics(count: Int) {
        var tree = makeTree(0 ..< count)
        var copy = tree
        copy.remove(count / 2)
        copy.insert(count * 5)
        tree.insert(-1)
        expectMatches(tree, [-1] + Array(0 ..< count))
        expectMatches(copy, Array(0 ..< count / 2) + Array(count / 2 + 1 ..< count) + [count * 5])
        // Emptying a copy (merging all the way up) leaves the original whole.
        var emptied = tree
        for value in -1 ..< count { emptied.remove(value) }
        #expect(emptied.isEmpty && emptied.invariantsHold())
        #expect(tree.count == count + 1 && tree.invariantsHold())
        #expect(Array(tree.elements(from: 0)) == [-1] + Array(0 ..< count))
    }

    @Test("removals in every order from a single leaf")
    func smallRemovals() {
        let orders = permutations(of: Array(1 ... 5))
        for order in orders {
            for removals in orders {
                var tree = makeTree(order)
                var remaining = Array(1 ... 5)
                for removed in removals {
                    let wasRemoved = tree.remove(removed)
                    #expect(wasRemoved)
                    remaining.removeAll { $0 == removed }
                    #expect(tree.invariantsHold(), "inserted \(order), removed \(removed) of \(removals)")
                    #expect(Array(tree.elements(from: 0)) == remaining)
                }
                #expect(tree.isEmpty)
            }
        }
    }

    /// Ascending insertions leave every leaf and branch but the last ones at the minimum fill,
    /// so each removal borrows from a neighbour or merges with it, on every level up.
    @Test("one removal from minimally full trees borrows or merges, at any position", arguments: [
        (leafCapacity + 1, 2), (2 * leafCapacity, 2), (leafCapacity / 2 * (branchCapacity + 2), 3),
        (leafCapacity / 2 * (branchCapacity / 2 * (branchCapacity + 2)), 4),
    ])
    func removalsRebalance(count: Int, height: Int) {
        let values = Array(0 ..< count)
        let ascending = makeTree(values)
        let descending = makeTree(values.reversed())
        #expect(ascending.invariantsHold() && descending.invariantsHold())
        #expect(ascending.height == height)
        let step = max(1, count / 200)
        for tree in [ascending, descending] {
            for removed in stride(from: 0, to: count, by: step) {
                var copy = tree
                let wasRemoved = copy.remove(removed)
                #expect(wasRemoved)
                #expect(copy.invariantsHold(), "count \(count), removed \(removed)")
                #expect(copy.count == count - 1)
                #expect(copy.index(of: removed) == nil)
                if removed + 1 < count { #expect(copy.index(of: removed + 1) == removed) }
                if removed > 0 { #expect(copy[removed - 1] == removed - 1) }
            }
        }
    }

    @Test("the tree grows to several levels and shrinks back to empty, sound at every stage")
    func growthAndShrinking() {
        var random = SplitMix64(seed: 99)
        // More than three levels of full nodes hold.
        let count = branchCapacity * branchCapacity * leafCapacity + 10_000
        let values = (0 ..< count).shuffled(using: &random)
        var tree = Tree()
        var heights: [Int] = [0]
        for (step, value) in values.enumerated() {
            tree.insert(value)
            if tree.height != heights.last {
                heights.append(tree.height)
                #expect(tree.invariantsHold(), "grown to \(tree.height) at \(step)")
            }
        }
        #expect(heights == [0, 1, 2, 3, 4])
        #expect(tree.invariantsHold() && tree.count == count)
        #expect(tree[count / 3] == count / 3)
        for (step, value) in values.shuffled(using: &random).enumerated() {
            tree.remove(value)
            if tree.height != heights.last {
                heights.append(tree.height)
                #expect(tree.invariantsHold(), "shrunk to \(tree.height) at \(step)")
            }
            if step % 20_000 == 0 { #expect(tree.invariantsHold(), "step \(step)") }
        }
        #expect(heights == [0, 1, 2, 3, 4, 3, 2, 1, 0])
        expectMatches(tree, [])
    }

    @Test("ascending and descending inserts stay within the B-tree height bounds")
    func heightBound() {
        for values in [Array(0 ..< 100_000), Array((0 ..< 100_000).reversed())] {
            var tree = makeTree(values)
            #expect(tree.invariantsHold())
            // At most branchCapacity^(h-1) full leaves; at least 2 (branchCapacity/2)^(h-2) half full ones.
            let leaves = Double(tree.count) / Double(leafCapacity)
            #expect(Double(tree.height) >= 1 + log(leaves) / log(Double(branchCapacity)))
            #expect(Double(tree.height) <= 2 + log(leaves) / log(Double(branchCapacity / 2)))
            for value in values where value % 2 == 0 { tree.remove(value) }
            #expect(tree.invariantsHold())
            #expect(tree.count == 50_000)
            #expect(tree[0] == 1 && tree[49_999] == 99_999)
        }
    }

    static let sortedCounts = [
        0, 1, 2, leafCapacity / 2 - 1, leafCapacity - 1, leafCapacity, leafCapacity + 1, leafCapacity * 3 / 2 - 1,
        leafCapacity * 3 / 2, leafCapacity * branchCapacity, leafCapacity * branchCapacity + 1,
        leafCapacity * (branchCapacity + branchCapacity / 2 - 1) + 5, 100_000,
    ]

    @Test("init(sorted:) holds what inserting one by one does, packed, and then changes like it", arguments: CountedBTreeTests.sortedCounts)
    func buildSorted(count: Int) {
        let values = (0 ..< count).map { $0 * 3 }
        let built = Tree(sorted: values)
        let inserted = makeTree(values)
        #expect(built.invariantsHold())
        #expect(built.count == inserted.count)
        #expect(Array(built.elements(from: 0)) == Array(inserted.elements(from: 0)))
        #expect(built.height <= inserted.height)
        // Packed full: about the elements' own bytes.
        if count >= leafCapacity * branchCapacity {
            #expect(Double(built.storageBytes) / Double(count) < 1.15 * Double(MemoryLayout<Int>.stride))
        }
        // A sequence that does not know its count builds the same set.
        let lazy = Tree(sorted: values.lazy.filter { _ in true })
        #expect(lazy.invariantsHold() && Array(lazy.elements(from: 0)) == values)
        var random = SplitMix64(seed: UInt64(count))
        var tree = built
        var model = values
        for _ in 0 ..< 600 {
            let value = Int.random(in: -5 ... 3 * count + 5, using: &random)
            let position = lowerBound(value, in: model)
            let present = position < model.count && model[position] == value
            if random.next() % 2 == 0 {
                let wasInserted = tree.insert(value)
                #expect(wasInserted == !present)
                if !present { model.insert(value, at: position) }
            } else {
                let wasRemoved = tree.remove(value)
                #expect(wasRemoved == present)
                if present { model.remove(at: position) }
            }
        }
        #expect(tree.invariantsHold())
        #expect(Array(tree.elements(from: 0)) == model)
    }

    @Test("shrinkToFit packs the set and keeps its elements")
    func shrinkToFit() {
        var random = SplitMix64(seed: 5)
        var tree = makeTree((0 ..< 50_000).shuffled(using: &random))
        for value in 0 ..< 25_000 { tree.remove(value * 2) }
        let before = tree.storageBytes
        tree.shrinkToFit()
        #expect(tree.storageBytes < before / 2)
        expectMatches(tree, (0 ..< 25_000).map { $0 * 2 + 1 })
        for value in 0 ..< 1000 { tree.insert(value * 2) }
        #expect(tree.invariantsHold() && tree.count == 26_000)
    }

    @Test("reserveCapacity makes room for a random-order load, and freed nodes are reused")
    func storageReuse() {
        var random = SplitMix64(seed: 17)
        var tree = Tree()
        tree.reserveCapacity(100_000)
        let reserved = tree.storageBytes
        for value in (0 ..< 100_000).shuffled(using: &random) { tree.insert(value) }
        #expect(tree.storageBytes == reserved)
        // Churn at a steady size: the nodes merges free are taken by later splits.
        var present = Array(0 ..< 100_000)
        var next = 100_000
        for _ in 0 ..< 10 {
            present.shuffle(using: &random)
            for value in present.suffix(50_000) { tree.remove(value) }
            present.removeLast(50_000)
            for _ in 0 ..< 50_000 {
                tree.insert(next)
                present.append(next)
                next += 1
            }
        }
        #expect(tree.invariantsHold() && tree.count == 100_000)
        #expect(tree.leafCounts.count <= 2 * 100_000 / leafCapacity + 1)
    }

    @Test("an index outside 0 ..< count stops the process")
    func indexOutOfRange() async {
        await #expect(processExitsWith: .failure) {
            var tree = CountedBTree<Int>()
            tree.insert(1)
            _ = tree[1]
        }
        await #expect(processExitsWith: .failure) {
            var tree = CountedBTree<Int>()
            tree.insert(1)
            _ = tree[-1]
        }
    }

    @Test("ranks out of range or out of order, and unsorted input to init(sorted:), stop the process")
    func misuseStops() async {
        await #expect(processExitsWith: .failure) {
            CountedBTree(sorted: 0 ..< 10).forEach(atAscendingRanks: [3, 10]) { _ in }
        }
        await #expect(processExitsWith: .failure) {
            CountedBTree(sorted: 0 ..< 10).forEach(atAscendingRanks: [4, 3]) { _ in }
        }
        await #expect(processExitsWith: .failure) {
            _ = CountedBTree(sorted: [1, 3, 3])
        }
    }
}
