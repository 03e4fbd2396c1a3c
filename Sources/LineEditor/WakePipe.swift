internal import CReadline
import Foundation
import Synchronization

/// A pipe that wakes the editor's thread from `poll`: a 0 byte for queued requests, a signal's
/// number for a signal (written by the signal handler, which may do nothing else safely).
final class WakePipe: Sendable {
    let readDescriptor: Int32
    let writeDescriptor: Int32

    init() {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { fatalError("LineEditor: cannot make a pipe (errno \(errno))") }
        readDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
    }

    /// Writes `byte` (never blocks: a full pipe is awake already).
    func signal(_ byte: UInt8) {
        var byte = byte
        _ = write(writeDescriptor, &byte, 1)
    }

    /// The bytes written so far.
    func drain() -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while true {
            let count = read(readDescriptor, &buffer, buffer.count)
            if count > 0 {
                bytes += buffer[..<count]
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return bytes
            }
        }
    }
}

/// The signals the editor handles while it lives: each is written to its wake pipe by the handler
/// and dealt with on its thread (the terminal restored before the process ends or stops, the line
/// redrawn when it comes back or the window changes size).
enum Signals {
    /// Where the handler writes (set once, before the handler is installed).
    private static let descriptor = Atomic<Int32>(-1)

    /// Signals that end the process (after the terminal is restored).
    static let ending: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    /// Signals that stop it (the terminal restored, and prepared again when it continues).
    static let stopping: [Int32] = [SIGTSTP, SIGTTIN, SIGTTOU]

    private static let handler: @convention(c) (Int32) -> Void = { signal in
        var byte = UInt8(truncatingIfNeeded: signal)
        _ = write(descriptor.load(ordering: .relaxed), &byte, 1)
    }

    /// Sends the signals to `pipe` from now on.
    static func install(_ pipe: WakePipe) {
        descriptor.store(pipe.writeDescriptor, ordering: .relaxed)
        for signal in ending + stopping + [SIGWINCH] { catchAgain(signal) }
    }

    /// Handles `signal` again (after its default action ran).
    static func catchAgain(_ signal: Int32) {
        _ = creadline_catch_signal(signal, handler)
    }
}
