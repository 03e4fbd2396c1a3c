/// One token of a request line.
public struct Token: Sendable, Equatable, CustomStringConvertible {
    /// The token's text; for a quoted token, the decoded string.
    public var text: String
    /// Whether it was written as a JSON string literal.
    public var quoted: Bool

    public init(_ text: String, quoted: Bool = false) {
        self.text = text
        self.quoted = quoted
    }

    public var description: String { quoted ? JSON.string(text).encoded : text }
}

/// Splits a request line into tokens: runs of characters separated by spaces or tabs, or JSON
/// string literals (RFC 8259 escapes, `\uXXXX` and surrogate pairs included).
public enum Tokenizer {
    /// The tokens of `line` (without its line ending); `BAD_REQUEST` for a malformed quoted token.
    /// Stops after `maximumTokens` tokens: a caller that can use no more than that learns that
    /// there were more without the work of splitting the rest (an 8 MiB line could hold millions).
    public static func tokenize(_ line: String, maximumTokens: Int = .max) throws(CommandError) -> [Token] {
        var tokens: [Token] = []
        // Room for every command's usual arguments up front, instead of growing 1, 2, 4, 8.
        tokens.reserveCapacity(min(maximumTokens, 16))
        // Read in place: no copy of the line.
        let bytes = line.utf8.span
        var index = 0
        while index < bytes.count, tokens.count < maximumTokens {
            let byte = bytes[index]
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") {
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\"") {
                let (text, end) = try readQuoted(bytes, from: index)
                tokens.append(Token(text, quoted: true))
                index = end
                if index < bytes.count, bytes[index] != UInt8(ascii: " "), bytes[index] != UInt8(ascii: "\t") {
                    throw .badRequest("a quoted token must be followed by a space or the end of the line")
                }
                continue
            }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: " "), bytes[index] != UInt8(ascii: "\t") {
                index += 1
            }
            let utf8 = line.utf8
            let first = utf8.index(utf8.startIndex, offsetBy: start)
            tokens.append(Token(String(decoding: utf8[first ..< utf8.index(first, offsetBy: index - start)], as: UTF8.self)))
        }
        return tokens
    }

    /// Reads the JSON string literal starting at `start` (a `"`); returns its text and the index after it.
    static func readQuoted(_ bytes: Span<UInt8>, from start: Int) throws(CommandError) -> (String, Int) {
        var output: [UInt8] = []
        var index = start + 1
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                return (String(decoding: output, as: UTF8.self), index + 1)
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                switch bytes[index] {
                case UInt8(ascii: "\""): output.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): output.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"):
                    let (scalar, next) = try readUnicodeEscape(bytes, at: index + 1)
                    output.append(contentsOf: Array(String(Character(scalar)).utf8))
                    index = next
                    continue
                default:
                    throw .badRequest("invalid escape in a quoted token")
                }
                index += 1
            case 0 ..< 0x20:
                throw .badRequest("a control character must be escaped in a quoted token")
            default:
                output.append(byte)
                index += 1
            }
        }
        throw .badRequest("unterminated quoted token")
    }

    /// Reads `XXXX` (and a following `\uXXXX` low surrogate when `XXXX` is a high one).
    static func readUnicodeEscape(_ bytes: Span<UInt8>, at index: Int) throws(CommandError) -> (Unicode.Scalar, Int) {
        let first = try readHex4(bytes, at: index)
        var next = index + 4
        if (0xD800 ... 0xDBFF).contains(first) {
            guard next + 1 < bytes.count, bytes[next] == UInt8(ascii: "\\"), bytes[next + 1] == UInt8(ascii: "u") else {
                throw .badRequest("unpaired surrogate in a quoted token")
            }
            let second = try readHex4(bytes, at: next + 2)
            guard (0xDC00 ... 0xDFFF).contains(second) else {
                throw .badRequest("unpaired surrogate in a quoted token")
            }
            next += 6
            let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            return (Unicode.Scalar(value)!, next)
        }
        guard let scalar = Unicode.Scalar(first) else {
            throw .badRequest("unpaired surrogate in a quoted token")
        }
        return (scalar, next)
    }

    static func readHex4(_ bytes: Span<UInt8>, at index: Int) throws(CommandError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw .badRequest("invalid \\u escape in a quoted token") }
        var value: UInt32 = 0
        for offset in index ..< index + 4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0") ... UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a") ... UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A") ... UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw .badRequest("invalid \\u escape in a quoted token")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}

/// The contract's number grammar: `-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?`, and nothing else
/// (no `nan`, `inf`, hex, `+1`, `1.`, `.5` or empty).
public enum NumberGrammar {
    /// Whether `text` is a number in the grammar.
    public static func matches(_ text: String) -> Bool {
        scan(text) != .invalid
    }

    /// The value of a number in the grammar, or nil (also for values too large to be finite).
    public static func double(_ text: String) -> Double? {
        switch scan(text) {
        case .invalid: return nil
        case .exact(let value): return value
        case .needsLibrary:
            guard let value = Double(text), value.isFinite else { return nil }
            return value
        }
    }

    enum Scan: Equatable {
        case invalid
        /// The correctly rounded value, computed here.
        case exact(Double)
        /// In the grammar, but with too many digits or too large an exponent for the fast path.
        case needsLibrary
    }

    /// Checks the grammar and, for the usual short numbers, computes the value in the same pass:
    /// with at most 15 significant digits the digits are exact as a `Double`, and so is 10^k for
    /// k ≤ 22, so one multiplication or division rounds correctly (Clinger's fast path).
    static func scan(_ text: String) -> Scan {
        scan(text.utf8.span)
    }

    private static func scan(_ bytes: Span<UInt8>) -> Scan {
        var index = 0
        let count = bytes.count
        @inline(__always) func digit() -> UInt64? {
            guard index < count else { return nil }
            let value = bytes[index] &- UInt8(ascii: "0")
            return value < 10 ? UInt64(value) : nil
        }
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var fitsFastPath = true
        var scale = 0
        @inline(__always) func addDigit(_ value: UInt64) {
            if mantissa == 0, value == 0 { return }
            if significantDigits == 15 {
                fitsFastPath = false
                return
            }
            mantissa = mantissa * 10 + value
            significantDigits += 1
        }
        let negative = index < count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard digit() != nil else { return .invalid }
        while let value = digit() {
            addDigit(value)
            index += 1
        }
        if index < count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digit() != nil else { return .invalid }
            while let value = digit() {
                addDigit(value)
                scale += 1
                index += 1
            }
        }
        var exponent = 0
        if index < count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var exponentNegative = false
            if index < count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            guard digit() != nil else { return .invalid }
            while let value = digit() {
                if exponent < 100_000 { exponent = exponent * 10 + Int(value) }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        guard index == count else { return .invalid }
        let power = exponent - scale
        guard fitsFastPath, (-22 ... 22).contains(power) else { return .needsLibrary }
        let magnitude = power < 0 ? Double(mantissa) / powersOfTen[-power] : Double(mantissa) * powersOfTen[power]
        return .exact(negative ? -magnitude : magnitude)
    }

    /// 10^0 … 10^22, each exact as a `Double`.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
