import Postgres
import ScavengerCore
import ScavengerStore
import ScavengerTestSupport
import Synchronization
import Testing

/// The change logs numbered after their writers commit (`db/0037`), against a small model: any
/// interleaving of writers that log, commit and roll back, and of two daemons that number and
/// read, gives every reader exactly the committed rows, each once, at consecutive positions, in
/// the order the model numbers them (what each numbering saw committed, in log order).
@Suite("Change-log numbering: a model, and a crowd of writers", .serialized, .timeLimit(.minutes(3)))
struct LogNumberingTests {
    /// What one step does.
    enum Step: CustomStringConvertible {
        case begin(writer: Int)
        /// Logs one row: in the writer's transaction when one is open, else committed at once.
        case log(writer: Int)
        case commit(writer: Int)
        case rollback(writer: Int)
        /// A daemon numbers what is committed and reads from its place.
        case read(daemon: Int)

        var description: String {
            switch self {
            case .begin(let writer): ".begin(writer: \(writer))"
            case .log(let writer): ".log(writer: \(writer))"
            case .commit(let writer): ".commit(writer: \(writer))"
            case .rollback(let writer): ".rollback(writer: \(writer))"
            case .read(let daemon): ".read(daemon: \(daemon))"
            }
        }
    }

    /// The reference: which rows are open in which writer's transaction, which are committed and
    /// not yet numbered (in log order), and the numbered ones in position order.
    struct Model {
        var open: [[String]]
        var committed: [String] = []
        var numbered: [String] = []
        var logged = 0

        init(writers: Int) { open = Array(repeating: [], count: writers) }

        /// A step that applies now, drawn from `random`.
        func draw(_ random: inout SplitMix64, inTransaction: [Bool], daemons: Int) -> Step {
            let writer = random.int(in: 0 ... open.count - 1)
            switch random.int(in: 0 ... 9) {
            case 0 ... 3: return .log(writer: writer)
            case 4: return inTransaction[writer] ? .commit(writer: writer) : .begin(writer: writer)
            case 5: return inTransaction[writer] ? .rollback(writer: writer) : .begin(writer: writer)
            case 6: return inTransaction[writer] ? .commit(writer: writer) : .log(writer: writer)
            default: return .read(daemon: random.int(in: 0 ... daemons - 1))
            }
        }

        /// Logs a row (its tag), open in a transaction or committed.
        mutating func log(writer: Int, inTransaction: Bool) -> String {
            logged += 1
            let tag = "r\(logged)"
            if inTransaction { open[writer].append(tag) } else { committed.append(tag) }
            return tag
        }

        mutating func commit(writer: Int, tags: [String: Int]) {
            // Committed rows are numbered in log (id) order, whatever the commit order.
            committed = (committed + open[writer]).sorted { tags[$0]! < tags[$1]! }
            open[writer] = []
        }

        mutating func rollback(writer: Int) { open[writer] = [] }

        /// A numbering: every committed row gets the next position.
        mutating func number() {
            numbered += committed
            committed = []
        }
    }

    @Test("any interleaving of writers and numbering daemons gives each reader the committed rows once, at consecutive positions, as the model numbers them", arguments: 0 ..< 30 as Range<UInt64>)
    func interleavings(seed: UInt64) async throws {
        let configuration = try TestDatabase.isolatedConfiguration()
        try await TestDatabase.migrate(configuration)
        let writers = try (0 ..< 3).map { _ in try PostgresConnection.connect(configuration) }
        let pools = (0 ..< 2).map { _ in PostgresPool(configuration: configuration, maxConnections: 2) }
        let daemons = pools.map { Database(pool: $0) }
        let start = Int(try await daemons[0].lastHuntChange().seq)

        var random = SplitMix64(seed: seed)
        var model = Model(writers: writers.count)
        var inTransaction = Array(repeating: false, count: writers.count)
        var places = Array(repeating: start, count: daemons.count)
        var seen = Array(repeating: [String](), count: daemons.count)
        var tags: [String: Int] = [:]
        var steps: [Step] = []
        for _ in 0 ..< 80 {
            let step = model.draw(&random, inTransaction: inTransaction, daemons: daemons.count)
            steps.append(step)
            switch step {
            case .begin(let writer):
                try writers[writer].query("BEGIN")
                inTransaction[writer] = true
            case .log(let writer):
                let tag = model.log(writer: writer, inTransaction: inTransaction[writer])
                tags[tag] = model.logged
                try writers[writer].query("SELECT log_hunt_changes(\(#"[{"hunt":"\#(tag)","kind":"hunt","payload":{}}]"#)::jsonb)")
            case .commit(let writer):
                try writers[writer].query("COMMIT")
                inTransaction[writer] = false
                model.commit(writer: writer, tags: tags)
            case .rollback(let writer):
                try writers[writer].query("ROLLBACK")
                inTransaction[writer] = false
                model.rollback(writer: writer)
            case .read(let daemon):
                let page = try await daemons[daemon].huntChanges(after: places[daemon], limit: 1000)
                model.number()
                let expected = Array(model.numbered[(places[daemon] - start)...])
                let read = page.changes.map(\.hunt)
                #expect(read == expected, "seed \(seed), after \(steps)")
                #expect(page.changes.map(\.seq) == Array((places[daemon] + 1) ..< (places[daemon] + 1 + read.count)),
                        "positions not consecutive: seed \(seed), after \(steps)")
                guard read == expected else { return }
                places[daemon] += read.count
                seen[daemon] += read
            }
        }
        // The end: everything committed, numbered and read by both, each once.
        for (writer, open) in inTransaction.enumerated() where open {
            try writers[writer].query("COMMIT")
            model.commit(writer: writer, tags: tags)
        }
        model.number()
        for daemon in daemons.indices {
            let page = try await daemons[daemon].huntChanges(after: places[daemon], limit: 1000)
            seen[daemon] += page.changes.map(\.hunt)
            #expect(seen[daemon] == model.numbered, "seed \(seed): daemon \(daemon) after \(steps)")
        }
        for pool in pools { await pool.shutdown() }
    }

    @Test("a crowd of writers released at once while two daemons number and read: every row numbered once, positions consecutive, each writer's rows in its commit order")
    func crowd() async throws {
        let configuration = try TestDatabase.isolatedConfiguration()
        try await TestDatabase.migrate(configuration)
        let writerPool = PostgresPool(configuration: configuration, maxConnections: 16)
        let daemonPools = (0 ..< 2).map { _ in PostgresPool(configuration: configuration, maxConnections: 2) }
        let daemons = daemonPools.map { Database(pool: $0) }
        let start = Int(try await daemons[0].lastHuntChange().seq)
        let writers = 16, rowsEach = 12
        let gate = Gate()
        let done = WritersDone()

        // Each daemon reads in a loop until the writers are done and it has read everything.
        let readers = daemons.map { daemon in
            Task { () throws -> [LoggedHuntChange] in
                var read: [LoggedHuntChange] = []
                var place = start
                await gate.wait()
                while true {
                    let finished = done.count == writers
                    let page = try await daemon.huntChanges(after: place, limit: 1000)
                    read += page.changes
                    place = page.changes.last?.seq ?? place
                    if finished && page.changes.isEmpty { return read }
                    if page.changes.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
                }
            }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0 ..< writers {
                group.addTask {
                    await gate.wait()
                    for row in 0 ..< rowsEach {
                        let entry = #"[{"hunt":"w\#(writer)-\#(row)","kind":"hunt","payload":{}}]"#
                        _ = try await writerPool.transaction { connection in
                            try connection.query("SELECT log_hunt_changes(\(entry)::jsonb)")
                        }
                    }
                    done.add()
                }
            }
            gate.open()
            try await group.waitForAll()
        }
        let total = writers * rowsEach
        for reader in readers {
            let read = try await reader.value
            #expect(read.count == total)
            #expect(read.map(\.seq) == Array((start + 1) ... (start + total)))
            #expect(Set(read.map(\.hunt)).count == total)
            for writer in 0 ..< writers {
                let own = read.map(\.hunt).filter { $0.hasPrefix("w\(writer)-") }
                #expect(own == (0 ..< rowsEach).map { "w\(writer)-\($0)" }, "writer \(writer)'s rows out of their commit order")
            }
        }
        // Both daemons read the same log.
        #expect(try await readers[0].value.map(\.hunt) == readers[1].value.map(\.hunt))
        let unnumbered = try await writerPool.query("SELECT count(*) AS n FROM hunt_changes WHERE seq IS NULL")[0].int("n") as Int
        #expect(unnumbered == 0)
        await writerPool.shutdown()
        for pool in daemonPools { await pool.shutdown() }
    }
    @Test("a trim numbers committed rows first: old rows no daemon numbered yet are trimmed by age like any, and a reader before them is told so", arguments: [false, true])
    func trimNumbersFirst(feed: Bool) async throws {
        let configuration = try TestDatabase.isolatedConfiguration()
        try await TestDatabase.migrate(configuration)
        let writerPool = PostgresPool(configuration: configuration, maxConnections: 2)
        let daemonPool = PostgresPool(configuration: configuration, maxConnections: 2)
        let daemon = Database(pool: daemonPool)
        let start = Int(try await daemon.lastHuntChange().seq)
        let feedStart = try await daemonPool.query("SELECT coalesce(max(seq), 0) AS n FROM feed_changes")[0].int("n") as Int
        // Rows committed by a writer whose daemon has not numbered them (it died, or its
        // numbering is still on its way): no position yet.
        for row in 0 ..< 5 {
            if feed {
                _ = try await writerPool.query(
                    "INSERT INTO feed_changes (kind, subject, lat, lon) VALUES ('pin', \("p\(row)"), 1.0, 2.0)")
            } else {
                let entry = #"[{"hunt":"t\#(row)","kind":"hunt","payload":{}}]"#
                _ = try await writerPool.query("SELECT log_hunt_changes(\(entry)::jsonb)")
            }
        }
        let table = feed ? "feed_changes" : "hunt_changes"
        #expect(try await writerPool.query("SELECT count(*) AS n FROM \(unescaped: table) WHERE seq IS NULL")[0].int("n") as Int == 5)
        let trimmed = feed
            ? try await daemon.trimFeedChanges(keepSeconds: 0, limit: 1000)
            : try await daemon.trimHuntChanges(keepSeconds: 0, limit: 1000)
        // Everything but the newest row goes, the five among them numbered first.
        #expect(try await writerPool.query("SELECT count(*) AS n FROM \(unescaped: table) WHERE seq IS NULL")[0].int("n") as Int == 0)
        #expect(try await writerPool.query("SELECT count(*) AS n FROM \(unescaped: table)")[0].int("n") as Int == 1)
        #expect(trimmed >= 4)
        if feed {
            let page = try await daemon.feedChanges(after: Int64(feedStart), limit: 100)
            #expect(!page.isContinuous, "a reader before the trimmed rows must be told they are gone")
        } else {
            let page = try await daemon.huntChanges(after: start, limit: 100)
            #expect(page.trimmedThrough >= start + 4, "a reader before the trimmed rows must be told they are gone")
        }
        await writerPool.shutdown()
        await daemonPool.shutdown()
    }
}

/// How many writers have finished, for the readers to see.
private final class WritersDone: Sendable {
    private let finished = Mutex(0)

    var count: Int { finished.withLock { $0 } }

    func add() { finished.withLock { $0 += 1 } }
}
