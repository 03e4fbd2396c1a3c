import Foundation
import ScavengerTestSupport
import Testing
@testable import ScavengerCore

@Suite("The counted tree under a leaderboard")
struct CountedTreeTests {
    @Test("random inserts and removals keep every invariant, positions and the AVL height bound")
    func randomOperations() {
        var random = SplitMix64(seed: 0xC0FFEE)
        var tree = CountedTree<Int>()
        var model = Set<Int>()
        for step in 0 ..< 20_000 {
            let value = random.int(in: 0 ... 3000)
            if random.chance(0.55) {
                #expect(tree.insert(value) == model.insert(value).inserted)
            } else {
                #expect(tree.remove(value) == (model.remove(value) != nil))
            }
            if step % 1000 == 0 || step < 50 {
                #expect(tree.invariantsHold(), "step \(step)")
                let sorted = model.sorted()
                #expect(Array(tree.elements(from: 0)) == sorted)
                #expect(tree.count == sorted.count)
                for (index, element) in sorted.enumerated() where index % 7 == 0 {
                    #expect(tree[index] == element)
                    #expect(tree.index(of: element) == index)
                    #expect(Array(tree.elements(from: index).prefix(5)) == Array(sorted[index...].prefix(5)))
                }
                #expect(tree.prefixCount(while: { $0 < 1500 }) == sorted.filter { $0 < 1500 }.count)
                #expect(tree.index(of: -1) == nil)
                #expect(Array(tree.elements(from: sorted.count)).isEmpty)
            }
        }
        #expect(tree.invariantsHold())
    }

    @Test("ascending and descending inserts stay within the AVL height bound")
    func heightBound() {
        for values in [Array(0 ..< 100_000), Array((0 ..< 100_000).reversed())] {
            var tree = CountedTree<Int>()
            for value in values { tree.insert(value) }
            #expect(tree.invariantsHold())
            // An AVL tree of n nodes is less than 1.4405 log2(n + 2) high.
            #expect(Double(tree.height) < 1.4405 * log2(Double(tree.count + 2)))
            for value in values where value % 2 == 0 { tree.remove(value) }
            #expect(tree.invariantsHold())
            #expect(tree.count == 50_000)
            #expect(tree[0] == 1 && tree[49_999] == 99_999)
        }
    }
}
