internal import CReadline
import Foundation
import Synchronization

/// GNU readline behind a safe API, for the command-line client's prompt: lines read with editing
/// and history, Tab completing the first word of a line from a list of words, secrets read without
/// echo, and text printed above the line being typed, which is then drawn again as it was. The
/// only importer of `CReadline`: readline's globals, its C strings and its callbacks stay in here.
///
/// Readline is used through its callback interface on one thread of its own (``shared`` starts
/// it): that thread waits for a key on standard input or for a request (a line to read, text to
/// print, a history change), so readline is never touched from two threads, and text printed while
/// a line is being typed clears that line, is written, and the line comes back, point included.
public final class LineEditor: Sendable {
    /// The one editor of the process (readline has one terminal and one state).
    public static let shared = LineEditor()

    /// Where ``print(_:to:)`` writes.
    public enum Stream: Sendable {
        case output, error
    }

    enum Request: Sendable {
        case print(String, Stream)
        case readLine(prompt: String, CheckedContinuation<String?, Never>)
        case readSecret(prompt: String, CheckedContinuation<String?, Never>)
        case perform(@Sendable () -> Void)
    }

    /// Requests for the editor's thread, and whether it has been woken for them.
    private let queue = Mutex<(requests: [Request], woken: Bool)>(([], false))
    private let wake: WakePipe

    private init() {
        wake = WakePipe()
        let wake = wake
        let thread = Thread { [self] in EditorLoop(wake: wake, take: { self.take() }).run() }
        thread.name = "LineEditor"
        thread.start()
    }

    private func submit(_ request: Request) {
        let wakeUp = queue.withLock { queue in
            queue.requests.append(request)
            defer { queue.woken = true }
            return !queue.woken
        }
        if wakeUp { wake.signal(0) }
    }

    /// The requests queued so far (for the editor's thread).
    private func take() -> [Request] {
        queue.withLock { queue in
            queue.woken = false
            defer { queue.requests.removeAll() }
            return queue.requests
        }
    }

    /// One line typed at `prompt`, with editing, history and completion; nil at the end of input
    /// (Ctrl-D on an empty line). Text printed meanwhile goes above the line.
    public func readLine(prompt: String) async -> String? {
        await withCheckedContinuation { submit(.readLine(prompt: prompt, $0)) }
    }

    /// A secret (a password) typed at `prompt` (written to standard error) without echo:
    /// Backspace and Ctrl-U edit it, Enter ends it; nil when standard input is not a terminal or
    /// at Ctrl-D on an empty secret. It never goes into the history.
    public func readSecret(prompt: String) async -> String? {
        await withCheckedContinuation { submit(.readSecret(prompt: prompt, $0)) }
    }

    /// Prints `text` and a newline, in order with everything else printed through the editor; while
    /// a line is being typed, above it (the line is drawn again below).
    public func print(_ text: String, to stream: Stream = .output) {
        submit(.print(text, stream))
    }

    /// Tab completes the first word of a line from `words` from now on.
    public func completeFirstWord(from words: [String]) {
        Completion.words(words)
        submit(.perform { creadline_set_completion(Completion.generator) })
    }

    /// Adds a line to the history (Up recalls it).
    public func addToHistory(_ line: String) { submit(.perform { add_history(line) }) }

    /// Reads the history kept at `path`, if any.
    public func loadHistory(from path: String) { submit(.perform { read_history(path) }) }

    /// Writes the history to `path`, then runs `then` (on the editor's thread).
    public func saveHistory(to path: String, then: @escaping @Sendable () -> Void = {}) {
        submit(.perform {
            write_history(path)
            then()
        })
    }

    /// Flushes standard output, so that what `print` wrote shows at once (for output that does
    /// not go through an editor).
    public static func flushOutput() { creadline_flush_stdout() }
}

/// The tab completion's words, and the matches of the word being completed.
enum Completion {
    private static let state = Mutex<(words: [String], matches: [String], next: Int)>(([], [], 0))

    static func words(_ words: [String]) { state.withLock { $0.words = words } }

    /// readline's generator: the `state`-th word that starts with `text` (in any case; given back
    /// in lower case when the typed part is), only for the line's first word.
    static let generator: @convention(c) (UnsafePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>? = { text, index in
        let prefix = text.map { String(cString: $0) } ?? ""
        let typed = creadline_line_buffer().map { String(cString: $0) } ?? ""
        let beforeWord = typed.utf8.prefix(Int(creadline_point())).dropLast(prefix.utf8.count)
        guard beforeWord.allSatisfy({ $0 == UInt8(ascii: " ") }) else { return nil }
        return state.withLock { completion in
            if index == 0 {
                let lower = prefix.lowercased()
                let lowercase = !prefix.isEmpty && prefix == lower
                completion.matches = completion.words.filter { $0.lowercased().hasPrefix(lower) }.map { lowercase ? $0.lowercased() : $0 }
                completion.next = 0
            }
            guard completion.next < completion.matches.count else { return nil }
            defer { completion.next += 1 }
            // readline frees what it is given.
            return strdup(completion.matches[completion.next])
        }
    }
}
