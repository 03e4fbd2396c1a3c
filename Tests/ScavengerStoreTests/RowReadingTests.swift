import Foundation
import Testing

/// The store reads every row by column name (a column found once per result, or a name), never by
/// a bare position that silently reads the wrong value once a statement's columns change.
@Suite("Store row reads")
struct RowReadingTests {
    /// A row accessor given a number, or a number added to a variable (`row.string(first + 3)`).
    static let positionalRead = #"\.(string|int|double|bool|bytes|isNull)\(\s*(\w+\s*[+-]\s*)?\d+\s*\)"#

    static var storeSources: URL {
        URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/ScavengerStore")
    }

    @Test("the pattern finds positional reads, and only those", arguments: [
        ("let v: String = try row.string(14)", true),
        ("try rows[0].int(0) as Int", true),
        ("try row.string(first + 3)", true),
        ("try row.isNull( 2 )", true),
        ("try row.string(kind)", false),
        ("try rows[0].int(\"pins\")", false),
        ("Int64(try row.int(created) as Int)", false),
    ])
    func patternFindsPositionalReads(line: String, positional: Bool) throws {
        let pattern = try Regex(Self.positionalRead)
        let found = line.firstMatch(of: pattern) != nil
        #expect(found == positional, "\(line)")
    }

    @Test("no row in Sources/ScavengerStore is read by position")
    func noPositionalReads() throws {
        let files = try FileManager.default.contentsOfDirectory(at: Self.storeSources, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "swift" }
        #expect(files.count > 5)
        let pattern = try Regex(Self.positionalRead)
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where line.firstMatch(of: pattern) != nil {
                Issue.record("\(file.lastPathComponent):\(number + 1) reads a row by position: \(line)")
            }
        }
    }
}
