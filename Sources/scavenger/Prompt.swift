import Foundation
import LineEditor
import ScavengerClient

/// The interactive prompt: a line of the protocol per request (`nearby 52.52 13.405 500`,
/// `post 52.52 13.405 "Free coffee"`), its reply pretty-printed; events of watches as they come.
/// A `watch` typed here runs beside the prompt and survives reconnects (`unwatch N` ends it).
/// Everything is printed through the line editor: an event that comes while a line is being typed
/// is printed above it, and the line is drawn again as it was. `login NAME` asks for the password
/// without echo.
struct Prompt {
    let client: ScavengerClient
    let printer: Printer
    let store: TokenStore
    let editor = LineEditor.shared

    init(client: ScavengerClient, printer: Printer, store: TokenStore) {
        let editor = editor
        self.client = client
        self.printer = Printer(
            json: printer.json, output: Output(line: { editor.print($0) }, error: { editor.print($0, to: .error) }))
        self.store = store
    }

    /// Runs until `quit`, `exit` or Ctrl-D; answers the exit status (1 when the server cannot be
    /// reached at all).
    func run() async throws -> Int32 {
        // The server first: a wrong port or host is said at once, not at the first command.
        let names: [String]
        do {
            names = try await client.help().map(\.command)
        } catch let error as ScavengerError {
            printer.error(error)
            return 1
        }
        editor.completeFirstWord(from: names)
        try? FileManager.default.createDirectory(
            at: store.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let history = History(path: store.directory.appendingPathComponent("history").path)
        history.clean()
        editor.loadHistory(from: history.path)
        let events = Task { [client, editor] in
            for await event in client.events { editor.print("EVENT \(event)") }
        }
        defer { events.cancel() }
        let watches = Watches(client: client, printer: printer)
        defer { watches.cancelAll() }
        while let line = await editor.readLine(prompt: "scavenger> ") {
            var trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            if !History.isSecret(trimmed) {
                editor.addToHistory(trimmed)
                let path = history.path
                editor.saveHistory(to: path) {
                    try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
                }
            }
            if ["quit", "exit"].contains(trimmed.lowercased()) { break }
            if watches.handle(trimmed) { continue }
            if let prompt = Scavenger.passwordPrompt(Scavenger.words(trimmed)) {
                // Asked for without echo, and never in the history (the line without it is not either).
                guard let password = await editor.readSecret(prompt: prompt) else { continue }
                trimmed += " " + ScavengerClient.token(password)
            }
            _ = await Scavenger.send(trimmed, client: client, printer: printer, store: store)
        }
        return 0
    }
}

/// Request lines read from standard input when it is not a terminal (`scavenger < lines`,
/// `printf 'ping\n' | scavenger`): no prompt, no history, each reply printed as it comes; the
/// exit status is 1 when any request failed, after every line has been sent.
struct Script {
    let client: ScavengerClient
    let printer: Printer
    let store: TokenStore

    func run() async -> Int32 {
        let events = Task {
            for await event in client.events {
                print("EVENT \(event)")
                LineEditor.flushOutput()
            }
        }
        defer { events.cancel() }
        var status: Int32 = 0
        while let line = await Self.readLine() {
            var trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if ["quit", "exit"].contains(trimmed.lowercased()) { break }
            if Scavenger.passwordPrompt(Scavenger.words(trimmed)) != nil {
                // `login NAME`: the password is the next line.
                guard let password = await Self.readLine() else { return 1 }
                trimmed += " " + ScavengerClient.token(password)
            }
            if await Scavenger.send(trimmed, client: client, printer: printer, store: store) != 0 { status = 1 }
            LineEditor.flushOutput()
        }
        return status
    }

    /// One line of standard input, read on a thread of its own (reading blocks); nil at its end.
    static func readLine() async -> String? {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Swift.readLine(strippingNewline: true)) }
        }
    }
}

/// The prompt's own watches (`watch lat lon radius [KIND k]`, `watch hunt id`): each runs
/// beside the prompt through the client library's watch, which resumes after a reconnect, and
/// is numbered for `unwatch N`.
final class Watches {
    let client: ScavengerClient
    let printer: Printer
    private var running: [Int: Task<Void, Never>] = [:]
    private var next = 1

    init(client: ScavengerClient, printer: Printer) {
        self.client = client
        self.printer = printer
    }

    /// Runs `line` when it is `watch …` or `unwatch N` (N one of these watches); false when it
    /// is anything else, for the server.
    func handle(_ line: String) -> Bool {
        let words = Scavenger.words(line)
        guard let command = words.first?.uppercased() else { return false }
        if command == "UNWATCH", words.count == 2, let number = Int(words[1]) {
            guard let task = running.removeValue(forKey: number) else {
                printer.error(ScavengerError(code: .notFound, message: "no watch \(number) here (see the number `watch` printed)"))
                return true
            }
            task.cancel()
            printer.output.line("-- watch \(number) ended")
            return true
        }
        guard command == "WATCH" else { return false }
        let arguments = Array(words.dropFirst())
        guard Scavenger.watchArguments(arguments) != nil else {
            printer.error(ScavengerError(code: .badArgument, message: Scavenger.watchUsage))
            return true
        }
        let number = next
        next += 1
        let client = client, printer = printer
        running[number] = Task {
            _ = try? await Scavenger.watch(arguments, client: client, printer: printer)
        }
        printer.output.line("-- watch \(number) started; `unwatch \(number)` ends it")
        return true
    }

    func cancelAll() {
        for task in running.values { task.cancel() }
        running.removeAll()
    }
}
