#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Socket calls libpq does not make for us: waiting for a socket to become readable (for
/// `LISTEN`, and to notice a closed idle connection), and cutting a connection from another
/// thread.
enum SocketWait {
    /// Whether `socket` became readable within the timeout (an interrupted wait counts as not).
    /// A socket the peer closed, or one with an error, counts as readable.
    static func readable(_ socket: Int32, timeoutMilliseconds: Int) -> Bool {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(clamping: timeoutMilliseconds))
        return ready > 0
    }

    /// A close-on-exec duplicate of `socket`, or -1.
    static func duplicate(_ socket: Int32) -> Int32 {
        guard socket >= 0 else { return -1 }
        return fcntl(socket, F_DUPFD_CLOEXEC, 0)
    }

    /// Shuts both directions of the socket down: a thread blocked on it wakes up.
    static func shutdown(_ socket: Int32) {
        guard socket >= 0 else { return }
        #if canImport(Glibc)
        _ = Glibc.shutdown(socket, Int32(SHUT_RDWR))
        #else
        _ = Darwin.shutdown(socket, SHUT_RDWR)
        #endif
    }

    static func close(_ socket: Int32) {
        guard socket >= 0 else { return }
        #if canImport(Glibc)
        _ = Glibc.close(socket)
        #else
        _ = Darwin.close(socket)
        #endif
    }
}
