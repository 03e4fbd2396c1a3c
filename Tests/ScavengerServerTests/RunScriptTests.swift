import Foundation
import ScavengerTestSupport
import Testing

/// What `scripts/run.sh` prints once the daemon is up: the URLs of the pages on its HTTP port
/// (`announce_http_urls` of `scripts/lib.sh`, run here against a daemon of the test build).
@Suite("scripts/run.sh's URLs")
struct RunScriptTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `bash -c script` in the project's root, with `scripts/lib.sh` sourced and the shell options
    /// `scripts/run.sh` runs under (`set -euo pipefail`); answers stdout.
    static func bash(_ script: String) throws -> (status: Int32, stdout: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", "set -euo pipefail; source scripts/lib.sh; " + script]
        process.currentDirectoryURL = root
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = readToEnd(out.fileHandleForReading)
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test("once /healthz answers 200 the pages, the console and /metrics are listed, and each answers 200")
    func announces() async throws {
        try await TestEnvironment.make().use { environment in
            let daemon = try await DaemonProcess(environment: environment, ["--http-port", "0"])
            try await eventually("the HTTP port listens") { daemon.httpPort != nil }
            let http = try #require(daemon.httpPort), line = try #require(daemon.port)
            let pid = daemon.process.processIdentifier
            let announced = try Self.bash("announce_http_urls 127.0.0.1 \(http) \(line) \(pid) 120")
            #expect(announced.status == 0)
            #expect(announced.stdout.contains("scavengerd is up"), "\(announced.stdout)")
            let base = "http://127.0.0.1:\(http)"
            for path in ["/play", "/host", "/", "/mod/", "/metrics", "/healthz"] {
                #expect(announced.stdout.contains("\n  \(base)\(path) "), "\(path) missing from \(announced.stdout)")
                let status = try Self.bash("http_status 127.0.0.1 \(http) \(path)").stdout
                #expect(status == "200\n", "GET \(path): \(status)")
            }
            #expect(announced.stdout.contains("nc 127.0.0.1 \(line)"))
            // A wildcard address is reached on loopback; an IPv6 one in brackets.
            #expect(try Self.bash("http_url_host 0.0.0.0; http_url_host ::; http_url_host ::1; http_url_host example.org").stdout
                == "127.0.0.1\n[::1]\n[::1]\nexample.org\n")
            #expect(try await daemon.terminate())
        }
    }

    @Test("with --http-tls-cert the URLs are https:// and /healthz is asked over TLS; how to serve a LAN is said")
    func announcesHTTPS() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scavenger-run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let files = try ReloadTests.certificate(in: directory)
        try await TestEnvironment.make().use { environment in
            let daemon = try await DaemonProcess(
                environment: environment, ["--http-port", "0", "--http-tls-cert", files.certificate.path, "--http-tls-key", files.key.path])
            try await eventually("the HTTPS port listens") { daemon.httpPort != nil }
            let http = try #require(daemon.httpPort), line = try #require(daemon.port)
            let announced = try Self.bash("announce_http_urls 127.0.0.1 \(http) \(line) \(daemon.process.processIdentifier) 120 https")
            #expect(announced.stdout.contains("scavengerd is up"), "\(announced.stdout)")
            #expect(announced.stdout.contains("\n  https://127.0.0.1:\(http)/play "), "\(announced.stdout)")
            #expect(announced.stdout.contains("SCAVENGER_HOST=0.0.0.0 scripts/run.sh --http-tls-cert"), "\(announced.stdout)")
            #expect(try Self.bash("https_status 127.0.0.1 \(http) /play").stdout == "200\n")
            #expect(try await daemon.terminate())
        }
        // Plain HTTP on every address: a warning that phones will not share their location.
        let lan = try Self.bash("announce_lan 0.0.0.0 7468 http").stdout
        #expect(lan.contains("phones will not share their location"), "\(lan)")
    }

    @Test("nothing is printed when the daemon ends before it is up")
    func silentWhenGone() throws {
        // A process that has ended: the announcer stops waiting at once.
        let ended = Process()
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        let announced = try Self.bash("announce_http_urls 127.0.0.1 9 7467 \(ended.processIdentifier) 120")
        #expect(announced.status == 0 && announced.stdout.isEmpty, "\(announced.stdout)")
    }

    @Test("a port already in use is named in plain words, with its flag, and the daemon exits 1")
    func portInUse() async throws {
        try await TestEnvironment.make().use { environment in
            let first = try await DaemonProcess(environment: environment, ["--http-port", "0"])
            try await eventually("the HTTP port listens") { first.httpPort != nil }
            let line = try #require(first.port), http = try #require(first.httpPort)
            for (arguments, flag, port) in [
                (["serve", "--port", "\(line)"], "--port", line),
                (["serve", "--port", "0", "--http-port", "\(http)"], "--http-port", http),
            ] {
                let second = try Executable.run(arguments, configuration: environment.configuration)
                #expect(second.status == 1)
                let message = second.stderr.split(separator: "\n").last.map(String.init) ?? ""
                #expect(message == "scavengerd: cannot listen on 127.0.0.1:\(port) (\(flag)): the address is already in use, "
                    + "by another scavengerd or another program; stop it or choose another port", "\(second.stderr)")
                #expect(!second.stderr.contains("bind(") && !second.stderr.contains("errno"), "\(second.stderr)")
            }
            #expect(try await first.terminate())
        }
    }
}
