import Foundation
import OrderStatistics
import Testing

/// A tree holding `values`, inserted in that order.
private func makeTree(_ values: some Sequence<Int>) -> CountedTree<Int> {
    var tree = CountedTree<Int>()
    for value in values { tree.insert(value) }
    return tree
}

/// Checks everything `tree` answers against `sorted`, its elements in ascending order.
private func expectMatches(_ tree: CountedTree<Int>, _ sorted: [Int], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(tree.invariantsHold(), sourceLocation: sourceLocation)
    #expect(tree.count == sorted.count, sourceLocation: sourceLocation)
    #expect(tree.isEmpty == sorted.isEmpty, sourceLocation: sourceLocation)
    #expect(Array(tree.elements(from: 0)) == sorted, sourceLocation: sourceLocation)
    for (index, element) in sorted.enumerated() {
        #expect(tree[index] == element, sourceLocation: sourceLocation)
        #expect(tree.index(of: element) == index, sourceLocation: sourceLocation)
        #expect(tree.contains(element), sourceLocation: sourceLocation)
    }
}

@Suite("CountedTree: an order-statistic set")
struct CountedTreeTests {
    @Test("thousands of seeded random inserts and removals agree with a sorted array")
    func randomOperations() {
        var random = SplitMix64(seed: 0xC0FFEE)
        var tree = CountedTree<Int>()
        var model: [Int] = []  // ascending, no duplicates: the brute force
        for step in 0 ..< 20_000 {
            // Phases of mostly inserts and mostly removals, so the set grows and shrinks.
            let insertChance = step / 2500 % 2 == 0 ? 75 : 25
            let value = Int.random(in: 0 ... 3000, using: &random)
            let position = model.firstIndex(where: { $0 >= value }) ?? model.count
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

    @Test("an element equal to one in the set is not inserted, and the first stays")
    func duplicatesRejected() {
        var numbers = makeTree(0 ..< 100)
        for value in 0 ..< 100 {
            let wasInserted = numbers.insert(value)
            #expect(!wasInserted)
        }
        expectMatches(numbers, Array(0 ..< 100))

        var keyed = CountedTree<Keyed>()
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

    @Test("prefixCount finds the partition point of a predicate, in at most height calls")
    func prefixCountPartition() {
        #expect(CountedTree<Int>().prefixCount(while: { _ in true }) == 0)
        var random = SplitMix64(seed: 28)
        let sorted = Array(stride(from: 0, to: 2000, by: 2))
        let tree = makeTree(sorted.shuffled(using: &random))
        #expect(tree.prefixCount(while: { _ in true }) == sorted.count)
        #expect(tree.prefixCount(while: { _ in false }) == 0)
        for threshold in -1 ... 2000 {
            var calls = 0
            let count = tree.prefixCount(while: { calls += 1; return $0 < threshold })
            #expect(count == sorted.filter { $0 < threshold }.count, "below \(threshold)")
            #expect(calls <= tree.height)
            // The same point reached through `<=`: up to and including the threshold.
            #expect(tree.prefixCount(while: { $0 <= threshold }) == sorted.filter { $0 <= threshold }.count)
        }
    }

    @Test("elements(from:) lists the elements from an index on, from a copy of the set")
    func elementsFrom() {
        var random = SplitMix64(seed: 7)
        let sorted = (0 ..< 300).map { $0 * 3 }
        var tree = makeTree(sorted.shuffled(using: &random))
        for index in 0 ... sorted.count {
            #expect(Array(tree.elements(from: index)) == Array(sorted[index...]), "from \(index)")
        }
        #expect(Array(tree.elements(from: sorted.count + 5)).isEmpty)
        #expect(Array(tree.elements(from: -1)).isEmpty)
        #expect(Array(CountedTree<Int>().elements(from: 0)).isEmpty)
        // Taken lazily: the first few, and then the set changing does not change them.
        var elements = tree.elements(from: 10)
        #expect(elements.next() == sorted[10])
        tree.removeAll()
        tree.insert(31)
        #expect(Array(elements.prefix(3)) == Array(sorted[11 ..< 14]))
    }

    @Test("removeAll empties the set, which then works as a new one")
    func removeAll() {
        var random = SplitMix64(seed: 1)
        var tree = makeTree((0 ..< 1000).shuffled(using: &random))
        tree.removeAll()
        expectMatches(tree, [])
        #expect(tree.height == 0)
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

    @Test("a copy is a value: changing one leaves the other as it was")
    func valueSemantics() {
        var tree = makeTree(0 ..< 100)
        var copy = tree
        copy.remove(50)
        copy.insert(500)
        tree.insert(-1)
        expectMatches(tree, [-1] + Array(0 ..< 100))
        expectMatches(copy, Array(0 ..< 50) + Array(51 ..< 100) + [500])
    }

    /// Slots are taken in the order of insertion and a removal moves the last slot's node into
    /// the freed one, so every insertion order of a few elements, with every removal, covers
    /// each case: the removed node in the last slot (nothing moves), the moved node the root,
    /// a leaf or an inner node, the removed node with none, one or two children (its successor
    /// taking its place).
    @Test("removals keep the array dense, whichever slots the removed and the last node hold")
    func denseRemovals() {
        // Named cases first: 2 (slot 2) is the root of 1, 3, 2 and moves into 1's slot; the root
        // 2 of 2, 1, 3 leaves its place to its successor 3, which then moves into slot 0; 3 of
        // 1, 2, 3 is in the last slot, so nothing moves.
        var moveRoot = makeTree([1, 3, 2])
        var successor = makeTree([2, 1, 3])
        var last = makeTree([1, 2, 3])
        let removals = [moveRoot.remove(1), successor.remove(2), last.remove(3)]
        #expect(removals == [true, true, true])
        expectMatches(moveRoot, [2, 3])
        expectMatches(successor, [1, 3])
        expectMatches(last, [1, 2])

        for order in permutations(of: Array(1 ... 6)) {
            for removed in 1 ... 6 {
                var tree = makeTree(order)
                let wasRemoved = tree.remove(removed)
                #expect(wasRemoved)
                expectMatches(tree, (1 ... 6).filter { $0 != removed })
            }
        }
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

    @Test("ascending and descending inserts stay within the AVL height bound")
    func heightBound() {
        for values in [Array(0 ..< 100_000), Array((0 ..< 100_000).reversed())] {
            var tree = makeTree(values)
            #expect(tree.invariantsHold())
            // An AVL tree of n nodes is less than 1.4405 log2(n + 2) high.
            #expect(Double(tree.height) < 1.4405 * log2(Double(tree.count + 2)))
            for value in values where value % 2 == 0 { tree.remove(value) }
            #expect(tree.invariantsHold())
            #expect(tree.count == 50_000)
            #expect(tree[0] == 1 && tree[49_999] == 99_999)
        }
    }

    @Test("an index outside 0 ..< count stops the process")
    func indexOutOfRange() async {
        await #expect(processExitsWith: .failure) {
            var tree = CountedTree<Int>()
            tree.insert(1)
            _ = tree[1]
        }
        await #expect(processExitsWith: .failure) {
            var tree = CountedTree<Int>()
            tree.insert(1)
            _ = tree[-1]
        }
    }
}
