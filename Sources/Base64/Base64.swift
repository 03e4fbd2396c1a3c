internal import CB64

/// Strict standard base64 (RFC 4648 §4: alphabet `A-Z a-z 0-9 + /`, `=` padding, no line breaks),
/// encoded and decoded by libb64.
///
/// libb64 alone is unsafe for a line protocol: its encoder inserts `\n` every 72 characters and
/// after the last, and its decoder skips any invalid character and needs no padding. Here the
/// output never contains a line break, and input is validated completely before libb64 sees it,
/// so that every accepted input is exactly what ``encode(_:)`` would produce for its bytes.
public enum Base64 {
    /// The largest decoded length accepted: libb64 takes lengths as C `int`, so the input may be
    /// at most `Int32.max` characters, which decode to at most this many bytes.
    public static let decodedLengthLimit: Int = Int(Int32.max) / 4 * 3

    /// The number of characters ``encode(_:)`` produces for `byteCount` bytes: `4 * ⌈byteCount / 3⌉`.
    public static func encodedLength(ofByteCount byteCount: Int) -> Int {
        precondition(byteCount >= 0, "negative byte count")
        return byteCount / 3 * 4 + (byteCount % 3 == 0 ? 0 : 4)
    }

    /// The most bytes that `encodedLength` characters can decode to: `encodedLength / 4 * 3`
    /// (exact without padding, one or two more than the real length with `=` or `==`).
    public static func maximumDecodedLength(ofEncodedLength encodedLength: Int) -> Int {
        precondition(encodedLength >= 0, "negative encoded length")
        return encodedLength / 4 * 3
    }

    // MARK: Encoding

    /// Encodes `bytes` as padded standard base64, without any line break.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        withContiguousBytes(bytes) { input in
            let length = encodedLength(ofByteCount: input.count)
            // One spare byte for the line break libb64 writes after the last character.
            return String(unsafeUninitializedCapacity: length + 1) { output in
                encode(input, into: output)
            }
        }
    }

    /// Encodes `bytes` as padded standard base64 and returns the ASCII bytes, without any line
    /// break: ready to be written to a network buffer.
    public static func encodeToASCII(_ bytes: some Collection<UInt8>) -> [UInt8] {
        withContiguousBytes(bytes) { input in
            let length = encodedLength(ofByteCount: input.count)
            return [UInt8](unsafeUninitializedCapacity: length + 1) { output, count in
                count = encode(input, into: output)
            }
        }
    }

    /// libb64 emits 72 characters (18 groups of 4) and then a line break: feed it 54 bytes at a
    /// time, each with a fresh state, so that the only line break in a chunk is its last byte.
    private static let bytesPerChunk = 54
    private static let charactersPerChunk = 72
    private static let newline = CChar(UInt8(ascii: "\n"))

    /// Encodes `input` into `output`, which must hold `encodedLength(ofByteCount: input.count) + 1`
    /// bytes, and returns the encoded length (the spare byte may hold a line break).
    private static func encode(
        _ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>
    ) -> Int {
        let length = encodedLength(ofByteCount: input.count)
        precondition(output.count > length, "output buffer too small")
        guard length > 0 else { return 0 }
        return input.withMemoryRebound(to: CChar.self) { source in
            output.withMemoryRebound(to: CChar.self) { destination in
                let source = source.baseAddress!
                let destination = destination.baseAddress!
                var state = base64_encodestate()
                var read = 0
                var written = 0
                while input.count - read >= bytesPerChunk {
                    base64_init_encodestate(&state)
                    let count = Int(base64_encode_block(
                        source + read, Int32(bytesPerChunk), destination + written, &state))
                    // The line break after the 72 characters is overwritten by the next chunk,
                    // or left in the spare byte.
                    precondition(
                        count == charactersPerChunk
                            || (count == charactersPerChunk + 1
                                && destination[written + charactersPerChunk] == newline),
                        "libb64 encoder output is not the expected 72 characters per 54 bytes")
                    read += bytesPerChunk
                    written += charactersPerChunk
                }
                let rest = input.count - read
                if rest > 0 {
                    base64_init_encodestate(&state)
                    var count = Int(base64_encode_block(
                        source + read, Int32(rest), destination + written, &state))
                    count += Int(base64_encode_blockend(destination + written + count, &state))
                    // blockend adds the padding and then a line break, left in the spare byte.
                    if count > 0, destination[written + count - 1] == newline { count -= 1 }
                    written += count
                }
                precondition(written == length, "libb64 encoder output has an unexpected length")
                return written
            }
        }
    }

    // MARK: Decoding

    /// Decodes strict, canonical, padded standard base64 text.
    ///
    /// The text must be a multiple of 4 characters from `A-Z a-z 0-9 + /`, followed only at the
    /// very end by zero, one or two `=`, with zero unused bits in the last character before the
    /// padding. No whitespace or line break is accepted. Empty text decodes to empty bytes.
    /// - Parameter maximumDecodedLength: refuse (``Base64Error/tooLarge(limit:)``) text that would
    ///   decode to more bytes; text that is longer than any valid encoding of that many bytes is
    ///   refused before it is read. Capped at ``decodedLengthLimit``.
    public static func decode(
        _ text: some StringProtocol, maximumDecodedLength: Int = decodedLengthLimit
    ) throws(Base64Error) -> [UInt8] {
        try decode(text.utf8, maximumDecodedLength: maximumDecodedLength)
    }

    /// Decodes strict, canonical, padded standard base64 given as ASCII bytes
    /// (for example `[UInt8]`, `ArraySlice<UInt8>` or `Substring.UTF8View`).
    ///
    /// Same rules as the `String` overload of `decode`.
    public static func decode(
        _ text: some Collection<UInt8>, maximumDecodedLength: Int = decodedLengthLimit
    ) throws(Base64Error) -> [UInt8] {
        precondition(maximumDecodedLength >= 0, "negative maximumDecodedLength")
        let limit = min(maximumDecodedLength, decodedLengthLimit)
        // Before touching the bytes: too long to be a valid encoding of at most `limit` bytes.
        // This also keeps every length given to libb64 within Int32.
        if text.count > encodedLength(ofByteCount: limit) {
            throw .tooLarge(limit: limit)
        }
        return try withContiguousBytes(text) { decode($0, limit: limit) }.get()
    }

    /// Decoding table: the 6-bit value of each alphabet byte, `padding` for `=`, `invalid` otherwise.
    private static let padding: UInt8 = 0x40
    private static let invalid: UInt8 = 0x80
    private static let decodingTable: [UInt8] = {
        var table = [UInt8](repeating: invalid, count: 256)
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
        for (value, byte) in alphabet.utf8.enumerated() {
            table[Int(byte)] = UInt8(value)
        }
        table[Int(UInt8(ascii: "="))] = padding
        return table
    }()

    private static func decode(_ input: UnsafeBufferPointer<UInt8>, limit: Int) -> Result<[UInt8], Base64Error> {
        let length = input.count
        if length == 0 { return .success([]) }
        let paddingCount: Int
        switch validate(input) {
        case .success(let count): paddingCount = count
        case .failure(let error): return .failure(error)
        }
        let decodedLength = length / 4 * 3 - paddingCount
        if decodedLength > limit { return .failure(.tooLarge(limit: limit)) }
        // libb64 writes one byte past the count it returns (and reads it back): room for 3 more.
        let bytes = [UInt8](unsafeUninitializedCapacity: length / 4 * 3 + 3) { output, count in
            let decoded = input.withMemoryRebound(to: CChar.self) { source in
                output.withMemoryRebound(to: CChar.self) { destination in
                    var state = base64_decodestate()
                    base64_init_decodestate(&state)
                    return Int(base64_decode_block(
                        source.baseAddress!, Int32(length), destination.baseAddress!, &state))
                }
            }
            precondition(decoded == decodedLength, "libb64 decoded an unexpected number of bytes")
            count = decoded
        }
        return .success(bytes)
    }

    /// Checks alphabet, padding, length and canonical trailing bits in one pass; returns the
    /// number of `=`. Errors are those of the first offending byte, then length, then trailing bits.
    private static func validate(_ input: UnsafeBufferPointer<UInt8>) -> Result<Int, Base64Error> {
        decodingTable.withUnsafeBufferPointer { table in
            let length = input.count
            var index = 0
            // Eight bytes at a time while they are all alphabet symbols (values below 64).
            while length - index >= 8 {
                let any = table[Int(input[index])] | table[Int(input[index + 1])]
                    | table[Int(input[index + 2])] | table[Int(input[index + 3])]
                    | table[Int(input[index + 4])] | table[Int(input[index + 5])]
                    | table[Int(input[index + 6])] | table[Int(input[index + 7])]
                if any >= padding { break }
                index += 8
            }
            while index < length, table[Int(input[index])] < padding {
                index += 1
            }
            let symbolCount = index
            // Whatever follows the symbols must be one or two `=` up to the end.
            while index < length {
                let value = table[Int(input[index])]
                if value == invalid {
                    return .failure(.invalidCharacter(input[index], offset: index))
                }
                if value != padding {
                    return .failure(.misplacedPadding(offset: symbolCount))
                }
                index += 1
            }
            let paddingCount = length - symbolCount
            if paddingCount > 2 {
                return .failure(.misplacedPadding(offset: symbolCount))
            }
            if length % 4 != 0 {
                return .failure(.invalidLength(length))
            }
            // With `==` the last symbol carries 2 bits of data, with `=` 4: the rest must be zero.
            if paddingCount > 0 {
                let unusedBits: UInt8 = paddingCount == 2 ? 0x0F : 0x03
                if table[Int(input[symbolCount - 1])] & unusedBits != 0 {
                    return .failure(.nonCanonical(offset: symbolCount - 1))
                }
            }
            return .success(paddingCount)
        }
    }

    // MARK: Helpers

    /// Runs `body` on the contiguous bytes of `bytes`, copying them only if they are not contiguous.
    @inline(__always)
    private static func withContiguousBytes<R>(
        _ bytes: some Collection<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R
    ) -> R {
        if let result = bytes.withContiguousStorageIfAvailable(body) {
            return result
        }
        return Array(bytes).withUnsafeBufferPointer(body)
    }
}
