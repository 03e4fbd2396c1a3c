import Foundation
import LineEditor
import ScavengerClient

/// The interactive prompt: a line of the protocol per request (`nearby 52.52 13.405 500`,
/// `post 52.52 13.405 "Free coffee"`), its reply pretty-printed; events of watches as they come.
struct Prompt {
    let client: ScavengerClient
    let printer: Printer
    let store: TokenStore

    func run() async throws {
        if let names = try? await client.help().map(\.command) {
            LineEditor.completeFirstWord(from: names)
        }
        let history = store.directory.appendingPathComponent("history").path
        try? FileManager.default.createDirectory(at: store.directory, withIntermediateDirectories: true)
        LineEditor.loadHistory(from: history)
        let events = Task {
            for await event in client.events {
                print("EVENT \(event)")
                LineEditor.flushOutput()
            }
        }
        defer { events.cancel() }
        while let line = await LineEditor.readLine(prompt: "scavenger> ") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            LineEditor.addToHistory(trimmed)
            LineEditor.saveHistory(to: history)
            if ["quit", "exit"].contains(trimmed.lowercased()) { break }
            _ = await Scavenger.send(trimmed, client: client, printer: printer, store: store)
            LineEditor.flushOutput()
        }
    }
}
