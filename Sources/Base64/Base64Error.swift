/// Why `Base64.decode` refused its input.
///
/// Offsets are zero-based byte offsets into the input (UTF-8 bytes for strings).
/// ``description`` is a single line without CR/LF, suitable for `ERR BAD_ARGUMENT <message>`.
public enum Base64Error: Error, Hashable, Sendable, CustomStringConvertible {
    /// The input length is not a multiple of 4 (for example, missing padding).
    case invalidLength(Int)
    /// A byte at `offset` is neither in the standard alphabet `A-Z a-z 0-9 + /` nor `=`.
    case invalidCharacter(UInt8, offset: Int)
    /// The `=` at `offset` is misplaced: padding is one or two `=`, only at the very end.
    case misplacedPadding(offset: Int)
    /// The character at `offset` (the last before padding) has non-zero unused low bits,
    /// so re-encoding would not reproduce the input.
    case nonCanonical(offset: Int)
    /// The decoded data would be longer than `limit` bytes.
    case tooLarge(limit: Int)

    /// A one-line, human-readable message.
    public var description: String {
        switch self {
        case .invalidLength(let length):
            return "invalid base64: length \(length) is not a multiple of 4"
        case .invalidCharacter(let byte, let offset):
            return "invalid base64: \(Self.describe(byte)) at offset \(offset) is not in the standard alphabet"
        case .misplacedPadding(let offset):
            return "invalid base64: misplaced padding '=' at offset \(offset) (only one or two '=' at the very end)"
        case .nonCanonical(let offset):
            return "invalid base64: non-canonical encoding, unused bits of the character at offset \(offset) are not zero"
        case .tooLarge(let limit):
            return "base64 data decodes to more than \(limit) bytes"
        }
    }

    /// `character '*' (0x2A)` for printable ASCII, `byte 0x0A` otherwise: never a raw control byte.
    private static func describe(_ byte: UInt8) -> String {
        let hexDigits = Array("0123456789ABCDEF".utf8)
        let hex = "0x" + String(decoding: [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]], as: UTF8.self)
        if byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "'") {
            return "character '\(Character(Unicode.Scalar(byte)))' (\(hex))"
        }
        return "byte \(hex)"
    }
}
