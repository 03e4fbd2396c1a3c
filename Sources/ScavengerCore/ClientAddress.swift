/// How the throttles name a client: an IPv4 address as it is; an IPv6 address by its /64
/// network, since one subscriber usually holds a whole /64 and could otherwise change address
/// at every request; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as its IPv4 address.
public enum ClientAddress {
    /// The throttling key for an address in text form (`203.0.113.7`, `2001:db8::1`), or nil
    /// when it is not an IP address.
    public static func key(_ text: String) -> String? {
        if let v4 = ipv4(Substring(text)) { return v4.map(String.init).joined(separator: ".") }
        guard let groups = ipv6(Substring(text)) else { return nil }
        if groups[0 ..< 5].allSatisfy({ $0 == 0 }), groups[5] == 0xFFFF {
            return [groups[6] >> 8, groups[6] & 0xFF, groups[7] >> 8, groups[7] & 0xFF].map { String($0) }.joined(separator: ".")
        }
        return groups[0 ..< 4].map { String($0, radix: 16) }.joined(separator: ":") + "::/64"
    }

    /// Four decimal bytes separated by dots.
    static func ipv4(_ text: Substring) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var bytes: [UInt8] = []
        for part in parts {
            guard (1 ... 3).contains(part.utf8.count), part.utf8.allSatisfy({ (48 ... 57).contains($0) }),
                  let value = UInt8(part)
            else { return nil }
            bytes.append(value)
        }
        return bytes
    }

    /// Eight 16-bit groups, with `::` and a trailing dotted IPv4 part allowed; a `%zone` is ignored.
    static func ipv6(_ text: Substring) -> [UInt16]? {
        let address = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)[0]
        var halves = [address]
        if let gap = address.firstRange(of: "::") {
            halves = [address[..<gap.lowerBound], address[gap.upperBound...]]
            guard halves[1].firstRange(of: "::") == nil else { return nil }
        }
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
                guard (1 ... 4).contains(piece.utf8.count), let value = UInt16(piece, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        if halves.count == 1 {
            guard let all = groups(halves[0], last: true), all.count == 8 else { return nil }
            return all
        }
        guard let head = groups(halves[0], last: false), let tail = groups(halves[1], last: true),
              head.count + tail.count <= 7
        else { return nil }
        return head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
    }
}
