/// Why ``QRCode/encode(_:correction:)`` made no QR code.
///
/// ``description`` is one line, without the text that was given.
public enum QRCodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text is empty.
    case empty
    /// The text, `byteCount` UTF-8 bytes, does not fit in the largest QR code (version 40) at
    /// `correction`; a lower correction level may hold it.
    case tooLong(byteCount: Int, correction: QRCode.Correction)
    /// libqrencode could not allocate memory (ENOMEM).
    case outOfMemory
    /// libqrencode refused its input as invalid (EINVAL).
    case invalidInput
    /// libqrencode failed with another `errno`.
    case failed(errno: Int32)

    /// A one-line, human-readable message.
    public var description: String {
        switch self {
        case .empty:
            return "cannot make a QR code of empty text"
        case .tooLong(let byteCount, let correction):
            return "text of \(byteCount) bytes is too long for a QR code at \(correction) error correction "
                + "(at most \(correction.byteCapacity) bytes of arbitrary text)"
        case .outOfMemory:
            return "libqrencode ran out of memory"
        case .invalidInput:
            return "libqrencode refused the input as invalid"
        case .failed(let errno):
            return "libqrencode failed (errno \(errno))"
        }
    }
}
