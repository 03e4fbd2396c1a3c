#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Waiting for a socket to become readable, for `LISTEN`.
enum SocketWait {
    /// Whether `socket` became readable within the timeout (an interrupted wait counts as not).
    static func readable(_ socket: Int32, timeoutMilliseconds: Int) -> Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(clamping: timeoutMilliseconds))
        return ready > 0
    }
}
