/// A JSON value (RFC 8259) with object keys kept in the order they were given.
public enum JSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])
    /// JSON already encoded (by a writer that produces valid, single-line JSON).
    case raw([UInt8])

    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.double(let a), .double(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        case (.raw(let a), .raw(let b)): return a == b
        default: return false
        }
    }

    /// The compact encoding, on one line: no raw newline can appear in it.
    public var encoded: String {
        var bytes: [UInt8] = []
        encode(into: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the compact encoding to `bytes`.
    public func encode(into bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): bytes.append(contentsOf: String(value).utf8)
        case .double(let value): JSON.appendNumber(value, to: &bytes)
        case .string(let value): JSON.encodeString(value, into: &bytes)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                value.encode(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .raw(let encoded):
            bytes.append(contentsOf: encoded)
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, (key, value)) in members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSON.encodeString(key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                value.encode(into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Appends a number as ``format(_:)`` writes it; `null` for NaN and infinity, which JSON lacks.
    static func appendNumber(_ value: Double, to bytes: inout [UInt8]) {
        if value.isFinite {
            bytes.append(contentsOf: format(value).utf8)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
    }

    /// Integral values print without a fraction (`12`), others in Swift's shortest round-trip form.
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 {
            return String(Int(value))
        }
        return String(value)
    }

    static let hexDigits = Array("0123456789abcdef".utf8)

    /// Writes a JSON string literal: quotes, backslashes and control characters escaped. A
    /// string with nothing to escape (the usual case) is copied whole; otherwise runs of bytes
    /// that need no escape are.
    public static func encodeString(_ value: String, into bytes: inout [UInt8]) {
        encodeString(utf8: value.utf8, into: &bytes)
    }

    /// ``encodeString(_:into:)`` for text given as UTF-8 bytes.
    public static func encodeString(utf8: some Collection<UInt8>, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        guard let first = utf8.firstIndex(where: needsEscape) else {
            bytes.append(contentsOf: utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        var runStart = utf8.startIndex
        var index = first
        while index != utf8.endIndex {
            let byte = utf8[index]
            if !needsEscape(byte) {
                utf8.formIndex(after: &index)
                continue
            }
            bytes.append(contentsOf: utf8[runStart ..< index])
            appendEscape(byte, to: &bytes)
            utf8.formIndex(after: &index)
            runStart = index
        }
        bytes.append(contentsOf: utf8[runStart ..< index])
        bytes.append(UInt8(ascii: "\""))
    }

    @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F
    }

    static func appendEscape(_ byte: UInt8, to bytes: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case UInt8(ascii: "\n"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case UInt8(ascii: "\r"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case UInt8(ascii: "\t"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
            bytes.append(hexDigits[Int(byte >> 4)])
            bytes.append(hexDigits[Int(byte & 0xF)])
        }
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(elements) }
}

extension JSON {
    /// `.string(value)` or `.null`.
    public static func optional(_ value: String?) -> JSON {
        value.map(JSON.string) ?? .null
    }
}
