internal import CReadline
import Foundation
import Synchronization

/// GNU readline behind a safe API, for the command-line client's prompt: lines read with editing
/// and history, and Tab completing the first word of a line from a list of words. The only
/// importer of `CReadline`: readline's globals, its C strings and its completion callback stay
/// in here.
public enum LineEditor {
    /// The words Tab completes, and the matches of the word being completed.
    private static let completion = Mutex<(words: [String], matches: [String], next: Int)>(([], [], 0))

    /// readline's generator: the `state`-th word that starts with `text` (in any case; given back
    /// in lower case when the typed part is), only for the line's first word.
    private static let generator: @convention(c) (UnsafePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>? = { text, state in
        let prefix = text.map { String(cString: $0) } ?? ""
        let typed = creadline_line_buffer().map { String(cString: $0) } ?? ""
        let beforeWord = typed.utf8.prefix(Int(creadline_point())).dropLast(prefix.utf8.count)
        guard beforeWord.allSatisfy({ $0 == UInt8(ascii: " ") }) else { return nil }
        return completion.withLock { completion in
            if state == 0 {
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

    /// Tab completes the first word of a line from `words` from now on.
    public static func completeFirstWord(from words: [String]) {
        completion.withLock { $0.words = words }
        creadline_set_completion(generator)
    }

    /// One line typed at `prompt`, read on a thread of its own (readline blocks); nil at the end
    /// of input (Ctrl-D).
    public static func readLine(prompt: String) async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                guard let raw = readline(prompt) else {
                    continuation.resume(returning: nil)
                    return
                }
                let line = String(cString: raw)
                free(raw)
                continuation.resume(returning: line)
            }
        }
    }

    /// Adds a line to the history (Up recalls it).
    public static func addToHistory(_ line: String) { add_history(line) }

    /// Reads the history kept at `path`, if any.
    public static func loadHistory(from path: String) { read_history(path) }

    /// Writes the history to `path`.
    public static func saveHistory(to path: String) { write_history(path) }

    /// Flushes standard output, so what was printed shows before readline redraws its line.
    public static func flushOutput() { creadline_flush_stdout() }
}
