import ScavengerBoard
import ScavengerTestSupport
import Sodium
import Synchronization
import Testing

@Suite("The password queue")
struct PasswordQueueTests {
    @Test func firstLaneGoesFirstAndPushesOutTheNewestOfTheSecond() async throws {
        let hasher = PasswordHasher(parameters: .minimum, threads: 1)
        let queue = PasswordQueue(hasher: hasher, maximumWaiting: 2)
        let gate = Gate()
        let order = Names()
        @Sendable func check(_ name: String, first: Bool) async -> (String, Bool) {
            do {
                try await queue.run(first: first, isWanted: { true }) { _ in
                    if name == "busy" { await gate.wait() }
                    order.names.withLock { $0.append(name) }
                }
                return (name, true)
            } catch {
                #expect((error as? BoardError)?.code == .unavailable)
                return (name, false)
            }
        }
        try await withThrowingTaskGroup(of: (String, Bool).self) { group in
            group.addTask { await check("busy", first: false) }
            // "busy" holds the one thread (it waits at the gate) before anything else is queued.
            try await eventually("busy holds the thread") { queue.running == 1 && queue.waiting == 0 }
            group.addTask { await check("guess-1", first: false) }
            try await eventually("one check is waiting") { queue.waiting == 1 }
            group.addTask { await check("guess-2", first: false) }
            try await eventually("two checks are waiting") { queue.waiting == 2 }
            group.addTask { await check("real-user", first: true) }  // full: pushes out guess-2
            try await eventually("two checks are waiting") { queue.waiting == 2 }
            group.addTask { await check("another-guess", first: false) }  // full and second lane: refused at once
            var outcomes: [String: Bool] = [:]
            for _ in 0 ..< 2 {
                let (name, ran) = try await group.next()!
                outcomes[name] = ran
            }
            #expect(outcomes == ["guess-2": false, "another-guess": false])
            gate.open()
            for try await (name, ran) in group { outcomes[name] = ran }
            #expect(outcomes == ["busy": true, "guess-1": true, "guess-2": false, "real-user": true, "another-guess": false])
        }
        #expect(order.names.withLock { $0 } == ["busy", "real-user", "guess-1"])
        await hasher.shutdown()
    }

    @Test func workForAClientThatLeftIsDropped() async throws {
        let hasher = PasswordHasher(parameters: .minimum, threads: 1)
        let queue = PasswordQueue(hasher: hasher, maximumWaiting: 4)
        let ran = Atomic<Bool>(false)
        await #expect(throws: BoardError.self) {
            try await queue.run(first: true, isWanted: { false }) { _ in ran.store(true, ordering: .relaxed) }
        }
        let didRun = ran.load(ordering: .relaxed)
        #expect(!didRun)
        // The thread was given back.
        let hash = try await queue.run(first: false, isWanted: { true }) { hasher in try await hasher.hash("password1") }
        #expect(PasswordHasher.verifySync("password1", against: hash))
        await hasher.shutdown()
    }
}

/// Names in the order they were added, shared between tasks.
final class Names: Sendable {
    let names = Mutex<[String]>([])
}
