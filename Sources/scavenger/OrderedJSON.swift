import Foundation

/// A JSON value that keeps its objects' keys in the order the reply gave them (Foundation's
/// parser hands back dictionaries, whose order is lost), so that what is printed reads in the
/// server's order: `id` first, then what the protocol lists next.
indirect enum OrderedJSON: Equatable {
    case object([(key: String, value: OrderedJSON)])
    case array([OrderedJSON])
    case string(String)
    /// A number as the reply wrote it, and its value.
    case number(String, Double)
    case bool(Bool)
    case null

    static func == (a: OrderedJSON, b: OrderedJSON) -> Bool {
        switch (a, b) {
        case let (.object(x), .object(y)): return x.map(\.key) == y.map(\.key) && x.map(\.value) == y.map(\.value)
        case let (.array(x), .array(y)): return x == y
        case let (.string(x), .string(y)): return x == y
        case let (.number(_, x), .number(_, y)): return x == y
        case let (.bool(x), .bool(y)): return x == y
        case (.null, .null): return true
        default: return false
        }
    }

    /// The value of `key` in an object (nil for anything else, or a missing key).
    subscript(key: String) -> OrderedJSON? {
        guard case let .object(members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    var array: [OrderedJSON]? {
        if case let .array(items) = self { return items }
        return nil
    }

    var isScalar: Bool {
        switch self {
        case .object, .array: return false
        default: return true
        }
    }

    /// Parses JSON text; nil when it is not JSON.
    static func parse(_ text: String) -> OrderedJSON? {
        // Strings are decoded by Foundation (escapes and all); the rest is walked here.
        var parser = Parser(bytes: Array(text.utf8))
        guard let value = try? parser.value() else { return nil }
        parser.skipSpace()
        return parser.index == parser.bytes.count ? value : nil
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        struct Malformed: Error {}

        mutating func skipSpace() {
            while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        }

        mutating func value() throws -> OrderedJSON {
            skipSpace()
            guard index < bytes.count else { throw Malformed() }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                index += 1
                var members: [(key: String, value: OrderedJSON)] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    return .object(members)
                }
                while true {
                    skipSpace()
                    let key = try string()
                    skipSpace()
                    try expect(UInt8(ascii: ":"))
                    members.append((key, try value()))
                    skipSpace()
                    if try separator(closing: UInt8(ascii: "}")) { return .object(members) }
                }
            case UInt8(ascii: "["):
                index += 1
                var items: [OrderedJSON] = []
                skipSpace()
                if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                }
                while true {
                    items.append(try value())
                    skipSpace()
                    if try separator(closing: UInt8(ascii: "]")) { return .array(items) }
                }
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"): try word("true"); return .bool(true)
            case UInt8(ascii: "f"): try word("false"); return .bool(false)
            case UInt8(ascii: "n"): try word("null"); return .null
            default:
                let start = index
                while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
                let text = String(decoding: bytes[start ..< index], as: UTF8.self)
                guard let number = Double(text) else { throw Malformed() }
                return .number(text, number)
            }
        }

        /// After a member or item: true at the closing bracket, false after a comma.
        mutating func separator(closing: UInt8) throws -> Bool {
            guard index < bytes.count else { throw Malformed() }
            let byte = bytes[index]
            index += 1
            if byte == closing { return true }
            guard byte == UInt8(ascii: ",") else { throw Malformed() }
            return false
        }

        mutating func expect(_ byte: UInt8) throws {
            guard index < bytes.count, bytes[index] == byte else { throw Malformed() }
            index += 1
        }

        mutating func word(_ text: String) throws {
            for byte in text.utf8 { try expect(byte) }
        }

        /// A string token, decoded by Foundation (escapes included).
        mutating func string() throws -> String {
            let start = index
            try expect(UInt8(ascii: "\""))
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            try expect(UInt8(ascii: "\""))
            let token = Data(bytes[start ..< index])
            guard let decoded = try JSONSerialization.jsonObject(with: token, options: [.fragmentsAllowed]) as? String else {
                throw Malformed()
            }
            return decoded
        }
    }

    /// Indented JSON in the reply's order.
    func pretty(indent: String = "") -> String {
        let inner = indent + "  "
        switch self {
        case let .object(members):
            if members.isEmpty { return "{}" }
            let lines = members.map { inner + Self.quoted($0.key) + ": " + $0.value.pretty(indent: inner) }
            return "{\n" + lines.joined(separator: ",\n") + "\n" + indent + "}"
        case let .array(items):
            if items.isEmpty { return "[]" }
            return "[\n" + items.map { inner + $0.pretty(indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case let .string(text): return Self.quoted(text)
        case let .number(text, _): return text
        case let .bool(flag): return flag ? "true" : "false"
        case .null: return "null"
        }
    }

    static func quoted(_ text: String) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: text, options: [.fragmentsAllowed, .withoutEscapingSlashes]) else {
            return "\"\(text)\""
        }
        return String(decoding: data, as: UTF8.self)
    }
}
