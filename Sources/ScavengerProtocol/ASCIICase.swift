extension StringProtocol {
    /// The text with ASCII letters upper-cased and everything else left as it is. Command names
    /// and keywords are matched this way: Unicode case mapping would let `quıt` (dotless ı) or
    /// `ſtatus` (long s) stand for `QUIT` and `STATUS`. Text already upper-case (as clients
    /// usually send commands) is returned without a copy.
    var asciiUppercased: String {
        guard utf8.contains(where: { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") }) else { return String(self) }
        return String(decoding: utf8.map { $0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z") ? $0 - 32 : $0 }, as: UTF8.self)
    }

    /// The text with ASCII letters lower-cased and everything else left as it is.
    var asciiLowercased: String {
        guard utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return String(self) }
        return String(decoding: utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
