import Foundation
import NIOCore
import Postgres
import ScavengerTestSupport
import Testing

/// The value of an unlabelled metric in the daemon's `/metrics` at HTTP port `port` (nil when
/// it is not listed).
func metric(_ name: String, port: Int) async throws -> Double? {
    let address = try SocketAddress(ipAddress: "127.0.0.1", port: port)
    let lines = try await TestConnection.talk(address) { writer, reader in
        try await writer.send("GET /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        return try await reader.rest()
    }
    let line = lines.first { $0.hasPrefix(name + " ") }
    return line.flatMap { Double($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespacesAndNewlines)) }
}

/// The outbox's one mail that is not a decoy: its tries, its last error, whether it was sent or given up.
func onlyMail(_ environment: TestEnvironment) async throws -> (attempts: Int, error: String?, sent: Bool, givenUp: Bool)? {
    let rows = try await environment.pool.query("""
        SELECT attempts, last_error, sent_at IS NOT NULL AS sent, failed_at IS NOT NULL AS given_up
        FROM mail_outbox WHERE NOT decoy
        """)
    guard rows.count == 1 else { return nil }
    let attempts: Int = try rows[0].int("attempts"), error: String? = try rows[0].string("last_error")
    let sent: Bool = try rows[0].bool("sent"), givenUp: Bool = try rows[0].bool("given_up")
    return (attempts, error, sent, givenUp)
}

/// The 1.5 rules for the daemon's SMTP relay, with `scavengerd serve` as a process: STARTTLS is
/// required on smtp:// unless --smtp-allow-plaintext, credentials come only from the environment,
/// and a flag that needs mail needs --smtp-url.
extension MailTests {
    @Test("smtp:// to a relay without STARTTLS: nothing is sent, the mail stays queued, logged and counted failed; with --smtp-allow-plaintext it goes")
    func plainRelayRefused() async throws {
        let capture = try SMTPCapture()
        try capture.start()
        defer { capture.stop() }
        try await TestEnvironment.make().use { environment in
            let flags = [
                "--smtp-url", capture.url, "--mail-from", "scavenger@test.invalid", "--mail-first-retry-seconds", "0.2",
                "--mail-lease-seconds", "2", "--http-port", "0",
            ]
            let strict = try await DaemonProcess(environment: environment, flags)
            try await converse(try strict.address) { client in
                try await client.register("olga")
                #expect(try await client.call("FORGOT olga") == "OK true")
            }
            // Tried twice (so retried with its back-off), refused each time for want of STARTTLS.
            try await eventually("two tries have failed") { try await onlyMail(environment).map { $0.attempts >= 2 } ?? false }
            let refused = try #require(try await onlyMail(environment))
            #expect(!refused.sent && !refused.givenUp, "it stays queued")
            #expect(refused.error?.contains("STARTTLS") == true, "\(refused.error ?? "no error")")
            #expect(try capture.mails().isEmpty, "nothing reached the relay")
            #expect(strict.stderr.contains("the SMTP server offers no STARTTLS; it stays queued"), "\(strict.stderr.suffix(2000))")
            let http = try #require(strict.httpPort)
            #expect((try await metric("scavenger_mail_failed_total", port: http) ?? 0) >= 1)
            #expect((try await metric("scavenger_mail_sent_total", port: http) ?? 0) == 0)
            #expect((try await metric("scavenger_mail_retried_total", port: http) ?? 0) == 0, "a refusal for want of TLS is a failure, not a retry")
            #expect(try await strict.terminate())
            #expect(try capture.mails().isEmpty)

            // The same relay allowed in plain text (as on loopback): the queued mail goes, once.
            let plain = try await DaemonProcess(environment: environment, flags + ["--smtp-allow-plaintext"])
            try await eventually("the mail is sent") { try await onlyMail(environment)?.sent ?? false }
            #expect(try await plain.terminate())
            let mails = try capture.mails()
            #expect(mails.count == 1)
            #expect(mails.first.flatMap { header("X-Capture-TLS", in: $0) } == "none")
            #expect(mails.first.flatMap(mailedCode) != nil)
        }
    }

    @Test("smtp:// to a relay with STARTTLS and a certificate from --smtp-ca-file: the mail goes over TLS")
    func startTLSRelay() async throws {
        let (certificate, key) = try selfSignedCertificate()
        let capture = try SMTPCapture(tls: ["starttls", certificate, key])
        try capture.start()
        defer { capture.stop() }
        try await TestEnvironment.make().use { environment in
            let daemon = try await DaemonProcess(environment: environment, [
                "--smtp-url", capture.url, "--mail-from", "scavenger@test.invalid", "--smtp-ca-file", certificate,
            ])
            try await converse(try daemon.address) { client in
                try await client.register("petra")
                #expect(try await client.call("FORGOT petra") == "OK true")
            }
            try await eventually("the mail is sent") { try await onlyMail(environment)?.sent ?? false }
            #expect(try await daemon.terminate())
            let mails = try capture.mails()
            #expect(mails.count == 1)
            let protection = mails.first.flatMap { header("X-Capture-TLS", in: $0) } ?? "none"
            #expect(protection.hasPrefix("starttls TLSv1."), "the relay saw \(protection)")
            #expect(mails.first.flatMap { header("X-Envelope-To", in: $0) } == "petra@example.org")
            #expect(mails.first.flatMap(mailedCode) != nil)
        }
    }

    @Test("serve refuses at start, saying why, credentials in the SMTP URL and mail flags that need an SMTP server", arguments: [
        (["--smtp-url", "smtp://scavenger:s3cret@127.0.0.1:25"], [:], "$SCAVENGER_SMTP_USER and $SCAVENGER_SMTP_PASSWORD"),
        (["--smtp-url", "smtps://scavenger@mail.example.org/example.org"], [:], "--smtp-url must not carry a user or password"),
        ([], ["SCAVENGER_SMTP_URL": "smtp://scavenger:s3cret@127.0.0.1:25"], "$SCAVENGER_SMTP_URL must not carry a user or password"),
        (["--hunts-need-verified-email"], [:], "--hunts-need-verified-email needs --smtp-url"),
        (["--smtp-allow-plaintext"], [:], "--smtp-allow-plaintext is for an smtp:// server"),
        (["--smtp-url", "smtps://127.0.0.1:465", "--smtp-allow-plaintext"], [:], "--smtp-allow-plaintext is for an smtp:// server"),
        (["--smtp-url", "smtp://127.0.0.1:25", "--smtp-ca-file", "/nonexistent/ca.pem"], [:], "--smtp-ca-file /nonexistent/ca.pem: no such file"),
        (["--smtp-ca-file", "/etc/hostname"], [:], "--smtp-ca-file needs --smtp-url"),
    ] as [([String], [String: String], String)])
    func refusedAtStart(flags: [String], environment: [String: String], message: String) throws {
        // A database that is not there: flags that passed would make serve wait for it.
        let configuration = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/none?connect_timeout=1")
        let result = try Executable.run(
            ["serve", "--port", "0", "--mail-from", "scavenger@test.invalid"] + flags, configuration: configuration, environment: environment)
        #expect(result.status != 0)
        #expect(result.stderr.contains(message), "\(result.stderr)")
        #expect(!result.stderr.contains("s3cret"), "the refusal repeats the password: \(result.stderr)")
    }
}
