import Foundation
import Logging
import Testing
import ScavengerBoard
@testable import ScavengerProtocol
import ScavengerTestSupport

@Suite("Command table")
struct CommandTableTests {
    let context = CommandContext(
        session: Session(connectionID: 1), board: OfflineBoard.shared, logger: Logger(label: "test"))

    func run(_ line: String) async -> CommandOutcome? {
        await CommandTable.standard.execute(line: line, context: context)
    }

    @Test("transcript of the connection commands", arguments: [
        ("PING", "OK \"PONG\"\n"),
        ("ping", "OK \"PONG\"\n"),
        ("PiNg", "OK \"PONG\"\n"),
        ("PING extra", "ERR BAD_ARGUMENT wrong number of arguments for PING; usage: PING\n"),
        ("NOPE", "ERR UNKNOWN_COMMAND unknown command 'NOPE'; HELP lists the commands\n"),
        ("HELP nope", "ERR UNKNOWN_COMMAND unknown command 'nope'; HELP lists the commands\n"),
        ("HELP a b", "ERR BAD_ARGUMENT wrong number of arguments for HELP; usage: HELP [command]\n"),
        (#"HELLO "x"#, "ERR BAD_REQUEST unterminated quoted token\n"),
        ("HELLO", #"OK {"server":"scavengerd","version":"\#(ServerVersion.daemon)","protocol":1,"user":null}"# + "\n"),
        ("HELP quit", #"OK {"command":"QUIT","syntax":"QUIT","summary":"Answers \"BYE\" and closes the connection.","flags":[]}"# + "\n"),
        ("HELP ping", #"OK {"command":"PING","syntax":"PING","summary":"Answers \"PONG\".","flags":["readonly"]}"# + "\n"),
        ("QUIT", "OK \"BYE\"\n"),
    ])
    func transcript(line: String, expected: String) async throws {
        let outcome = try #require(await run(line))
        #expect(outcome.reply.line == expected)
    }

    @Test("exactly the contract's writes take REQUEST key, and HELP shows it on each")
    func requestKeyCommands() {
        let writes = ["POST", "POSTPHOTO", "DELETE", "REPLY", "REPORT", "CREATEHUNT", "ADDSTOP", "REMOVESTOP", "JOIN", "LEAVE", "CHECKIN",
                      "APPROVE", "REJECT", "HINT", "STARTHUNT", "EXTEND", "ENDHUNT", "CLAIM", "RESOLVE", "BAN", "UNBAN"]
        let keyed = CommandTable.standard.commands.filter(\.takesRequestKey)
        #expect(Set(keyed.map(\.name)) == Set(writes))
        #expect(keyed.allSatisfy { $0.syntax.hasSuffix(" [REQUEST key]") })
        #expect(CommandTable.standard.commands.filter { !$0.takesRequestKey }.allSatisfy { !$0.syntax.contains("REQUEST") })
    }

    /// The canonical form `REQUEST` keys compare, for a request line (parsed by its command's
    /// parser, as dispatch does).
    func canonical(_ line: String) throws -> (key: String?, form: String) {
        let tokens = try Tokenizer.tokenize(line, maximumTokens: 64)
        let spec = try #require(CommandTable.standard.command(named: tokens[0].text))
        var arguments = Arguments(command: spec.name, tokens: tokens.dropFirst(), acceptsRequestKey: spec.takesRequestKey)
        _ = try spec.prepare(&arguments, context)
        return (arguments.requestKey, arguments.canonicalRequest)
    }

    @Test("one request whatever the order and case of its options and where REQUEST stands; any other value is another request")
    func canonicalRequests() throws {
        let base = try canonical("CREATEHUNT \"Old town\" PUBLIC ORDERED DURATION 3600 REQUEST key-0001")
        #expect(base.key == "key-0001")
        for same in ["createhunt \"Old town\" request key-0001 duration 3600 ordered public",
                     "CREATEHUNT \"Old town\" DURATION 3600 REQUEST key-0001 PUBLIC ORDERED"] {
            #expect(try canonical(same) == (base.key, base.form), "\(same)")
        }
        for other in ["CREATEHUNT \"Old town\" PUBLIC DURATION 3600 REQUEST key-0001",
                      "CREATEHUNT \"Old town\" PUBLIC ORDERED DURATION 3601 REQUEST key-0001",
                      "CREATEHUNT \"Old Town\" PUBLIC ORDERED DURATION 3600 REQUEST key-0001",
                      "CREATEHUNT Old PUBLIC ORDERED DURATION 3600 REQUEST key-0001"] {
            #expect(try canonical(other).form != base.form, "\(other)")
        }
        // A command with no options takes REQUEST after its arguments; CLAIM's item is optional.
        #expect(try canonical("DELETE p1 REQUEST key-0002") == ("key-0002", try canonical("DELETE p1").form))
        #expect(try canonical("CLAIM REQUEST key-0003") == ("key-0003", try canonical("CLAIM").form))
        #expect(try canonical("CLAIM item1 REQUEST key-0003").form != canonical("CLAIM").form)
    }

    @Test("blank lines get no reply", arguments: ["", " ", "\t \t"])
    func blank(line: String) async {
        #expect(await run(line) == nil)
    }

    @Test("QUIT closes the connection, nothing else does")
    func quitCloses() async throws {
        #expect(try #require(await run("QUIT")).closesConnection)
        #expect(try #require(await run("PING")).closesConnection == false)
    }

    @Test("HELP lists every command of the table, in order")
    func helpListsAll() async throws {
        let outcome = try #require(await run("HELP"))
        guard case .ok(.array(let entries)) = outcome.reply else {
            Issue.record("HELP did not answer an array")
            return
        }
        #expect(entries == CommandTable.standard.commands.map(\.help))
        #expect(entries.count == CommandTable.standard.commands.count)
    }

    @Test("flags: the writes take REQUEST keys, the reads name only commands that exist, no row is both")
    func flags() {
        let table = CommandTable.standard
        let names = Set(table.commands.map(\.name))
        #expect(CommandSpec.keyedWrites.isSubset(of: names))
        #expect(CommandSpec.readOnlyCommands.isSubset(of: names))
        #expect(CommandSpec.keyedWrites.isDisjoint(with: CommandSpec.readOnlyCommands))
        for spec in table.commands {
            #expect((spec.flags == [.write]) == spec.takesRequestKey, "\(spec.name)")
            guard case .object(let fields) = spec.help else {
                Issue.record("\(spec.name)'s HELP entry is not an object")
                continue
            }
            #expect(fields.last?.0 == "flags" && fields.last?.1 == .array(spec.flags.map { .string($0.rawValue) }), "\(spec.name)")
        }
        // Those that change the connection's state are neither, and say so with no flag.
        for name in ["AUTH", "LOGIN", "REGISTER", "LOGOUT", "QUIT", "WATCH", "UNWATCH"] {
            #expect(table.command(named: name)?.flags == [], "\(name)")
        }
    }

    @Test("every row is well formed")
    func rowsWellFormed() {
        let names = CommandTable.standard.commands.map(\.name)
        #expect(Set(names).count == names.count)
        for spec in CommandTable.standard.commands {
            #expect(spec.name == spec.name.uppercased())
            #expect(spec.syntax.uppercased().hasPrefix(spec.name))
            #expect(!spec.summary.isEmpty)
            #expect(spec.arity.lowerBound >= 0)
        }
    }

    @Test("the README's command reference is the one the table generates")
    func readmeReference() throws {
        let readme = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        let begin = "<!-- commands:begin (generated by `scavengerd commands`) -->\n"
        let end = "<!-- commands:end -->"
        let start = try #require(text.range(of: begin))
        let finish = try #require(text.range(of: end, range: start.upperBound ..< text.endIndex))
        #expect(String(text[start.upperBound ..< finish.lowerBound]) == CommandTable.standard.markdownReference)
    }

    @Test("a line of millions of tokens is refused by its arity, not split whole")
    func manyTokens() async throws {
        let line = "PING" + String(repeating: " x", count: 2_000_000)
        let outcome = try #require(await run(line))
        #expect(outcome.reply.line == "ERR BAD_ARGUMENT wrong number of arguments for PING; usage: PING\n")
        let unknown = try #require(await run("NOPE" + String(repeating: " x", count: 2_000_000)))
        #expect(unknown.reply.line.hasPrefix("ERR UNKNOWN_COMMAND"))
    }
}

@Suite("Command names and keywords match by ASCII case only")
struct ASCIICaseTests {
    let context = CommandContext(session: Session(connectionID: 1), board: OfflineBoard.shared, logger: Logger(label: "test"))

    @Test("letters that only Unicode case mapping turns into ASCII do not name commands or keywords", arguments: [
        ("quıt", "ERR UNKNOWN_COMMAND"),  // dotless ı
        ("pıng", "ERR UNKNOWN_COMMAND"),
        ("ping", "OK \"PONG\""),
        ("MODQUEUE ſtatus all", "ERR BAD_ARGUMENT"),  // long s
        ("MODQUEUE status all", "ERR UNAUTHORIZED"),
        ("NEARBY 1 1 10 kind TEXT", "OK {"),
    ])
    func asciiOnly(line: String, prefix: String) async throws {
        let outcome = try #require(await CommandTable.standard.execute(line: line, context: context))
        #expect(outcome.reply.line.hasPrefix(prefix), "\(outcome.reply.line)")
    }
}
