import Foundation
import ScavengerLineCheck
import ScavengerProtocol
import Testing

/// Replays `FuzzRegressions/`: inputs the fuzzer (`scripts/fuzz.sh`) found, and representative
/// ones, each one request line, through the checks the fuzz target applies.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("FuzzRegressions")

    static let inputs: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted()
    }()

    @Test("the regression inputs are there")
    func inputsExist() {
        #expect(Self.inputs.count >= 5, "no inputs in \(Self.directory.path)")
    }

    @Test("each regression input keeps the request line invariants", arguments: inputs)
    func replay(name: String) throws {
        let input = try Data(contentsOf: Self.directory.appendingPathComponent(name))
        do {
            _ = try LineCheck.check(Array(input))
        } catch {
            Issue.record("\(name): \(error)")
        }
    }

    @Test("the reply line check catches what it must", arguments: [
        ("OK \"PONG\"\n", true),
        ("OK {\"pins\":[],\"next\":null}\n", true),
        ("ERR BAD_REQUEST unterminated quoted token\n", true),
        ("ERR INTERNAL internal error\n", false),
        ("ERR NOPE message\n", false),
        ("ERR BAD_REQUEST\n", false),
        ("ERR BAD_REQUEST \n", false),
        ("OK \"PONG\"", false),
        ("OK 1\nOK 2\n", false),
        ("OK \"a\rb\"\n", false),
        ("OK {\"a\":\n", false),
        ("OK nan\n", false),
        ("PONG\n", false),
        ("", false),
    ])
    func replyLineCheck(line: String, wellFormed: Bool) {
        #expect((LineCheck.problem(inReplyLine: Array(line.utf8)) == nil) == wellFormed)
    }

    @Test("blank lines get no reply, other lines one, bytes that are not UTF-8 BAD_REQUEST")
    func outcomes() throws {
        #expect(try LineCheck.check([]) == .blank)
        #expect(try LineCheck.check(Array(" \t ".utf8)) == .blank)
        #expect(try LineCheck.check(Array("PING".utf8)) == .reply(.ok("PONG")))
        #expect(try LineCheck.check(Array("GET pabcdefghijklmnopqrstuvwx".utf8)) == .deferred)
        #expect(try LineCheck.check([0x50, 0xFF]) == .reply(.error(.badRequest, "request line is not valid UTF-8")))
    }

    @Test("NEARBY pages through the check board's pins, hidden and expired ones left out")
    func nearbyOnTheCheckBoard() throws {
        guard case .reply(.ok(let page)) = try LineCheck.check(Array("NEARBY 0 0 20000000 LIMIT 200".utf8)) else {
            Issue.record("NEARBY did not answer OK")
            return
        }
        let text = page.encoded
        #expect(text.contains("north pole"))
        #expect(!text.contains("hidden"))
        #expect(!text.contains("expired"))
    }
}
