/// A value bound to a statement parameter, sent separately from the SQL text.
public enum PostgresValue: Sendable, Equatable {
    case null
    /// Sent in text format; PostgreSQL casts it to the parameter's type.
    case text(String)
    /// Sent in binary format (for `bytea`), never copied into the SQL text.
    case bytes([UInt8])
}

/// A Swift value that can be bound as a statement parameter.
public protocol PostgresBindable {
    var postgresValue: PostgresValue { get }
}

extension String: PostgresBindable {
    public var postgresValue: PostgresValue { .text(self) }
}
extension Substring: PostgresBindable {
    public var postgresValue: PostgresValue { .text(String(self)) }
}
extension Int: PostgresBindable {
    public var postgresValue: PostgresValue { .text(String(self)) }
}
extension Int32: PostgresBindable {
    public var postgresValue: PostgresValue { .text(String(self)) }
}
extension Int64: PostgresBindable {
    public var postgresValue: PostgresValue { .text(String(self)) }
}
extension Double: PostgresBindable {
    /// Swift prints the shortest representation that round-trips, which PostgreSQL parses exactly.
    public var postgresValue: PostgresValue {
        if isNaN { return .text("NaN") }
        if isInfinite { return .text(self < 0 ? "-Infinity" : "Infinity") }
        return .text(String(self))
    }
}
extension Bool: PostgresBindable {
    public var postgresValue: PostgresValue { .text(self ? "t" : "f") }
}
extension Array: PostgresBindable where Element == UInt8 {
    public var postgresValue: PostgresValue { .bytes(self) }
}
extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    public var postgresValue: PostgresValue { self?.postgresValue ?? .null }
}
extension PostgresValue: PostgresBindable {
    public var postgresValue: PostgresValue { self }
}

/// A parameterized statement. Interpolated values become `$1`, `$2`, … and travel as parameters:
/// `"SELECT * FROM pins WHERE id = \(id)"` can never inject SQL.
public struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The statement text with `$n` placeholders.
    public var text: String
    /// The parameters, in placeholder order.
    public var binds: [PostgresValue]

    public init(_ text: String, binds: [PostgresValue] = []) {
        self.text = text
        self.binds = binds
    }

    public init(stringLiteral value: String) {
        self.init(value)
    }

    public init(stringInterpolation: StringInterpolation) {
        self.init(stringInterpolation.text, binds: stringInterpolation.binds)
    }

    /// The text only: parameters are never printed, so logs cannot leak them.
    public var description: String { text }

    /// Appends another fragment, renumbering its placeholders.
    public mutating func append(_ other: SQL) {
        guard !other.binds.isEmpty else {
            text += other.text
            return
        }
        let offset = binds.count
        text += SQL.renumber(other.text, by: offset)
        binds += other.binds
    }

    static func renumber(_ text: String, by offset: Int) -> String {
        guard offset != 0 else { return text }
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count + 16)
        var inPlaceholder = false
        var number = 0
        var digits = 0
        func flush() {
            guard inPlaceholder else { return }
            result.append(UInt8(ascii: "$"))
            if digits > 0 { result.append(contentsOf: String(number + offset).utf8) }
            inPlaceholder = false
        }
        for byte in text.utf8 {
            if inPlaceholder, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                number = number &* 10 &+ Int(byte - UInt8(ascii: "0"))
                digits += 1
                continue
            }
            flush()
            if byte == UInt8(ascii: "$") {
                inPlaceholder = true
                number = 0
                digits = 0
            } else {
                result.append(byte)
            }
        }
        flush()
        return String(decoding: result, as: UTF8.self)
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        var binds: [PostgresValue] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// Binds a value as the next parameter.
        public mutating func appendInterpolation(_ value: some PostgresBindable) {
            binds.append(value.postgresValue)
            text += "$\(binds.count)"
        }

        /// Binds an optional value: nil becomes NULL.
        public mutating func appendInterpolation<Value: PostgresBindable>(_ value: Value?) {
            binds.append(value?.postgresValue ?? .null)
            text += "$\(binds.count)"
        }

        /// Inserts SQL text verbatim. Only for fragments written in code, never for input.
        public mutating func appendInterpolation(unescaped fragment: String) {
            text += fragment
        }
    }
}
