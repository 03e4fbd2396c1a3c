internal import CReadline
import Foundation
import Synchronization

/// The editor's thread: waits for a key on standard input or a byte on the wake pipe, feeds keys
/// to readline's callback interface (or to the secret being typed), and runs the queued requests.
/// Every readline call of the process happens here.
final class EditorLoop {
    private enum Mode {
        case idle
        /// readline's handler is installed: a line is being typed.
        case line(CheckedContinuation<String?, Never>)
        /// A secret is being typed, with echo off.
        case secret(Secret)
    }

    private struct Secret {
        var prompt: String
        var saved: termios
        var bytes: [UInt8] = []
        /// 1 after ESC, 2 inside an escape sequence (an arrow key's): its bytes are not the secret's.
        var escape = 0
        var continuation: CheckedContinuation<String?, Never>
    }

    /// The line readline handed its handler (set on this thread, inside rl_callback_read_char).
    private static let accepted = Mutex<(done: Bool, line: String?)>((false, nil))

    private static let lineHandler: @convention(c) (UnsafeMutablePointer<CChar>?) -> Void = { raw in
        let line = raw.map { String(cString: $0) }
        free(raw)
        // No prompt again until the next line is asked for.
        rl_callback_handler_remove()
        accepted.withLock { $0 = (true, line) }
    }

    private let wake: WakePipe
    private let take: () -> [LineEditor.Request]
    private var mode = Mode.idle
    /// Reads asked for while another was under way, in order.
    private var waiting: [LineEditor.Request] = []

    init(wake: WakePipe, take: @escaping () -> [LineEditor.Request]) {
        self.wake = wake
        self.take = take
    }

    func run() -> Never {
        creadline_leave_signals_to_caller()
        Signals.install(wake)
        while true {
            var descriptors = [pollfd(fd: wake.readDescriptor, events: Int16(POLLIN), revents: 0)]
            if case .idle = mode {} else {
                descriptors.append(pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0))
            }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) > 0 else { continue }
            if descriptors[0].revents != 0 {
                for byte in wake.drain() where byte != 0 { handle(signal: Int32(byte)) }
                run(take())
            }
            if descriptors.count > 1, descriptors[1].revents != 0 {
                input(hungUp: descriptors[1].revents & Int16(POLLIN) == 0)
            }
            if case .idle = mode, !waiting.isEmpty {
                let next = waiting
                waiting = []
                run(next)
            }
        }
    }

    private func run(_ requests: [LineEditor.Request]) {
        var text: [(String, LineEditor.Stream)] = []
        for request in requests {
            switch request {
            case let .print(line, stream):
                text.append((line, stream))
            case let .readLine(prompt, continuation):
                show(text)
                text = []
                guard case .idle = mode else {
                    waiting.append(request)
                    continue
                }
                Self.accepted.withLock { $0 = (false, nil) }
                rl_callback_handler_install(prompt, Self.lineHandler)
                mode = .line(continuation)
            case let .readSecret(prompt, continuation):
                show(text)
                text = []
                guard case .idle = mode else {
                    waiting.append(request)
                    continue
                }
                var saved = termios()
                guard creadline_secret_mode(STDIN_FILENO, &saved) == 0 else {
                    continuation.resume(returning: nil)
                    continue
                }
                creadline_write(prompt, 1)
                mode = .secret(Secret(prompt: prompt, saved: saved, continuation: continuation))
            case let .perform(body):
                show(text)
                text = []
                body()
            }
        }
        show(text)
    }

    /// Writes `text` where it belongs: above the line being typed (which is then drawn again),
    /// or simply in order when nothing is being typed.
    private func show(_ text: [(String, LineEditor.Stream)]) {
        guard !text.isEmpty else { return }
        switch mode {
        case .idle:
            for (line, stream) in text { creadline_write(line + "\n", stream == .error ? 1 : 0) }
        case .line:
            rl_clear_visible_line()
            for (line, stream) in text { creadline_write(line + "\n", stream == .error ? 1 : 0) }
            rl_forced_update_display()
            creadline_flush_stdout()
        case let .secret(secret):
            creadline_write("\r\u{1B}[K", 1)
            for (line, stream) in text { creadline_write(line + "\n", stream == .error ? 1 : 0) }
            creadline_write(secret.prompt, 1)
        }
    }

    /// A key (or the end of input) on standard input.
    private func input(hungUp: Bool) {
        switch mode {
        case .idle:
            return
        case let .line(continuation):
            if hungUp {
                rl_callback_handler_remove()
                Self.accepted.withLock { $0 = (true, nil) }
            } else {
                rl_callback_read_char()
            }
            let (done, line) = Self.accepted.withLock { accepted in
                defer { accepted = (false, nil) }
                return accepted
            }
            guard done else { return }
            mode = .idle
            continuation.resume(returning: line)
        case var .secret(secret):
            var byte: UInt8 = 0
            let count = hungUp ? 0 : read(STDIN_FILENO, &byte, 1)
            if count < 0, errno == EINTR || errno == EAGAIN { return }
            guard count == 1 else { return finish(secret, nil) }
            switch (secret.escape, byte) {
            case (1, UInt8(ascii: "[")), (1, UInt8(ascii: "O")):
                secret.escape = 2
            case (1, _):
                secret.escape = 0
            case (2, _):
                if (0x40...0x7E).contains(byte) { secret.escape = 0 }
            case (_, 0x1B):
                secret.escape = 1
            case (_, UInt8(ascii: "\r")), (_, UInt8(ascii: "\n")):
                return finish(secret, String(decoding: secret.bytes, as: UTF8.self))
            case (_, 0x7F), (_, 0x08):
                // Backspace: the last character, all its UTF-8 bytes.
                while let last = secret.bytes.popLast(), last & 0xC0 == 0x80 {}
            case (_, 0x15):
                secret.bytes.removeAll()
            case (_, 0x04):
                if secret.bytes.isEmpty { return finish(secret, nil) }
            case (_, 0..<0x20):
                break
            default:
                secret.bytes.append(byte)
            }
            mode = .secret(secret)
        }
    }

    private func finish(_ secret: Secret, _ text: String?) {
        var saved = secret.saved
        creadline_restore_terminal(STDIN_FILENO, &saved)
        creadline_write("\n", 1)
        mode = .idle
        secret.continuation.resume(returning: text)
    }

    /// A signal, on this thread: the terminal is given back before the process ends or stops,
    /// and taken again (the line drawn again) when it continues.
    private func handle(signal: Int32) {
        if signal == SIGWINCH {
            if case .line = mode { rl_resize_terminal() }
            return
        }
        guard Signals.ending.contains(signal) || Signals.stopping.contains(signal) else { return }
        switch mode {
        case .idle:
            break
        case .line:
            if Signals.ending.contains(signal) {
                rl_free_line_state()
                rl_callback_sigcleanup()
            }
            rl_cleanup_after_signal()
        case var .secret(secret):
            creadline_restore_terminal(STDIN_FILENO, &secret.saved)
        }
        creadline_raise_default(signal)
        if Signals.ending.contains(signal) { exit(128 + signal) }
        // Continued after a stop.
        Signals.catchAgain(signal)
        switch mode {
        case .idle:
            break
        case .line:
            rl_reset_after_signal()
            rl_forced_update_display()
            creadline_flush_stdout()
        case let .secret(secret):
            var saved = termios()
            _ = creadline_secret_mode(STDIN_FILENO, &saved)
            creadline_write(secret.prompt, 1)
        }
    }
}
