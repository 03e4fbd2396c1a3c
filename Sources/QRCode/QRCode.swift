internal import CQREncode

/// A QR code symbol (ISO/IEC 18004 Model 2), encoded by libqrencode: a square of dark and light
/// modules, without its quiet zone.
///
/// ```swift
/// let code = try QRCode.encode("https://example.org/hunt/42", correction: .medium)
/// let page = code.svg(title: "Stop 3: the old mill")
/// ```
///
/// The value owns a copy of the modules: libqrencode's symbol is freed before ``encode(_:correction:)``
/// returns. libqrencode guards its shared tables with a mutex, so codes may be encoded from any
/// thread at once.
public struct QRCode: Sendable, Hashable {
    /// How much of a damaged or dirty symbol can be recovered, at the cost of capacity.
    public enum Correction: Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Level L: about 7% of the codewords can be restored.
        case low
        /// Level M: about 15% of the codewords can be restored.
        case medium
        /// Level Q: about 25% of the codewords can be restored.
        case quartile
        /// Level H: about 30% of the codewords can be restored.
        case high

        /// The most bytes of arbitrary (8-bit) text the largest QR code, version 40, holds at this
        /// level: 2,953, 2,331, 1,663 and 1,273 from low to high. Text of digits or upper-case
        /// letters packs tighter and may be longer.
        public var byteCapacity: Int {
            switch self {
            case .low: 2953
            case .medium: 2331
            case .quartile: 1663
            case .high: 1273
            }
        }

        /// "low", "medium", "quartile" or "high".
        public var description: String {
            switch self {
            case .low: "low"
            case .medium: "medium"
            case .quartile: "quartile"
            case .high: "high"
            }
        }

        fileprivate var level: QRecLevel {
            switch self {
            case .low: QR_ECLEVEL_L
            case .medium: QR_ECLEVEL_M
            case .quartile: QR_ECLEVEL_Q
            case .high: QR_ECLEVEL_H
            }
        }
    }

    /// The most bytes any QR code holds (7,089 digits at version 40, low correction): longer text
    /// is refused before libqrencode sees it.
    static let maximumByteCount = 7089

    /// The symbol's version, 1 to 40: the smallest that holds the text at the chosen correction.
    public let version: Int
    /// The number of modules per side, `17 + 4 × version` (21 for version 1, 177 for version 40),
    /// without the quiet zone.
    public let size: Int
    /// The error correction level the symbol was encoded with.
    public let correction: Correction
    /// Row-major, `size × size`: `true` for a dark module.
    private let modules: [Bool]

    /// Whether the module in column `x` and row `y` is dark; `(0, 0)` is the top-left corner.
    ///
    /// - Precondition: `0 ≤ x < size` and `0 ≤ y < size`.
    public func isDark(x: Int, y: Int) -> Bool {
        precondition(x >= 0 && x < size && y >= 0 && y < size, "module (\(x), \(y)) outside a \(size)×\(size) symbol")
        return modules[y * size + x]
    }

    /// Encodes `text` (its UTF-8 bytes) in the smallest QR code that holds it at `correction`.
    ///
    /// Runs of digits or upper-case letters are packed in numeric or alphanumeric mode where that
    /// is shorter, the rest in 8-bit mode, case preserved. Text with a NUL character is encoded
    /// wholly in 8-bit mode. No ECI header is written: readers take 8-bit data as UTF-8 or guess.
    /// - Throws: ``QRCodeError/empty`` for empty text; ``QRCodeError/tooLong(byteCount:correction:)``
    ///   when no version holds it; ``QRCodeError/outOfMemory``, ``QRCodeError/invalidInput`` or
    ///   ``QRCodeError/failed(errno:)`` when libqrencode fails.
    public static func encode(_ text: String, correction: Correction = .medium) throws(QRCodeError) -> QRCode {
        let byteCount = text.utf8.count
        guard byteCount > 0 else { throw .empty }
        // Keeps the C `int` size in range and spares libqrencode text no symbol can hold.
        guard byteCount <= maximumByteCount else { throw .tooLong(byteCount: byteCount, correction: correction) }

        var error: Int32 = 0
        let symbol: UnsafeMutablePointer<QRcode>?
        if text.utf8.contains(0) {
            // A C string would end at the NUL: give the bytes with their length.
            let bytes = Array(text.utf8)
            symbol = bytes.withUnsafeBufferPointer { buffer in
                cqrencode_encode_data(Int32(buffer.count), buffer.baseAddress, correction.level, &error)
            }
        } else {
            symbol = text.withCString { string in
                cqrencode_encode_string(string, correction.level, &error)
            }
        }
        guard let symbol else {
            switch error {
            case CQRENCODE_ERANGE: throw .tooLong(byteCount: byteCount, correction: correction)
            case CQRENCODE_ENOMEM: throw .outOfMemory
            case CQRENCODE_EINVAL: throw .invalidInput
            default: throw .failed(errno: error)
            }
        }
        defer { QRcode_free(symbol) }
        return QRCode(symbol.pointee, correction: correction)
    }

    /// Copies the modules out of libqrencode's symbol (which the caller frees).
    private init(_ symbol: QRcode, correction: Correction) {
        let version = Int(symbol.version)
        let size = Int(symbol.width)
        precondition((1...40).contains(version) && size == 17 + 4 * version && symbol.data != nil,
                     "libqrencode returned a malformed symbol (version \(version), width \(size))")
        let data = UnsafeBufferPointer(start: symbol.data, count: size * size)
        self.version = version
        self.size = size
        self.correction = correction
        // Bit 0 of each byte is the colour; the others say which part of the symbol it belongs to.
        self.modules = data.map { $0 & 1 != 0 }
    }
}
