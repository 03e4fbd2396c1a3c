/// The PROXY protocol header (HAProxy's, versions 1 and 2) that a proxy in front of the line
/// port sends first on each connection, naming the client it carries. Pure: fed the first bytes
/// of a connection, ``parse(_:)`` says whether they hold a header, need more, or are bad.
///
/// - v1: one text line of at most 107 bytes, `PROXY TCP4 SRC DST SPORT DPORT\r\n` (or `TCP6`), or
///   `PROXY UNKNOWN …\r\n` (the proxy cannot say: the connection's own address stays).
/// - v2: a 16-byte binary head (the 12-byte signature, version and command, family and transport,
///   the length of what follows) and that many bytes (at most ``maximumV2Length``). `PROXY` over
///   `STREAM` with `AF_INET` or `AF_INET6` names the client; `LOCAL`, and any other family or
///   transport, keep the connection's own address. The TLVs after the addresses are skipped.
public enum ProxyHeader {
    /// The v1 header's longest line, `\r\n` included (the protocol's own bound).
    public static let maximumV1Length = 107
    /// The longest v2 address block and TLVs accepted after the 16-byte head.
    public static let maximumV2Length = 2048
    /// v2's signature.
    public static let v2Signature: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, 0x00, 0x0D, 0x0A, 0x51, 0x55, 0x49, 0x54, 0x0A]
    static let v1Signature = Array("PROXY ".utf8)

    /// What the first bytes of a connection are.
    public enum Parsed: Equatable, Sendable {
        /// They may still become a header: read more.
        case incomplete
        /// They do not begin with a header (the client sent none): the bytes are the protocol's.
        case none
        /// A header of `length` bytes (the protocol's bytes follow it), naming the client's
        /// address, or nil when it names none (`UNKNOWN`, `LOCAL`, another family).
        case header(client: IPAddress?, length: Int)
        /// A header that is malformed, or longer than its version allows.
        case invalid(String)
    }

    /// Reads a header from the start of `bytes`.
    public static func parse(_ bytes: some Collection<UInt8>) -> Parsed {
        let bytes = Array(bytes.prefix(16 + maximumV2Length))
        if bytes.isEmpty { return .incomplete }
        if bytes.starts(with: v1Signature) { return parseV1(bytes) }
        if bytes.starts(with: v2Signature) { return parseV2(bytes) }
        if v1Signature.starts(with: bytes) || v2Signature.starts(with: bytes) { return .incomplete }
        return .none
    }

    private static func parseV1(_ bytes: [UInt8]) -> Parsed {
        guard let newline = bytes.prefix(maximumV1Length).firstIndex(of: 0x0A) else {
            return bytes.count >= maximumV1Length ? .invalid("a v1 header longer than \(maximumV1Length) bytes") : .incomplete
        }
        guard newline > 0, bytes[newline - 1] == 0x0D else { return .invalid("a v1 header not ending in CRLF") }
        let line = bytes[..<(newline - 1)]
        guard line.allSatisfy({ (0x20 ... 0x7E).contains($0) }) else { return .invalid("a v1 header with a byte that is not printable ASCII") }
        let fields = line.split(separator: 0x20, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let length = newline + 1
        guard fields.count >= 2 else { return .invalid("a v1 header without a protocol") }
        if fields[1] == "UNKNOWN" { return .header(client: nil, length: length) }
        guard fields.count == 6 else { return .invalid("a v1 header with \(fields.count) fields, not 6") }
        let version4: Bool
        switch fields[1] {
        case "TCP4": version4 = true
        case "TCP6": version4 = false
        default: return .invalid("a v1 header with an unknown protocol")
        }
        guard let source = IPAddress(fields[2]), IPAddress(fields[3]) != nil,
              !fields[2].contains("%"), !fields[3].contains("%"),
              fields[2].contains(":") != version4, fields[3].contains(":") != version4
        else { return .invalid("a v1 header whose addresses are not \(version4 ? "IPv4" : "IPv6")") }
        guard isPort(fields[4]), isPort(fields[5]) else { return .invalid("a v1 header with a bad port") }
        return .header(client: source, length: length)
    }

    /// A decimal port, 0…65535, without leading zeros.
    private static func isPort(_ text: String) -> Bool {
        guard (1 ... 5).contains(text.utf8.count), text.utf8.allSatisfy({ (48 ... 57).contains($0) }),
              text.utf8.count == 1 || text.utf8.first != 48, let value = Int(text)
        else { return false }
        return value <= 65535
    }

    private static func parseV2(_ bytes: [UInt8]) -> Parsed {
        guard bytes.count >= 16 else { return .incomplete }
        let version = bytes[12] >> 4
        let command = bytes[12] & 0x0F
        let family = bytes[13] >> 4
        let transport = bytes[13] & 0x0F
        let length = Int(bytes[14]) << 8 | Int(bytes[15])
        guard version == 2 else { return .invalid("a v2 header of version \(version)") }
        guard command <= 1 else { return .invalid("a v2 header with an unknown command") }
        guard family <= 3, transport <= 2 else { return .invalid("a v2 header with an unknown family or transport") }
        guard length <= maximumV2Length else { return .invalid("a v2 header longer than \(16 + maximumV2Length) bytes") }
        guard bytes.count >= 16 + length else { return .incomplete }
        let total = 16 + length
        // LOCAL: the proxy's own connection (a health check); anything but TCP over IPv4 or IPv6
        // names no client address this server can use.
        guard command == 1, transport == 1, family == 1 || family == 2 else { return .header(client: nil, length: total) }
        let addressBytes = family == 1 ? 4 : 16
        guard length >= 2 * addressBytes + 4 else { return .invalid("a v2 header too short for its addresses") }
        return .header(client: IPAddress(bytes: bytes[16 ..< 16 + addressBytes]), length: total)
    }
}
