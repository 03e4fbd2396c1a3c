import Foundation
@testable import ScavengerHTTP
import ScavengerTestSupport
import Testing

/// scavenger.js outside a browser: in Node 20, which has no global WebSocket unless started with
/// `--experimental-websocket`, against the HTTP port of a real board. Needs Node 20.10 or later
/// on PATH, whose WebSocket class it passes in (skipped without one; the browser's side is
/// scripts/browser/client_test.py).
// The limit guards against a hang. The suite takes its TestEnvironment place before its tests start
// (`.environmentPlaces()`), so the limit does not count a full run's queue for one.
@Suite("scavenger.js in Node", .timeLimit(.minutes(5)), .environmentPlaces(), .enabled(if: Node.hasWebSocket, "no node 20.10 or later on PATH"))
struct ClientModuleNodeTests {
    /// The module and a script importing it, in a directory of their own.
    static func files(_ script: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-node-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try ClientModule.script.write(to: directory.appendingPathComponent("client.mjs"), atomically: true, encoding: .utf8)
        try script.write(to: directory.appendingPathComponent("test.mjs"), atomically: true, encoding: .utf8)
        return directory
    }

    static let script = #"""
        import { ScavengerClient, ScavengerError, WRITE_COMMANDS } from "./client.mjs";
        const url = process.argv[2];
        const out = {};
        // Only a guard against a hang: what was learnt so far, and a failure.
        setTimeout(() => { console.log(JSON.stringify({ ...out, hung: true })); process.exit(3); }, 120000).unref();
        // Node 20 as most have it: no WebSocket (this one was started with --experimental-websocket
        // only so that there is a class to pass in).
        const NodeWebSocket = globalThis.WebSocket;
        delete globalThis.WebSocket;
        try { new ScavengerClient({ url }); out.withoutWebSocket = "no error"; }
        catch (error) { out.withoutWebSocket = `${error.name}: ${error.message}`; }
        try { new ScavengerClient({ WebSocket: NodeWebSocket }); out.withoutURL = "no error"; }
        catch (error) { out.withoutURL = `${error.name}: ${error.message}`; }
        const parsed = ScavengerError.fromLine("ERR TOO_FAR 87 87 m from the stop, more than its radius");
        out.parsedTooFar = { code: parsed.code, distance: parsed.distance, message: parsed.message, retryAfter: parsed.retryAfter };
        const limited = ScavengerError.fromLine("ERR RATE_LIMITED 12 too many posts");
        out.parsedRateLimited = { retryAfter: limited.retryAfter, distance: limited.distance, message: limited.message };

        // The class passed in does the work.
        const host = new ScavengerClient({ url, WebSocket: NodeWebSocket });
        const player = new ScavengerClient({ url, WebSocket: NodeWebSocket });
        out.ping = await host.ping();
        // The module's list of writes against the daemon's HELP flags.
        const help = await host.call("HELP");
        out.writesOfHelp = help.filter((entry) => entry.flags.includes("write")).map((entry) => entry.command).sort();
        out.writesOfModule = [...WRITE_COMMANDS].sort();
        await host.register("nora", "nora@example.org", "password1");
        await player.register("pele", "pele@example.org", "password1");
        const watch = host.watch(52.52, 13.405, 500);
        await watch.ready;
        out.seqAtReady = watch.seq;
        const { hunt } = await host.createHunt("Node hunt", { public: true });
        const { stop } = await host.addStop(hunt.id, 52.5169, 13.4019, 40, 10, "Lustgarten");
        await host.startHunt(hunt.id);
        await player.join(hunt.id);
        try { await player.checkin(stop.id, 52.53, 13.4019); out.tooFar = "no error"; }
        catch (error) { out.tooFar = { code: error.code, distance: error.distance, message: error.message }; }
        await watch.close();
        // MAP and WATCH MAP: a pin posted in the watched box is a changed cell, then in MAP.
        const mapWatch = host.watchMap(52.4, 13.2, 52.6, 13.6, 12);
        await mapWatch.ready;
        const changed = new Promise((resolve) => mapWatch.on((event) => { if (event.type === "cells") resolve(event.cells); }));
        await player.post(52.52, 13.405, "on the map");
        out.mapCells = (await changed).map((cell) => cell.count);
        out.mapTotal = (await host.map(52.4, 13.2, 52.6, 13.6, 12)).total;
        await mapWatch.close();
        host.close();
        player.close();
        console.log(JSON.stringify(out));
        process.exit(0);
        """#

    @Test("no WebSocket: the constructor says so at once; one passed in works; TOO_FAR has distance; seq is set at ready; MAP and watchMap")
    func node() async throws {
        try await TestEnvironment.make(prefix: "node").use { environment in
            // The listener's announcer sends WATCH MAP's events (every second of the feed's clock).
            let listener = try await environment.listener()
            let listening = Task { try await listener.run() }
            defer { listening.cancel() }
            try await withHTTPServer(board: environment.board) { http, _, _ in
                let directory = try Self.files(Self.script)
                defer { try? FileManager.default.removeItem(at: directory) }
                let run = try Node.run(
                    ["--experimental-websocket", "test.mjs", "ws://127.0.0.1:\(http.port ?? 0)/ws"], in: directory)
                #expect(run.status == 0, "\(run.stderr)")
                let out = try #require(
                    try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.stdout) \(run.stderr)")
                let without = out["withoutWebSocket"] as? String ?? ""
                #expect(without.hasPrefix("TypeError: ScavengerClient: no WebSocket here"), "\(without)")
                #expect(without.contains("WebSocket option"))
                #expect((out["withoutURL"] as? String ?? "").hasPrefix("TypeError: ScavengerClient: no url given"))
                let writesOfHelp = out["writesOfHelp"] as? [String] ?? []
                #expect(writesOfHelp.count > 10 && writesOfHelp == out["writesOfModule"] as? [String])
                let parsed = out["parsedTooFar"] as? [String: Any]
                #expect(parsed?["code"] as? String == "TOO_FAR" && parsed?["distance"] as? Int == 87)
                #expect(parsed?["message"] as? String == "87 m from the stop, more than its radius")
                #expect(parsed?["retryAfter"] is NSNull)
                let limited = out["parsedRateLimited"] as? [String: Any]
                #expect(limited?["retryAfter"] as? Int == 12 && limited?["distance"] is NSNull)
                #expect(out["ping"] as? String == "PONG")
                #expect(out["seqAtReady"] is Int, "\(out)")
                let tooFar = out["tooFar"] as? [String: Any]
                #expect(tooFar?["code"] as? String == "TOO_FAR", "\(out)")
                // 52.53 is about 1.4 km north of the stop.
                #expect(((tooFar?["distance"] as? Int) ?? 0) > 1000, "\(out)")
                #expect(out["mapCells"] as? [Int] == [1], "\(out)")
                #expect(out["mapTotal"] as? Int == 1, "\(out)")
            }
        }
    }
}

/// The `node` executable on PATH, and running it.
enum Node {
    static let path: String? = {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":") {
            let candidate = "\(directory)/node"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }()

    /// Whether that node has a WebSocket class (20.10 and later, with --experimental-websocket).
    static let hasWebSocket: Bool = {
        guard path != nil, let version = try? run(["--version"], in: URL(fileURLWithPath: "/")).stdout else { return false }
        let numbers = version.dropFirst().split(separator: ".").compactMap { Int($0.prefix { $0.isNumber }) }
        guard numbers.count >= 2 else { return false }
        return numbers[0] > 20 || numbers[0] == 20 && numbers[1] >= 10
    }()

    static func run(_ arguments: [String], in directory: URL) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(path))
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = readToEnd(out.fileHandleForReading)
        let stderr = readToEnd(err.fileHandleForReading)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }
}
