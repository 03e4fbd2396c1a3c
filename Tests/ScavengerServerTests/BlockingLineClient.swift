#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A line-protocol client on a plain blocking socket whose every call runs, and is timed, on a
/// thread of its own: its times leave out waits for Swift's cooperative pool, which CPU-heavy
/// tests running alongside can hold for seconds. One call at a time.
final class BlockingLineClient: @unchecked Sendable {
    private let descriptor: Int32
    /// Bytes read past the last line; touched by one call at a time.
    private var pending: [UInt8] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Connects to 127.0.0.1:`port`.
    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Failure(description: "connect: errno \(errno)")
        }
    }

    deinit {
        close(descriptor)
    }

    /// Sends one request line; returns its reply line and how long the reply took.
    func call(_ line: String) async throws -> (reply: String, elapsed: Duration) {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { [self] in
                continuation.resume(with: Result { try callBlocking(line) })
            }
        }
    }

    /// Sends a request that must succeed and returns its JSON value.
    func ok(_ line: String) async throws -> JSONObject {
        try JSONObject(okLine: try await call(line).reply)
    }

    private func callBlocking(_ line: String) throws -> (String, Duration) {
        let start = ContinuousClock.now
        let bytes = Array((line + "\n").utf8)
        var sent = 0
        while sent < bytes.count {
            let written = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += written
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let reply = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return (reply, ContinuousClock.now - start)
            }
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw Failure(description: "the server closed the connection instead of answering \(line)") }
            pending += buffer[..<count]
        }
    }
}
