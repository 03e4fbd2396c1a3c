import Foundation
import Logging
import Testing
import ScavengerBoard
@testable import ScavengerProtocol
import ScavengerTestSupport

/// The README is the protocol's manual: every command of the table is documented with its reply in
/// the protocol sections (not only in the table generated from it), and its Status paragraph says
/// truly which commands and options are not implemented yet.
@Suite("The README as the manual")
struct ReadmeTests {
    let context = CommandContext(
        session: Session(connectionID: 1), board: OfflineBoard.shared, logger: Logger(label: "test"))

    static func readme() throws -> String {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("README.md")
        return try String(contentsOf: url, encoding: .utf8)
    }

    /// The README from `## The protocol` to the next top-level section, without the command table
    /// that `scavengerd commands` generates (which names every command whether documented or not).
    static func protocolSections(of text: String) throws -> String {
        let start = try #require(text.range(of: "\n## The protocol\n"))
        let end = text.range(of: "\n## ", range: start.upperBound ..< text.endIndex)?.lowerBound ?? text.endIndex
        var sections = String(text[start.upperBound ..< end])
        let begin = try #require(sections.range(of: "<!-- commands:begin"))
        let finish = try #require(sections.range(of: "<!-- commands:end -->", range: begin.upperBound ..< sections.endIndex))
        sections.removeSubrange(begin.lowerBound ..< finish.upperBound)
        return sections
    }

    /// The inline code spans of Markdown text, each with what follows it up to the next span;
    /// fenced code blocks are left out (their backticks do not pair up with the text's).
    static func codeSpans(of text: some StringProtocol) -> [(span: String, after: String)] {
        var inFence = false
        let prose = text.split(separator: "\n", omittingEmptySubsequences: false).filter { line in
            if line.hasPrefix("```") {
                inFence.toggle()
                return false
            }
            return !inFence
        }.joined(separator: "\n")
        let pieces = prose.split(separator: "`", omittingEmptySubsequences: false)
        // A span wrapped onto the next line reads as one with a space.
        return stride(from: 1, to: pieces.count - 1, by: 2).map {
            (pieces[$0].split(whereSeparator: \.isWhitespace).joined(separator: " "), String(pieces[$0 + 1]))
        }
    }

    /// The Status paragraph's list of what is not implemented yet, split where it names the error
    /// each part is answered with: the commands (`ERR UNKNOWN_COMMAND`), then the options
    /// (`ERR BAD_ARGUMENT`).
    static func notYet() throws -> (commands: Substring, options: Substring) {
        let text = try readme()
        let status = try #require(text.range(of: "\nStatus: "))
        let end = text.range(of: "\n\n", range: status.upperBound ..< text.endIndex)?.lowerBound ?? text.endIndex
        // One line, so that a span or a phrase wrapped across lines is found as written.
        let paragraph = Substring(text[status.upperBound ..< end].split(whereSeparator: \.isNewline).joined(separator: " "))
        let list = try #require(paragraph.range(of: "Not yet implemented"))
        let unknown = try #require(paragraph.range(of: "`ERR UNKNOWN_COMMAND`", range: list.upperBound ..< paragraph.endIndex))
        let badArgument = try #require(paragraph.range(of: "`ERR BAD_ARGUMENT`", range: unknown.upperBound ..< paragraph.endIndex))
        return (paragraph[list.upperBound ..< unknown.lowerBound], paragraph[unknown.upperBound ..< badArgument.lowerBound])
    }

    @Test("every command of the table has its syntax and reply (`NAME …` → …) in the protocol sections")
    func everyCommandDocumented() throws {
        let spans = Self.codeSpans(of: try Self.protocolSections(of: Self.readme()))
        #expect(spans.count > 100)
        for name in CommandTable.standard.commands.map(\.name) {
            let documented = spans.contains { span, after in
                (span == name || span.hasPrefix(name + " "))
                    && after.drop { $0 == "*" || $0.isWhitespace }.hasPrefix("→")
            }
            #expect(documented, "the README's protocol sections do not document \(name) with its reply (`\(name) …` → …)")
        }
    }

    @Test("the commands the Status says are not implemented yet are not in the command table, and answer ERR UNKNOWN_COMMAND")
    func missingCommandsAbsent() async throws {
        let (list, _) = try Self.notYet()
        let missing = Self.codeSpans(of: list).map(\.span).filter { !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0 == "_" } }
        for name in missing {
            #expect(name == name.uppercased(), "\(name)")
            #expect(CommandTable.standard.command(named: name) == nil, "the Status calls \(name) not implemented, but the command table has it")
            let outcome = try #require(await CommandTable.standard.execute(line: name, context: context))
            #expect(outcome.reply.line.hasPrefix("ERR UNKNOWN_COMMAND "), "\(name): \(outcome.reply.line)")
        }
    }

    @Test("no command of the table is named in the Status's list of commands not implemented yet")
    func noImplementedCommandListedAsMissing() throws {
        let (list, _) = try Self.notYet()
        let words = Set(list.split { !($0.isLetter || $0 == "_") }.map(String.init))
        for name in CommandTable.standard.commands.map(\.name) {
            #expect(!words.contains(name), "the Status lists \(name) as not implemented, but the command table has it")
        }
    }

    @Test("the options the Status says are not implemented yet are not in their commands' syntax, and answer ERR BAD_ARGUMENT")
    func missingOptionsAbsent() async throws {
        let (_, list) = try Self.notYet()
        let options = Self.codeSpans(of: list).map(\.span).filter { $0.contains(" … ") }
        #expect(options.count >= 2, "\(options)")
        for option in options {
            let parts = option.components(separatedBy: " … ")
            #expect(parts.count == 2, "\(option)")
            let (name, keyword) = (parts[0], parts[parts.count - 1])
            let spec = try #require(CommandTable.standard.command(named: name), "the Status names \(name), which the command table lacks")
            let syntaxWords = spec.syntax.split { !($0.isLetter || $0 == "_") }
            #expect(!syntaxWords.contains { $0 == keyword }, "the Status calls \(option) not implemented, but \(name)'s syntax has it: \(spec.syntax)")
            // The keyword after a first argument, bare and with a value: refused either way.
            for line in ["\(name) x \(keyword)", "\(name) x \(keyword) 2"] {
                let outcome = try #require(await CommandTable.standard.execute(line: line, context: context))
                #expect(outcome.reply.line.hasPrefix("ERR BAD_ARGUMENT "), "\(line): \(outcome.reply.line)")
            }
        }
    }

    /// The most lines the README may hold: 1,200 through protocol 1.3; protocol 1.4 (time trials,
    /// badges, account recovery by mail and its operation, the failover runbook as chaos scenario
    /// 13 runs it; teams still to come) adds what a manual of the whole protocol must say.
    static let mostLines = 1_320

    @Test("a manual, not a diary: at most 1,320 lines, and no commit hash (the runs' history is in scripts/bench/README.md)")
    func manualNotDiary() throws {
        let text = try Self.readme()
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= Self.mostLines + 1, "the README has \(lines) lines")
        // A word of 7 to 40 hex digits holding both a digit and a letter reads as a commit.
        let words = text.split { !($0.isLetter || $0.isNumber) }
        let hashes = words.filter { word in
            (7 ... 40).contains(word.count) && word.allSatisfy(\.isHexDigit) && word.contains(where: \.isNumber)
                && word.contains(where: \.isLetter) && word == word.lowercased()
        }
        #expect(hashes.isEmpty, "commit hashes in the README: \(hashes.prefix(5))")
    }
}
