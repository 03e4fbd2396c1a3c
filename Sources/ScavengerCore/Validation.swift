/// A value that breaks a rule of the contract; the message says which rule.
public struct ValidationError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The contract's rules for names, emails, passwords and texts.
public enum Validation {
    /// 3–32 of `A-Z a-z 0-9 _ . -`.
    public static func username(_ name: String) throws(ValidationError) {
        let bytes = Array(name.utf8)
        guard (3 ... 32).contains(bytes.count) else {
            throw ValidationError("username must be 3 to 32 characters long")
        }
        for byte in bytes where !isUsernameByte(byte) {
            throw ValidationError("username may contain only letters A-Z a-z, digits, '_', '.' and '-'")
        }
    }

    /// A write's `REQUEST` key: 8–64 of `A-Z a-z 0-9 _ -`.
    public static func requestKey(_ key: String) throws(ValidationError) {
        let bytes = Array(key.utf8)
        guard (8 ... 64).contains(bytes.count) else {
            throw ValidationError("REQUEST key must be 8 to 64 characters long")
        }
        for byte in bytes where byte == UInt8(ascii: ".") || !isUsernameByte(byte) {
            throw ValidationError("REQUEST key may contain only letters A-Z a-z, digits, '_' and '-'")
        }
    }

    static func isUsernameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
             UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// One `@` with something on each side and a dot in the domain; no spaces or control
    /// characters; at most 254 characters.
    public static func email(_ email: String) throws(ValidationError) {
        let scalars = Array(email.unicodeScalars)
        guard (3 ... 254).contains(scalars.count) else {
            throw ValidationError("email must be 3 to 254 characters long")
        }
        guard !scalars.contains(where: { $0.properties.isWhitespace || isControl($0) }) else {
            throw ValidationError("email must not contain spaces or control characters")
        }
        let parts = email.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."), !parts[1].hasPrefix("."),
              !parts[1].hasSuffix(".")
        else {
            throw ValidationError("email must look like name@example.org")
        }
    }

    /// Longest password accepted, in bytes: hashing cost must stay bounded.
    public static let maximumPasswordBytes = 1024

    /// At least 8 characters with at least one letter and one digit.
    public static func password(_ password: String) throws(ValidationError) {
        guard password.count >= 8 else {
            throw ValidationError("password must be at least 8 characters long")
        }
        guard password.utf8.count <= maximumPasswordBytes else {
            throw ValidationError("password must be at most \(maximumPasswordBytes) bytes long")
        }
        guard password.unicodeScalars.contains(where: { $0.properties.isAlphabetic }) else {
            throw ValidationError("password must contain at least one letter")
        }
        guard password.unicodeScalars.contains(where: { $0.properties.numericType == .decimal }) else {
            throw ValidationError("password must contain at least one digit")
        }
    }

    /// Whether `scalar` is in Unicode's general category Cc (control), which is exactly
    /// U+0000–U+001F and U+007F–U+009F; a range check, not a property-table lookup.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F ... 0x9F).contains(scalar.value)
    }

    /// Longest pin, caption or reply text, in characters (Unicode code points).
    public static let maximumTextLength = 500

    /// Whether `scalar` is a bidirectional embedding, override or isolate control (U+202A–U+202E,
    /// U+2066–U+2069), which can make a text read differently from what it holds. The marks
    /// U+200E and U+200F are not.
    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A ... 0x202E).contains(scalar.value) || (0x2066 ... 0x2069).contains(scalar.value)
    }

    /// 1–500 characters (0–500 when `allowEmpty`), no control characters but newline and tab,
    /// and no bidirectional embedding, override or isolate controls.
    public static func text(_ text: String, name: String = "text", allowEmpty: Bool = false) throws(ValidationError) {
        try self.text(text, name: name, length: (allowEmpty ? 0 : 1) ... maximumTextLength)
    }
}

extension Validation {
    /// A region name: 1–64 of `a-z 0-9 -`.
    public static func regionName(_ name: String) throws(ValidationError) {
        let bytes = Array(name.utf8)
        guard (1 ... 64).contains(bytes.count),
              bytes.allSatisfy({ (UInt8(ascii: "a") ... UInt8(ascii: "z")).contains($0)
                  || (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "-") })
        else {
            throw ValidationError("a region name is 1 to 64 of a-z, 0-9 and '-'")
        }
    }
}
