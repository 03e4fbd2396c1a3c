/// Which client an HTTP request from a trusted proxy is for, from its `Forwarded` (RFC 7239) or
/// else `X-Forwarded-For` fields. Pure.
///
/// The rule: only a peer in ``TrustedProxies`` is believed at all. Its `Forwarded` field's `for=`
/// nodes (or, when it has none, `X-Forwarded-For`'s entries) list the hops, the client first and
/// each proxy appending the address it heard from. The list is walked from the right, skipping
/// addresses that are themselves trusted proxies: the first one that is not is the client. If
/// every entry is trusted, the left-most is the client. An entry that is no address (`unknown`,
/// an obfuscated `_name`, garbage) ends the walk with no client, and so does an absent or empty
/// list: the peer's own address is used then.
public enum ForwardedFor {
    /// The client address of a request whose connection comes from `peer`.
    /// - Parameters:
    ///   - forwarded: the values of its `Forwarded` fields, in order.
    ///   - xForwardedFor: the values of its `X-Forwarded-For` fields, in order.
    /// - Returns: the named client, or nil when the peer's own address is to be used (the peer
    ///   is not trusted, or the fields name no usable address).
    public static func client(
        peer: IPAddress?, forwarded: [String], xForwardedFor: [String], trusted: TrustedProxies
    ) -> IPAddress? {
        guard let peer, trusted.contains(peer) else { return nil }
        var hops = forwarded.flatMap(forNodes)
        if hops.isEmpty { hops = xForwardedFor.flatMap { $0.split(separator: ",").map { String($0.trimmingSpaces) } } }
        guard !hops.isEmpty else { return nil }
        var leftmost: IPAddress?
        for hop in hops.reversed() {
            guard let address = nodeAddress(hop) else { return nil }
            if !trusted.contains(address) { return address }
            leftmost = address
        }
        return leftmost
    }

    /// The `for=` values of one `Forwarded` field value, in order, unquoted (RFC 7239: elements
    /// separated by `,`, pairs by `;`, a value a token or a quoted string). A malformed element
    /// gives an empty node, which ends the walk.
    static func forNodes(_ value: String) -> [String] {
        var nodes: [String] = []
        for element in splitOutsideQuotes(value, on: ",") {
            for pair in splitOutsideQuotes(element, on: ";") {
                let pair = pair.trimmingSpaces
                guard let equals = pair.firstIndex(of: "="), pair[..<equals].trimmingSpaces.lowercased() == "for" else {
                    continue
                }
                var node = pair[pair.index(after: equals)...].trimmingSpaces
                if node.first == "\"" {
                    guard node.count >= 2, node.last == "\"" else {
                        nodes.append("")
                        continue
                    }
                    node = node.dropFirst().dropLast()
                    // Quoted-pairs (`\x`) never belong in an address: leave them to fail below.
                }
                nodes.append(String(node))
            }
        }
        return nodes
    }

    /// The address of a node: `192.0.2.60`, `192.0.2.60:4711`, `2001:db8::1`, `[2001:db8::1]`,
    /// `[2001:db8::1]:4711`; nil for anything else (`unknown`, `_hidden`, a bad port).
    static func nodeAddress(_ node: String) -> IPAddress? {
        var host = Substring(node)
        var port: Substring?
        if host.first == "[" {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { return nil }
                port = after.dropFirst()
            }
            host = host[host.index(after: host.startIndex) ..< close]
            guard host.contains(":") else { return nil }
        } else if host.filter({ $0 == ":" }).count == 1 {
            // IPv4 with a port; a bare IPv6 address has two colons or more.
            let colon = host.firstIndex(of: ":")!
            port = host[host.index(after: colon)...]
            host = host[..<colon]
            guard !host.contains(":") else { return nil }
        }
        if let port {
            guard (1 ... 5).contains(port.utf8.count), port.utf8.allSatisfy({ (48 ... 57).contains($0) }),
                  let value = Int(port), value <= 65535
            else { return nil }
        }
        guard !host.contains("%") else { return nil }
        return IPAddress(host)
    }

    /// `text` split on `separator` where it is not inside a quoted string.
    private static func splitOutsideQuotes(_ text: some StringProtocol, on separator: Character) -> [Substring] {
        let text = Substring(text)
        var parts: [Substring] = []
        var start = text.startIndex
        var quoted = false
        var escaped = false
        for index in text.indices {
            let character = text[index]
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if !quoted, character == separator {
                parts.append(text[start ..< index])
                start = text.index(after: index)
            }
        }
        parts.append(text[start...])
        return parts
    }
}
