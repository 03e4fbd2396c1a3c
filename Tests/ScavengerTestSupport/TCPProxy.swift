#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// A TCP proxy on 127.0.0.1 in front of one upstream address, for fault tests: it forwards bytes
/// both ways until told to stop (``blackhole()``: connections stay open and new ones are accepted,
/// but nothing moves, as in a network partition), to go on (``resume()``), or to cut every
/// connection at once (``cutAll()``: what clients see when the server restarts), or to lose what
/// the upstream answers while still forwarding what clients send (``dropReplies()``: a request
/// that arrives and runs, its reply lost on the way back).
///
/// Plain blocking sockets on threads of its own (one per connection, polling every 20 ms).
public final class TCPProxy: Sendable {
    /// The port clients connect to.
    public let port: Int
    private let upstream: sockaddr_in
    private let listener: Int32
    private let state = Mutex(State())

    private struct State {
        var forwarding = true
        var droppingReplies = false
        var stopped = false
        var nextID = 0
        var accepted = 0
        /// Open connections: the client's socket and the upstream one. A pump closes them only
        /// after removing them from here, so sockets found here are still open.
        var pairs: [Int: (client: Int32, upstream: Int32)] = [:]
    }

    /// A socket call failed, or the upstream address is not one the proxy can use.
    public struct SocketError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts a proxy to `host` (an IPv4 address, or `localhost`) and `port`.
    public init(upstreamHost host: String, upstreamPort: Int) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(upstreamPort).bigEndian)
        let numeric = host == "localhost" ? "127.0.0.1" : host
        guard inet_pton(AF_INET, numeric, &address.sin_addr) == 1 else {
            throw SocketError(description: "the proxy needs an IPv4 upstream address, not \(host)")
        }
        upstream = address

        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw SocketError(description: "socket: errno \(errno)") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = 0
        local.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 64) == 0 else {
            close(listener)
            throw SocketError(description: "bind/listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        self.listener = listener
        self.port = Int(UInt16(bigEndian: local.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Stops forwarding: bytes stay where they are, connections stay open, new ones are
    /// accepted and go nowhere.
    public func blackhole() {
        state.withLock { $0.forwarding = false }
    }

    /// Forwards again, what was held back included (and replies again after ``dropReplies()``).
    public func resume() {
        state.withLock {
            $0.forwarding = true
            $0.droppingReplies = false
        }
    }

    /// Goes on forwarding what clients send, but throws away what the upstream sends back.
    public func dropReplies() {
        state.withLock { $0.droppingReplies = true }
    }

    /// Cuts every open connection (both sides see the connection close); later ones are
    /// accepted as before.
    public func cutAll() {
        state.withLock { state in
            for pair in state.pairs.values {
                _ = shutdown(pair.client, Int32(SHUT_RDWR))
                _ = shutdown(pair.upstream, Int32(SHUT_RDWR))
            }
        }
    }

    /// Closes the listener and every connection.
    public func stop() {
        state.withLock { $0.stopped = true }
        cutAll()
    }

    /// How many connections clients have opened to the proxy so far.
    public var acceptedCount: Int {
        state.withLock { $0.accepted }
    }

    /// How many connections are open through the proxy.
    public var connectionCount: Int {
        state.withLock { $0.pairs.count }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while !state.withLock({ $0.stopped }) {
            guard Self.readable(listener, milliseconds: 20) else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            state.withLock { $0.accepted += 1 }
            let upstreamSocket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = upstream
            let connected = upstreamSocket >= 0 && withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(upstreamSocket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            } == 0
            guard connected else {
                close(client)
                if upstreamSocket >= 0 { close(upstreamSocket) }
                continue
            }
            let id: Int? = state.withLock { state in
                guard !state.stopped else { return nil }
                let id = state.nextID
                state.nextID += 1
                state.pairs[id] = (client, upstreamSocket)
                return id
            }
            guard let id else {
                close(client)
                close(upstreamSocket)
                continue
            }
            Thread.detachNewThread { [self] in pump(id: id, client: client, upstream: upstreamSocket) }
        }
    }

    private func pump(id: Int, client: Int32, upstream: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        loop: while true {
            var descriptors = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
            guard state.withLock({ $0.forwarding }) else {
                // Nothing moves; but a cut connection still ends.
                descriptors[0].events = 0
                descriptors[1].events = 0
                _ = poll(&descriptors, 2, 20)
                if descriptors.contains(where: { $0.revents & Int16(POLLHUP | POLLERR) != 0 }) { break loop }
                continue
            }
            guard poll(&descriptors, 2, 20) > 0 else { continue }
            // Checked again after the wait: bytes sent after blackhole() returned never move.
            guard state.withLock({ $0.forwarding }) else { continue }
            for (index, descriptor) in descriptors.enumerated() where descriptor.revents != 0 {
                let from = index == 0 ? client : upstream
                let to = index == 0 ? upstream : client
                let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { break loop }
                if index == 1, state.withLock({ $0.droppingReplies }) { continue }
                guard Self.sendAll(to, buffer, count: count) else { break loop }
            }
        }
        state.withLock { _ = $0.pairs.removeValue(forKey: id) }
        close(client)
        close(upstream)
    }

    private static func sendAll(_ socket: Int32, _ buffer: [UInt8], count: Int) -> Bool {
        var sent = 0
        while sent < count {
            let written = buffer.withUnsafeBytes { send(socket, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return false }
            sent += written
        }
        return true
    }

    private static func readable(_ socket: Int32, milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, milliseconds) > 0
    }
}
