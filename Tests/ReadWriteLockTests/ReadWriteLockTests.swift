import ReadWriteLock
import Testing

@Suite("ReadWriteLock")
struct ReadWriteLockTests {
    final class Counter {
        var value = 0
    }

    @Test("writes from many tasks are not lost, and readers see whole values")
    func concurrentWrites() async {
        let lock = ReadWriteLock(Counter())
        await withTaskGroup(of: Void.self) { group in
            for _ in 0 ..< 8 {
                group.addTask {
                    for _ in 0 ..< 10_000 { lock.write { $0.value += 1 } }
                }
                group.addTask {
                    for _ in 0 ..< 10_000 {
                        let seen = lock.read { $0.value }
                        #expect(seen >= 0 && seen <= 80_000)
                    }
                }
            }
        }
        #expect(lock.read { $0.value } == 80_000)
    }

    @Test("errors thrown inside release the lock")
    func throwingReleases() {
        struct Failure: Error {}
        let lock = ReadWriteLock(1)
        #expect(throws: Failure.self) { try lock.read { _ throws(Failure) in throw Failure() } }
        #expect(throws: Failure.self) { try lock.write { _ throws(Failure) in throw Failure() } }
        lock.write { $0 = 2 }
        #expect(lock.read { $0 } == 2)
    }
}
