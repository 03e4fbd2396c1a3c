import CReadline
import Foundation
import ScavengerClient
import Synchronization

/// The command names Tab completes, and the matches of the word being completed.
private let completion = Mutex<(words: [String], matches: [String], next: Int)>(([], [], 0))

/// readline's generator: the `state`-th command name that starts with `text` (any case, given
/// back in the case typed), only for the line's first word.
private let generator: @convention(c) (UnsafePointer<CChar>?, Int32) -> UnsafeMutablePointer<CChar>? = { text, state in
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
        return strdup(completion.matches[completion.next])
    }
}

/// The interactive prompt: a line of the protocol per request (`nearby 52.52 13.405 500`,
/// `post 52.52 13.405 "Free coffee"`), its reply pretty-printed; events of watches as they come.
struct Prompt {
    let client: ScavengerClient
    let printer: Printer
    let store: TokenStore

    func run() async throws {
        if let names = try? await client.help().map(\.command) {
            completion.withLock { $0.words = names }
        }
        creadline_set_completion(generator)
        let history = store.directory.appendingPathComponent("history").path
        try? FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        read_history(history)
        let events = Task {
            for await event in client.events {
                print("EVENT \(event)")
                creadline_flush_stdout()
            }
        }
        defer { events.cancel() }
        while let line = await Self.readLine("scavenger> ") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            add_history(trimmed)
            write_history(history)
            if ["quit", "exit"].contains(trimmed.lowercased()) { break }
            _ = await Scavenger.send(trimmed, client: client, printer: printer, store: store)
            creadline_flush_stdout()
        }
    }

    /// One line from readline, read on a thread of its own (readline blocks); nil at end of input.
    static func readLine(_ prompt: String) async -> String? {
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
}
