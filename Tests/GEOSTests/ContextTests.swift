import Testing
@testable import GEOS
import ScavengerTestSupport

@Suite("Context pool and error messages")
struct ContextTests {
    @Test func messageIsClearedBetweenUses() throws {
        let pool = ContextPool()
        let first = try pool.withContext("test") { context throws(GEOSError) in
            #expect(context.pendingMessage == nil)
            // A failure whose message nobody consumes.
            #expect(try context.readWKT("POINT(") == nil)
            #expect(context.pendingMessage?.contains("ParseException") == true)
            return ObjectIdentifier(context)
        }
        #expect(pool.idleCount == 1)
        let second = try pool.withContext("test") { context in
            #expect(context.pendingMessage == nil)
            return ObjectIdentifier(context)
        }
        #expect(first == second)  // the same context was reused, and came back clean
    }

    @Test func failureConsumesTheMessage() throws {
        let pool = ContextPool()
        try pool.withContext("test") { context throws(GEOSError) in
            let raw = try context.readWKT("NOPE(1 2)")
            #expect(raw == nil)
            let error = context.failure("read WKT", kind: .parse)
            #expect(error.message.contains("NOPE"))
            #expect(context.pendingMessage == nil)
            #expect(context.failure("again").message == "GEOS reported no message")
        }
    }

    @Test func consecutiveErrorsCarryOnlyTheirOwnMessage() {
        let first = #expect(throws: GEOSError.self) { _ = try Geometry(wkt: "FIRSTBAD(1 2)") }
        let second = #expect(throws: GEOSError.self) { _ = try Geometry(wkt: "SECONDBAD(1 2)") }
        #expect(first?.message.contains("FIRSTBAD") == true)
        #expect(second?.message.contains("SECONDBAD") == true)
        #expect(second?.message.contains("FIRSTBAD") == false)
    }

    @Test func oneLineMessages() {
        let error = GEOSError(.operationFailed, operation: "op", message: "a\nb\r\n\tc  d")
        #expect(error.message == "a b c d")
        #expect(error.description == "op: a b c d")
        #expect(GEOSError(.parse, operation: "op", message: " \n").message == "unknown error")
        #expect(GEOSError(.parse, operation: "op", message: String(repeating: "x", count: 1000)).message.count == 241)
    }

    /// 8 tasks × 500 mixed operations, each checked, with failures interleaved.
    @Test func concurrentUseFromManyTasks() async throws {
        let failures = await withTaskGroup(of: [String].self) { group in
            for task in 0..<8 {
                group.addTask { Self.work(task: task, operations: 500) }
            }
            var all: [String] = []
            for await failures in group { all += failures }
            return all
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(ContextPool.shared.idleCount >= 1)
    }

    static func work(task: Int, operations: Int) -> [String] {
        var failures: [String] = []
        func check(_ condition: Bool, _ what: @autoclosure () -> String) {
            if !condition { failures.append("task \(task): \(what())") }
        }
        for i in 0..<operations {
            let offset = Double(task * 100 + i % 50)
            do {
                switch i % 5 {
                case 0:
                    let square = try Geometry(wkt: "POLYGON((\(offset) 0, \(offset + 2) 0, \(offset + 2) 2, \(offset) 2, \(offset) 0))")
                    check(try square.area == 4, "area")
                    check(square.envelope?.minX == offset, "envelope")
                case 1:
                    let box = try Geometry.rectangle(minX: offset, minY: 0, maxX: offset + 1, maxY: 1)
                    check(try box.contains(try Geometry.point(x: offset + 0.5, y: 0.5)), "contains")
                    check(try !box.contains(try Geometry.point(x: offset + 1.5, y: 0.5)), "not contains")
                case 2:
                    let token = "BADT\(task)I\(i)"
                    do {
                        _ = try Geometry(wkt: "\(token)(1 2)")
                        check(false, "bad WKT accepted")
                    } catch {
                        check(error.kind == .parse && error.message.contains("'\(token)'"),
                              "wrong message \(error.message) for \(token)")
                    }
                case 3:
                    let region = try Geometry(geoJSON: GeoJSONFixtures.multiPolygonWithHole)
                    let prepared = try PreparedGeometry(region)
                    check(try prepared.containsPoint(x: 2, y: 2), "prepared inside")
                    check(try !prepared.containsPoint(x: 5, y: 5), "prepared hole")
                default:
                    let a = try Geometry.rectangle(minX: offset, minY: 0, maxX: offset + 4, maxY: 4)
                    let b = try Geometry.rectangle(minX: offset + 2, minY: 0, maxX: offset + 6, maxY: 4)
                    check(try a.intersection(b).area == 8, "intersection")
                    check(try a.union(b).area == 24, "union")
                }
            } catch {
                failures.append("task \(task) op \(i): \(error)")
            }
        }
        return failures
    }
}
