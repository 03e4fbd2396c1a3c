import ScavengerLineCheck
import ScavengerProtocol

/// Where fuzzing starts: every command's syntax line from the table with plausible values (so a
/// new command is seeded without anyone remembering to), and lines at the edges of the grammar.
enum SeedCorpus {
    /// File names and contents: one request line each, without a line ending.
    static func seeds(table: CommandTable = .standard) -> [(name: String, bytes: [UInt8])] {
        var seeds: [(String, [UInt8])] = []
        for spec in table.commands {
            var seen: Set<String> = []
            for variant in Variant.allCases {
                let line = example(spec.syntax, variant: variant)
                guard seen.insert(line).inserted else { continue }
                seeds.append(("command-\(spec.name.lowercased())-\(variant)", Array(line.utf8)))
            }
        }
        for (index, line) in trickyLines.enumerated() {
            seeds.append(("edge-\(format3(index))", line))
        }
        for (index, line) in followUpPages().enumerated() {
            seeds.append(("page-\(format3(index))", Array(line.utf8)))
        }
        return seeds
    }

    /// NEARBY queries on ``LineCheckBoard`` followed by their next page, and the same cursors
    /// given to other queries: a fuzzer cannot guess a cursor's fingerprint.
    static func followUpPages() -> [String] {
        let queries = [
            "NEARBY 52.5201 13.405 1000 LIMIT 1",
            "NEARBY 52.5201 13.405 1000 LIMIT 2 KIND text",
            "NEARBY 0 0 25000000 LIMIT 3",
            "NEARBY -89.9 0 25000000 LIMIT 1 KIND photo",
            "NEARBY 10 -179.9 50000 LIMIT 1",
        ]
        var lines: [String] = []
        for query in queries {
            guard case .reply(.ok(let page))? = try? LineCheck.check(Array(query.utf8)),
                  let start = page.encoded.firstRange(of: #""next":""#)?.upperBound,
                  let end = page.encoded[start...].firstIndex(of: "\"")
            else { continue }
            let cursor = page.encoded[start ..< end]
            lines.append("\(query) CURSOR \(cursor)")
            lines.append("NEARBY 52.52 13.405 1000 LIMIT 1 CURSOR \(cursor)")
        }
        return lines
    }

    /// A libFuzzer dictionary: the command names, option keywords and enumerated values of the
    /// table, and the pieces of the token and number grammars.
    static func dictionary(table: CommandTable = .standard) -> String {
        var words: [String] = []
        for spec in table.commands {
            for word in syntaxWords(spec.syntax) where isKeyword(word.text) || word.text.contains("|") {
                for piece in word.text.split(separator: "|").map(String.init)
                where !numericPlaceholders.contains(piece) && !words.contains(piece) {
                    words.append(piece)
                }
            }
        }
        words += [" ", "\t", "\"", "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u", "\\ud83d\\ude00",
                  "-", ".", "e", "E", "e+", "e-", "0", "90", "180", "1e308", "20000000", "200", "2592000"]
        var lines = ["# Made by ScavengerProtocolFuzzer --write-dictionary from the command table."]
        for (index, word) in words.enumerated() {
            lines.append("word\(index)=\"\(LineCheck.escaped(word.utf8, namingControls: false))\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    enum Variant: CaseIterable, CustomStringConvertible {
        /// Every optional part, the first of each set of alternatives.
        case full
        /// No optional part.
        case minimal
        /// Every optional part, the last of each set of alternatives.
        case last

        var description: String {
            switch self {
            case .full: "full"
            case .minimal: "minimal"
            case .last: "last"
            }
        }
    }

    /// A word of a syntax line, e.g. `LIMIT` in `[LIMIT n]`, and whether it is optional.
    struct SyntaxWord {
        var text: String
        var optional: Bool
    }

    static func syntaxWords(_ syntax: String) -> [SyntaxWord] {
        var words: [SyntaxWord] = []
        var depth = 0
        for raw in syntax.split(separator: " ") {
            var text = Substring(raw)
            if text.hasPrefix("[") {
                depth += 1
                text = text.dropFirst()
            }
            let closes = text.hasSuffix("]")
            if closes { text = text.dropLast() }
            words.append(SyntaxWord(text: String(text), optional: depth > 0))
            if closes { depth -= 1 }
        }
        return words
    }

    /// The syntax line with its placeholders filled in.
    static func example(_ syntax: String, variant: Variant) -> String {
        let words = syntaxWords(syntax)
        let command = words.first?.text ?? ""
        var parts: [String] = []
        for word in words where !(word.optional && variant == .minimal) {
            let alternatives = word.text.split(separator: "|").map(String.init)
            let chosen = (variant == .last ? alternatives.last : alternatives.first) ?? word.text
            let literal = isKeyword(chosen) || (alternatives.count > 1 && !numericPlaceholders.contains(chosen))
            parts.append(literal ? chosen : value(for: chosen, in: command))
        }
        return parts.joined(separator: " ")
    }

    /// Placeholders that may stand among literal alternatives, as in `seconds|permanent`; any
    /// other alternative (`text|photo`) is a literal value.
    static let numericPlaceholders: Set<String> = ["seconds", "n", "lat", "lon", "radius_m"]

    /// Command names and option keywords are upper case; placeholders and values are not.
    static func isKeyword(_ word: String) -> Bool {
        !word.isEmpty && word.allSatisfy { $0.isUppercase || $0 == "_" }
    }

    static let pinID = "pabcdefghijklmnopqrstuvwx"
    /// A 1×1 PNG.
    static let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

    /// A plausible value for a placeholder of the syntax.
    static func value(for placeholder: String, in command: String) -> String {
        switch placeholder {
        case "lat": "52.520008"
        case "lon": "13.404954"
        case "radius_m": "1500"
        case "n": "20"
        case "c": command == "MODLOG" ? "42" : "0123456789abcdef.40a7700000000000.\(pinID)"
        case "seconds": "3600"
        case "text": #""hello \"world\" \u00e9\ud83d\ude00\n\tend""#
        case "base64": png
        case "id", "pin-id", "item": pinID
        case "username": "alice_01"
        case "email": "alice@example.com"
        case "name-or-email": "alice@example.com"
        case "password": "correct-horse-battery"
        case "token": String(repeating: "0f", count: 32)
        case "reason": "spam"
        case "name": #""Berlin Mitte""#
        case "command": "nearby"
        default: placeholder
        }
    }

    /// Lines at the edges of the grammar: numbers, quoting, whitespace, length, encoding.
    static let trickyLines: [[UInt8]] = {
        let lines: [String] = [
            // Numbers at and beyond the grammar's and the arguments' bounds.
            "NEARBY 90 180 1 LIMIT 200 KIND photo",
            "NEARBY -90 -180 20000000 LIMIT 1 KIND text",
            "NEARBY 90.0000001 0 1",
            "NEARBY 0 180.0000000000001 1",
            "NEARBY -0 -0.0 1e-300",
            "NEARBY 0.0e-400 0 1E+2 LIMIT 2e2",
            "NEARBY 1e308 0 1",
            "NEARBY 0 0 1e309",
            "NEARBY 0 0 100 LIMIT 201",
            "NEARBY 0 0 100 LIMIT 0",
            "NEARBY 0 0 100 LIMIT 1.5",
            "NEARBY 0 0 100 LIMIT 9223372036854775808",
            "NEARBY 0 0 100 LIMIT -9223372036854775809",
            "NEARBY 00 -00 0.5e-0 LIMIT 01",
            "NEARBY 1. .5 +1",
            "NEARBY nan inf 0x10",
            "NEARBY 1e 1e+ -",
            "NEARBY 0 0 100 LIMIT 5 LIMIT 6",
            "NEARBY 0 0 100 LIMIT",
            "nearby 0 0 20000000 limit 200 kind PHOTO",
            "NEARBY 89.9999 179.9999 5000 CURSOR 0000000000000000.7ff0000000000000.\(pinID)",
            "NEARBY 0 0 20000000 CURSOR 0000000000000000.0000000000000000.\(pinID)",
            "NEARBY 0 0 100 CURSOR ..",
            "POST 0 0 hi TTL 2592000",
            "POST 0 0 hi TTL 2592001",
            "POST 0 0 hi TTL 60 REQUEST key-0000001",
            "POST 0 0 hi REQUEST key-0000001 TTL 60",
            "POST 0 0 hi REQUEST key-0000001 REQUEST key-0000002",
            "POST 0 0 hi REQUEST short",
            "POST 0 0 hi REQUEST",
            "DELETE REQUEST key-0000001",
            "CLAIM REQUEST key-0000001",
            "NEARBY 0 0 100 REQUEST key-0000001",
            "POSTPHOTO 0 0 \(png) CAPTION \"\" TTL 1",
            "POSTPHOTO 0 0 aGV*sb!G8=",
            "POSTPHOTO 0 0 ====",
            "BAN alice 3153600000 NOTE x",
            "BAN alice 3153600001",
            "BAN alice PERMANENT",
            "RESOLVE \(pinID) dismiss DURATION 5",
            "MODLOG CURSOR -1",
            "MODLOG CURSOR 99999999999999999999",
            "MODQUEUE STATUS ALL LIMIT 200",
            "REGION x CURSOR 0000000000000000.8000000000000000.\(pinID)",
            "REPLIES \(pinID) CURSOR x LIMIT 1",
            // Quoted tokens.
            #"HELP "ne\u0061rby""#,
            #"HELP "\ud83d\ude00""#,
            #"HELP "\ud800""#,
            #"HELP "\udc00\ud800""#,
            #"HELP "\ud800\u0041""#,
            #"HELP "\u00""#,
            #"HELP "\u00zz""#,
            #"HELP "\/\b\f\n\r\t\\\"""#,
            #"HELP "\x""#,
            #"HELP "unterminated"#,
            #"HELP "x"y"#,
            #"HELP ""#,
            #"HELP "\u0000""#,
            #""PING""#,
            #"REGION "" LIMIT "5""#,
            #"REGION "\u0000" KIND "text""#,
            "HELP \"tab\tinside\"",
            // Whitespace and line endings.
            "",
            " \t ",
            "PING\t",
            "\tPING",
            "PING\r",
            "\r",
            "HELP\tPING",
            "PING\u{0}",
            "REGIONS\u{7F}",
            // Long lines.
            "HELP \"" + String(repeating: "a", count: 3000) + "\"",
            "NEARBY" + String(repeating: " 1", count: 1500),
            "POST 0 0 \"" + String(repeating: "é", count: 501) + "\"",
            String(repeating: " ", count: 4000),
            "REGION " + String(repeating: "😀", count: 900),
            "REPORT \(pinID) spam NOTE " + String(repeating: "\\", count: 3000),
        ]
        var bytes = lines.map { Array($0.utf8) }
        // Not UTF-8: a lone continuation byte, a cut sequence, an overlong encoding, a surrogate.
        bytes.append([0xFF, 0xFE])
        bytes.append(Array("PING ".utf8) + [0xC3])
        bytes.append(Array("HELP ".utf8) + [0xC0, 0xAF])
        bytes.append(Array("REGION ".utf8) + [0xED, 0xA0, 0x80])
        bytes.append(Array("HELP \"".utf8) + [0x80] + Array("\"".utf8))
        return bytes
    }()

    static func format3(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }
}
