import Foundation
import ScavengerTestSupport
import Testing

/// `scripts/scavengerd.service`, the unit for operators: systemd's own checker accepts it, and it
/// keeps the sandbox and the reload it promises.
@Suite("The systemd unit")
struct SystemdUnitTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var unit: String {
        get throws { try String(contentsOf: root.appendingPathComponent("scripts/scavengerd.service"), encoding: .utf8) }
    }

    @Test("systemd-analyze verify finds nothing to say (with the paths of this build for the installed ones)")
    func verifies() throws {
        let analyze = "/usr/bin/systemd-analyze"
        try #require(
            FileManager.default.isExecutableFile(atPath: analyze),
            "systemd-analyze is missing: scripts/test.sh installs it (package systemd, scripts/lib.sh)")
        // verify checks that the commands exist: point them at this build and checkout.
        let text = try Self.unit
            .replacingOccurrences(of: "/usr/local/bin/scavengerd", with: try Executable.url.path)
            .replacingOccurrences(of: "/usr/local/share/scavenger/db", with: Self.root.appendingPathComponent("db").path)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-unit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("scavengerd.service")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: analyze)
        process.arguments = ["verify", file.path]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let stdout = String(decoding: readToEnd(out.fileHandleForReading), as: UTF8.self)
        let stderr = String(decoding: readToEnd(err.fileHandleForReading), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(stdout)\(stderr)")
        #expect(stdout.isEmpty && stderr.isEmpty, "\(stdout)\(stderr)")
    }

    @Test("the sandbox, the reload by SIGHUP and a graceful stop are in it")
    func sandbox() throws {
        let lines = Set(try Self.unit.split(separator: "\n").map(String.init))
        for directive in [
            "DynamicUser=yes", "ProtectSystem=strict", "ProtectHome=yes", "PrivateTmp=yes", "NoNewPrivileges=yes",
            "CapabilityBoundingSet=", "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX", "SystemCallFilter=@system-service",
            "ExecReload=/bin/kill -HUP $MAINPID", "KillSignal=SIGTERM", "Restart=on-failure",
            "ExecStart=/usr/local/bin/scavengerd serve $SCAVENGERD_OPTIONS",
        ] {
            #expect(lines.contains(directive), "missing \(directive)")
        }
    }

    @Test("its default options are ones serve accepts, and serve on loopback")
    func defaultOptions() throws {
        let unit = try Self.unit
        let line = try #require(unit.split(separator: "\n").first { $0.hasPrefix("Environment=\"SCAVENGERD_OPTIONS=") })
        let options = line.dropFirst("Environment=\"SCAVENGERD_OPTIONS=".count).dropLast().split(separator: " ").map(String.init)
        #expect(options == ["--host", "127.0.0.1", "--port", "7467", "--http-port", "7468"])
        let help = try LimitsTableTests.output(["serve", "--help"])
        for flag in options where flag.hasPrefix("--") {
            #expect(help.contains("  \(flag) "), "serve has no \(flag)")
        }
    }
}
