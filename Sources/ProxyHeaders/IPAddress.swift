/// An IPv4 or IPv6 address as its bytes (4 or 16), read strictly from text and written in the
/// usual form (`203.0.113.7`; RFC 5952 for IPv6, `2001:db8::1`). An IPv4-mapped IPv6 address
/// (`::ffff:a.b.c.d`) is read as the IPv4 address it maps, so one client is one address whether
/// it came over IPv4 or a dual-stack socket.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    /// 4 bytes for IPv4, 16 for IPv6, in network order.
    public let bytes: [UInt8]

    /// Whether it is an IPv4 address.
    public var isIPv4: Bool { bytes.count == 4 }

    /// An address from its 4 or 16 bytes; nil for any other count. Mapped IPv4 becomes IPv4.
    public init?(bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        switch bytes.count {
        case 4: self.bytes = bytes
        case 16:
            let mapped = bytes[0 ..< 10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
            self.bytes = mapped ? Array(bytes[12 ..< 16]) : bytes
        default: return nil
        }
    }

    /// An address from text: dotted IPv4 (four decimal bytes, no leading zeros), or IPv6 with
    /// `::` and a trailing dotted IPv4 part allowed. A zone (`%eth0`) is dropped. Nil otherwise.
    public init?(_ text: some StringProtocol) {
        let text = Substring(text)
        if let v4 = Self.ipv4(text) {
            self.init(bytes: v4)
        } else if let v6 = Self.ipv6(text) {
            self.init(bytes: v6)
        } else {
            return nil
        }
    }

    public var description: String {
        if isIPv4 { return bytes.map(String.init).joined(separator: ".") }
        let groups = (0 ..< 8).map { UInt16(bytes[2 * $0]) << 8 | UInt16(bytes[2 * $0 + 1]) }
        // The longest run of two or more zero groups (the first of equals) becomes `::`.
        var best: Range<Int>?
        var start: Int?
        for index in 0 ... 8 {
            if index < 8, groups[index] == 0 {
                if start == nil { start = index }
            } else if let begin = start {
                if index - begin >= 2, index - begin > (best?.count ?? 0) { best = begin ..< index }
                start = nil
            }
        }
        let hex = { (range: Range<Int>) in range.map { String(groups[$0], radix: 16) }.joined(separator: ":") }
        guard let best else { return hex(0 ..< 8) }
        return hex(0 ..< best.lowerBound) + "::" + hex(best.upperBound ..< 8)
    }

    /// Four decimal bytes separated by dots.
    static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1 ... 3).contains(part.utf8.count), part.utf8.allSatisfy({ (48 ... 57).contains($0) }),
                  part.utf8.count == 1 || part.utf8.first != 48, let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// Sixteen bytes from eight 16-bit groups, `::` and a trailing dotted IPv4 part allowed.
    static func ipv6(_ text: Substring) -> [UInt8]? {
        let address = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)[0]
        guard address.contains(":") else { return nil }
        func groups(_ part: Substring, last: Bool) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if last, index == pieces.count - 1, piece.contains(".") {
                    guard let v4 = ipv4(piece) else { return nil }
                    result += [UInt16(v4[0]) << 8 | UInt16(v4[1]), UInt16(v4[2]) << 8 | UInt16(v4[3])]
                    continue
                }
                guard (1 ... 4).contains(piece.utf8.count), piece.utf8.allSatisfy(\.isHexDigit),
                      let value = UInt16(piece, radix: 16)
                else { return nil }
                result.append(value)
            }
            return result
        }
        let all: [UInt16]
        if let gap = address.firstRange(of: "::") {
            let tail = address[gap.upperBound...]
            guard tail.firstRange(of: "::") == nil, let head = groups(address[..<gap.lowerBound], last: false),
                  let rest = groups(tail, last: true), head.count + rest.count <= 7
            else { return nil }
            all = head + Array(repeating: 0, count: 8 - head.count - rest.count) + rest
        } else {
            guard let groups = groups(address, last: true), groups.count == 8 else { return nil }
            all = groups
        }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (48 ... 57).contains(self) || (65 ... 70).contains(self) || (97 ... 102).contains(self)
    }
}

/// A network in CIDR form (`10.0.0.0/8`, `2001:db8::/32`); a bare address is the network of
/// that address alone (/32 or /128).
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    /// The network's address, its bits past the prefix cleared.
    public let address: IPAddress
    /// How many leading bits an address must share with it.
    public let prefixLength: Int

    /// A network from `ADDRESS/BITS` or a bare `ADDRESS`; nil when either part is invalid.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { return nil }
        // A mapped IPv4 network is read as the IPv4 network (its prefix less the 96 bits before).
        let mapped = address.isIPv4 && parts[0].contains(":")
        let width = address.bytes.count * 8
        var length = width
        if parts.count == 2 {
            guard (1 ... 3).contains(parts[1].utf8.count), parts[1].utf8.allSatisfy({ (48 ... 57).contains($0) }),
                  var bits = Int(parts[1])
            else { return nil }
            if mapped {
                guard bits >= 96 else { return nil }
                bits -= 96
            }
            guard bits <= width else { return nil }
            length = bits
        }
        self.address = IPAddress(bytes: Self.masked(address.bytes, length))!
        self.prefixLength = length
    }

    /// Whether `candidate` is in this network (an IPv4 address is never in an IPv6 network).
    public func contains(_ candidate: IPAddress) -> Bool {
        candidate.bytes.count == address.bytes.count && Self.masked(candidate.bytes, prefixLength) == address.bytes
    }

    public var description: String { "\(address)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let bits = min(max(length - index * 8, 0), 8)
            return bits == 8 ? byte : byte & ~(0xFF >> UInt8(bits))
        }
    }
}

/// The proxies whose word on a client's address is taken (`--trusted-proxies`): connections from
/// these networks may name the client they carry (a PROXY protocol header, `Forwarded`,
/// `X-Forwarded-For`); from anywhere else such a claim is ignored. Empty (the default) trusts none.
public struct TrustedProxies: Sendable, Equatable, CustomStringConvertible {
    /// The trusted networks, in the order given.
    public let networks: [IPNetwork]

    /// Trusts no one.
    public static let none = TrustedProxies(networks: [])

    public init(networks: [IPNetwork]) {
        self.networks = networks
    }

    /// The networks of `CIDR[,CIDR…]` (spaces around commas allowed).
    /// - Throws: ``TrustedProxiesError`` naming the first entry that is not an IPv4 or IPv6
    ///   address or network.
    public init(parsing text: String) throws {
        var networks: [IPNetwork] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let entry = part.trimmingSpaces
            guard let network = IPNetwork(entry) else { throw TrustedProxiesError(entry: String(entry)) }
            networks.append(network)
        }
        self.networks = networks
    }

    /// Whether no proxy is trusted.
    public var isEmpty: Bool { networks.isEmpty }

    /// Whether `address` is in a trusted network.
    public func contains(_ address: IPAddress) -> Bool {
        networks.contains { $0.contains(address) }
    }

    /// Whether the address in text form (a socket's peer, `::ffff:` mapped or not) is trusted;
    /// false for nil or anything that is not an IP address.
    public func contains(_ address: String?) -> Bool {
        guard !networks.isEmpty, let address, let ip = IPAddress(address) else { return false }
        return contains(ip)
    }

    public var description: String { networks.map(\.description).joined(separator: ",") }
}

/// An entry of `--trusted-proxies` that is not an address or network.
public struct TrustedProxiesError: Error, Equatable, CustomStringConvertible {
    /// The entry as given.
    public let entry: String

    public var description: String {
        "--trusted-proxies takes IPv4 and IPv6 addresses or CIDR networks, comma-separated "
            + "(e.g. 10.0.0.0/8,2001:db8::1), got \"\(entry)\""
    }
}

extension StringProtocol {
    /// Without the spaces and tabs at either end.
    var trimmingSpaces: SubSequence {
        var text = self[...]
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
