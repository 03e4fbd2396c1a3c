#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A line-protocol client on a plain blocking socket, each call on a thread of its own: for a
/// test that must know its bytes have reached the server (``unacknowledgedBytes``), which a
/// NIO client cannot tell. One call at a time.
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

    /// Sends `text` whole.
    func write(_ text: String) async throws {
        try await onThread { [self] in
            let bytes = Array(text.utf8)
            var sent = 0
            while sent < bytes.count {
                let written = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
                guard written > 0 else { throw Failure(description: "send: errno \(errno)") }
                sent += written
            }
        }
    }

    /// The next line without its `\n`, or nil once the server has closed.
    func readLine() async throws -> String? {
        try await readLines(1).first
    }

    /// The next `count` lines without their `\n`, read on one thread (fewer once the server has
    /// closed): a burst's replies without a thread per line.
    func readLines(_ count: Int) async throws -> [String] {
        try await onThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var lines: [String] = []
            var start = 0
            while lines.count < count {
                if let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                    lines.append(String(decoding: pending[start ..< newline], as: UTF8.self))
                    start = newline + 1
                    continue
                }
                pending.removeSubrange(..<start)
                start = 0
                let received = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                guard received >= 0 else { throw Failure(description: "recv: errno \(errno)") }
                if received == 0 { break }
                pending += buffer[..<received]
            }
            pending.removeSubrange(..<start)
            return lines
        }
    }

    /// Sends one request line and returns its reply line.
    func call(_ line: String) async throws -> String? {
        try await write(line + "\n")
        return try await readLine()
    }

    /// Bytes sent that the server's side has not acknowledged yet (Linux's `SIOCOUTQ`): once 0,
    /// everything sent is in the server's receive buffer, whether or not it has read it.
    var unacknowledgedBytes: Int {
        get throws {
            var count: Int32 = 0
            // SIOCOUTQ is TIOCOUTQ (0x5411) for sockets.
            guard ioctl(descriptor, 0x5411, &count) == 0 else { throw Failure(description: "ioctl(SIOCOUTQ): errno \(errno)") }
            return Int(count)
        }
    }

    private func onThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
        }
    }
}
