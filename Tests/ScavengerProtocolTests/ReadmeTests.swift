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

    /// The Status paragraph, on one line (a phrase wrapped across lines is found as written).
    static func status() throws -> String {
        let text = try readme()
        let status = try #require(text.range(of: "\nStatus: "))
        let end = text.range(of: "\n\n", range: status.upperBound ..< text.endIndex)?.lowerBound ?? text.endIndex
        return text[status.upperBound ..< end].split(whereSeparator: \.isNewline).joined(separator: " ")
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

    @Test("the Status says the whole protocol through 1.4 is implemented, and lists nothing as still to come")
    func statusIsWhole() throws {
        let status = try Self.status()
        #expect(status.contains("1.4 additions"), "\(status)")
        for unfinished in ["Not yet", "not yet", "not implemented", "to come"] {
            #expect(!status.contains(unfinished), "the Status says \(unfinished): \(status)")
        }
    }

    @Test("protocol 1.4's options are in their commands' syntax: CREATEHUNT's TEAMS, SIZE, TRIAL, BADGE; JOIN's TEAM")
    func optionsOfTheTable() throws {
        for (name, keywords) in [("CREATEHUNT", ["TEAMS", "SIZE", "TRIAL", "BADGE"]), ("JOIN", ["AS", "TEAM"])] {
            let spec = try #require(CommandTable.standard.command(named: name))
            let words = Set(spec.syntax.split { !($0.isLetter || $0 == "_") }.map(String.init))
            for keyword in keywords { #expect(words.contains(keyword), "\(name)'s syntax lacks \(keyword): \(spec.syntax)") }
        }
    }

    /// The most lines the README may hold. It is the users' manual: the whole protocol, setting up,
    /// running and operating the daemon. Detail that only some readers need lives elsewhere and the
    /// README links to it (the failover runbook in scripts/chaos/RUNBOOK.md, the benchmark in
    /// scripts/bench/README.md, the architecture and where to start in scripts/DEVELOPERS.md, each
    /// client's API in its doc comments): move detail there rather than raise this.
    static let mostLines = 1_200

    @Test("a manual, not a diary: at most 1,200 lines, and no commit hash (the runs' history is in scripts/bench/README.md)")
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

    @Test("the detail moved out of the README is there: every relative link names a file of this repository")
    func linkedFilesExist() throws {
        let text = try Self.readme()
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let targets = text.split(separator: "](").dropFirst().map { rest in String(rest.prefix { $0 != ")" }) }
        let files = targets.filter { !$0.hasPrefix("#") && !$0.contains("://") }
        #expect(files.contains("scripts/chaos/RUNBOOK.md") && files.contains("scripts/DEVELOPERS.md"), "\(files)")
        for target in files {
            let path = String(target.prefix { $0 != "#" })
            #expect(!path.hasPrefix("/") && !path.split(separator: "/").contains(".."), "the README links outside the repository: \(target)")
            #expect(
                FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path),
                "the README links to \(target), which is not in the repository")
        }
    }
}
