import Logging
import ScavengerBoard
import ScavengerLineCheck
import ScavengerProtocol
import ScavengerTestSupport
import Testing

/// Thousands of seeded random lines, pipelined over one connection to a real server whose
/// database is not there: every line that is not blank gets exactly one reply, the one the
/// command table gives when it answers at once, and a well-formed one (never `ERR INTERNAL`)
/// when the line needed the database.
@Suite("Random lines over TCP")
struct RandomLinesTests {
    /// What the server must answer to one line.
    enum Expected {
        case nothing
        case exactly(String)
        case wellFormed
    }

    @Test("3,000 pipelined random lines: one well-formed reply each, in order, and the server lives on")
    func randomLines() async throws {
        var random = SplitMix64(seed: 0x5CA7_E11E_F022)
        var generator = RandomLineGenerator()
        let lines = (0 ..< 3000).map { _ in generator.line(&random) }

        // What the server will see (it strips the `\n` and one `\r` before it), and must answer.
        let context = CommandContext(
            session: Session(connectionID: 1), board: OfflineBoard.shared, logger: Logger(label: "random-lines"))
        var expected: [Expected] = []
        var deferred = 0
        for line in lines {
            var seen = line.content + (line.crlf ? [UInt8(ascii: "\r")] : [])
            if seen.last == UInt8(ascii: "\r") { seen.removeLast() }
            switch try LineCheck.check(seen, context: context) {
            case .blank: break
            case .reply(let reply): expected.append(.exactly(String(reply.line.dropLast())))
            case .deferred:
                expected.append(.wellFormed)
                deferred += 1
            }
        }
        let blank = lines.count - expected.count
        #expect(blank > 30 && expected.count > 2500, "the generator should mix in some blank lines, not only those")
        #expect(deferred > 30, "some lines should reach the (missing) database")

        var wire: [UInt8] = []
        for line in lines { wire += line.content + (line.crlf ? [0x0D, 0x0A] : [0x0A]) }
        let request = wire

        try await withServer { address, _ in
            let replies = try await withTimeout(50) {
                try await TestConnection.talk(address) { writer, reader in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        // Write while reading, so neither side waits on a full socket buffer.
                        group.addTask {
                            var start = 0
                            while start < request.count {
                                let end = min(start + 16 * 1024, request.count)
                                try await writer.send(bytes: Array(request[start ..< end]))
                                start = end
                            }
                            writer.finish()
                        }
                        let replies = try await reader.rest()
                        try await group.waitForAll()
                        return replies
                    }
                }
            }

            #expect(replies.count == expected.count, "\(lines.count) lines, \(blank) of them blank")
            var mismatches: [String] = []
            for (index, (reply, expectation)) in zip(replies, expected).enumerated() {
                if let problem = LineCheck.problem(inReplyLine: Array((reply + "\n").utf8)) {
                    mismatches.append("reply \(index): \(problem)")
                    continue
                }
                if case .exactly(let line) = expectation, line != reply {
                    mismatches.append("reply \(index): expected \(line), got \(reply)")
                }
            }
            #expect(mismatches.isEmpty, "\(mismatches.count) bad replies, first: \(mismatches.prefix(5))")

            // The server still answers a new connection.
            #expect(try await withTimeout { try await transcript(address, "PING\n") } == [#"OK "PONG""#])
        }
    }
}

/// Random request lines (without their line ending): command names from the table (mostly the
/// ones answered from memory, so the test does not wait on the missing database), arguments
/// that are numbers, words, keywords and quoted tokens with escapes, and garbage: bytes that are
/// not UTF-8, control characters, tabs, `\r`, blank lines. Never `QUIT` (it would end the
/// connection) and never a `\n`.
struct RandomLineGenerator {
    struct Line {
        var content: [UInt8]
        /// Ends in `\r\n` rather than `\n`.
        var crlf: Bool
    }

    let inMemory = ["PING", "HELLO", "HELP", "NEARBY", "REGION", "REGIONS"]
    let all = CommandTable.standard.commands.map(\.name).filter { $0 != "QUIT" }
    let keywords = ["LIMIT", "CURSOR", "KIND", "TTL", "CAPTION", "NOTE", "DURATION", "STATUS", "text", "photo", "permanent"]

    mutating func line(_ random: inout SplitMix64) -> Line {
        while true {
            let content = candidate(&random)
            guard !endsConnection(content) else { continue }
            return Line(content: content, crlf: random.chance(0.2))
        }
    }

    /// Whether the server would close the connection after this line (QUIT).
    func endsConnection(_ content: [UInt8]) -> Bool {
        guard let text = String(validating: content, as: UTF8.self),
              let first = try? Tokenizer.tokenize(text, maximumTokens: 1).first
        else { return false }
        return first.text.uppercased() == "QUIT"
    }

    func candidate(_ random: inout SplitMix64) -> [UInt8] {
        switch random.int(in: 0 ... 99) {
        case 0 ..< 35:  // an in-memory command with random arguments
            return Array(command(from: inMemory, &random).utf8)
        case 35 ..< 45:  // a well-formed NEARBY
            let lat = random.double(in: -90 ... 90), lon = random.double(in: -180 ... 180)
            let radius = random.double(in: 1 ... 50_000)
            return Array("NEARBY \(lat) \(lon) \(radius) LIMIT \(random.int(in: 1 ... 200))".utf8)
        case 45 ..< 50:  // any command
            return Array(command(from: all, &random).utf8)
        case 50 ..< 52:  // a well-formed command that needs the database (ERR UNAVAILABLE)
            let lines = ["GET \(random.pinID())", "WHOAMI", "REPLIES \(random.pinID()) LIMIT 5", "AUTH abc", "LOGOUT"]
            return Array(lines[random.int(in: 0 ... lines.count - 1)].utf8)
        case 52 ..< 70:  // an unknown command or a garbled name
            return Array(([word(&random)] + arguments(&random)).joined(separator: separator(&random)).utf8)
        case 70 ..< 82:  // garbage bytes (never `\n`)
            return (0 ..< random.int(in: 1 ... 60)).map { _ in
                let byte = UInt8(truncatingIfNeeded: random.next())
                return byte == 0x0A ? 0x20 : byte
            }
        case 82 ..< 88:  // a command name followed by bytes that are not UTF-8
            return Array(inMemory[random.int(in: 0 ... inMemory.count - 1)].utf8) + [0x20, 0xC3, 0x28, 0xFF]
        case 88 ..< 95:  // a blank line: empty, spaces and tabs, maybe a `\r` the framing strips
            var blank = (0 ..< random.int(in: 0 ... 6)).map { _ in random.chance(0.5) ? UInt8(ascii: " ") : UInt8(ascii: "\t") }
            if random.chance(0.3) { blank.append(0x0D) }
            return blank
        default:  // tabs, `\r` and control characters around a PING
            let noise: [[UInt8]] = [[0x09], [0x0D], [0x00], [0x7F], [0x0B], [0x20, 0x0D]]
            return noise[random.int(in: 0 ... noise.count - 1)] + Array("PING".utf8)
                + noise[random.int(in: 0 ... noise.count - 1)]
        }
    }

    func command(from names: [String], _ random: inout SplitMix64) -> String {
        var name = names[random.int(in: 0 ... names.count - 1)]
        if random.chance(0.2) { name = name.lowercased() }
        return ([name] + arguments(&random)).joined(separator: separator(&random))
    }

    func separator(_ random: inout SplitMix64) -> String {
        switch random.int(in: 0 ... 9) {
        case 0: "\t"
        case 1: "  "
        case 2: " \t "
        default: " "
        }
    }

    func arguments(_ random: inout SplitMix64) -> [String] {
        (0 ..< random.int(in: 0 ... 7)).map { _ in argument(&random) }
    }

    func argument(_ random: inout SplitMix64) -> String {
        switch random.int(in: 0 ... 9) {
        case 0, 1: return number(&random)
        case 2: return keywords[random.int(in: 0 ... keywords.count - 1)]
        case 3, 4: return quoted(&random)
        case 5: return random.pinID()
        case 6: return all[random.int(in: 0 ... all.count - 1)]
        default: return word(&random)
        }
    }

    func number(_ random: inout SplitMix64) -> String {
        let forms = [
            "0", "-0", "90", "-90", "180", "-180", "90.0000001", "1e308", "1e309", "1E+2", "00", "1.", ".5", "+1", "-",
            "nan", "inf", "201", "9223372036854775808", "2592000", "50000",
        ]
        if random.chance(0.5) { return forms[random.int(in: 0 ... forms.count - 1)] }
        return "\(random.double(in: -1000 ... 1000))"
    }

    func word(_ random: inout SplitMix64) -> String {
        let alphabet = Array("abcXYZ019_-.é😀@/")
        return String((0 ..< random.int(in: 1 ... 12)).map { _ in alphabet[random.int(in: 0 ... alphabet.count - 1)] })
    }

    /// A JSON string literal, mostly valid, sometimes broken (bad escape, lone surrogate,
    /// unterminated, glued to the next token).
    func quoted(_ random: inout SplitMix64) -> String {
        let pieces = [
            "a", "b c", "é", "😀", #"\""#, #"\\"#, #"\/"#, #"\n"#, #"\t"#, #"\u00e9"#, #"\ud83d\ude00"#, #"\u0000"#,
        ]
        let broken = [#"\x"#, #"\ud800"#, #"\u12"#, "\t", #"\udc00"#]
        var body = ""
        for _ in 0 ..< random.int(in: 0 ... 5) { body += pieces[random.int(in: 0 ... pieces.count - 1)] }
        if random.chance(0.1) { body += broken[random.int(in: 0 ... broken.count - 1)] }
        switch random.int(in: 0 ... 19) {
        case 0: return "\"" + body
        case 1: return "\"" + body + "\"x"
        default: return "\"" + body + "\""
        }
    }
}
