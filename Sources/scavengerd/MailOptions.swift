import ArgumentParser
import Foundation
import Logging
import Mail
import ScavengerBoard
import ScavengerHTTP
import ScavengerMail
import ScavengerStore

/// `serve`'s mail options: the SMTP server mail goes through (`FORGOT`, `VERIFY`), the sender,
/// the trust and plaintext rules, and the rule that needs mail (`--hunts-need-verified-email`).
/// Credentials come from the environment only, so that no password sits in a process list.
struct MailOptions: ParsableArguments {
    @Option(help: "SMTP server the daemon sends mail through (FORGOT, VERIFY): smtp://host:port (STARTTLS required; see --smtp-allow-plaintext) or smtps://host:port, with no user or password in it. Default: $SCAVENGER_SMTP_URL, else no mail (those commands answer UNAVAILABLE). Credentials: $SCAVENGER_SMTP_USER and $SCAVENGER_SMTP_PASSWORD only, so that no password sits in a process list.")
    var smtpUrl: String?
    @Option(help: "The address mails come from (default: $SCAVENGER_MAIL_FROM); needed with --smtp-url.") var mailFrom: String?
    @Option(help: "PEM file of the certificate authorities trusted for the SMTP server's TLS (default: the system's).") var smtpCaFile: String?
    @Flag(help: "Let an smtp:// server that offers no STARTTLS have the mail in plain text (a relay on loopback); without it such a server gets none: the mail stays queued and each try counts as failed.")
    var smtpAllowPlaintext = false
    @Flag(help: "Only users with a verified email (VERIFY) may create hunts; needs --smtp-url.") var huntsNeedVerifiedEmail = false
    // For tests: the outbox sender's first retry wait and lease, in seconds (defaults 5 and 120).
    @Option(help: .hidden) var mailFirstRetrySeconds: Double?
    @Option(help: .hidden) var mailLeaseSeconds: Int?

    /// The SMTP client's settings, from the flags and the environment; nil without an SMTP URL.
    func smtpConfiguration() throws -> SMTPConfiguration? {
        let environment = ProcessInfo.processInfo.environment
        guard let url = smtpUrl ?? environment["SCAVENGER_SMTP_URL"], !url.isEmpty else { return nil }
        let from = mailFrom ?? environment["SCAVENGER_MAIL_FROM"] ?? ""
        if let problem = SMTPConfiguration.check(url: url, from: from, urlName: smtpUrl == nil ? "$SCAVENGER_SMTP_URL" : "--smtp-url") {
            throw ArgumentParser.ValidationError(problem)
        }
        return SMTPConfiguration(
            url: url, from: from, username: environment["SCAVENGER_SMTP_USER"].flatMap { $0.isEmpty ? nil : $0 },
            password: environment["SCAVENGER_SMTP_PASSWORD"].flatMap { $0.isEmpty ? nil : $0 }, caFile: smtpCaFile,
            allowPlaintext: smtpAllowPlaintext)
    }

    /// Refuses, saying why, mail flags that do not fit together: a bad URL or sender, credentials
    /// in the URL, and flags that need an SMTP server without one.
    func validate() throws {
        let smtp = try smtpConfiguration()
        if huntsNeedVerifiedEmail && smtp == nil {
            throw ArgumentParser.ValidationError(
                "--hunts-need-verified-email needs --smtp-url (or $SCAVENGER_SMTP_URL): without mail no one can verify "
                    + "an email, so no one could create a hunt")
        }
        if smtpAllowPlaintext && !(smtp.map { SMTPConfiguration.isStartTLS($0.url) } ?? false) {
            throw ArgumentParser.ValidationError("--smtp-allow-plaintext is for an smtp:// server given with --smtp-url (smtps:// is TLS from the start)")
        }
        if let smtpCaFile {
            guard smtp != nil else { throw ArgumentParser.ValidationError("--smtp-ca-file needs --smtp-url") }
            guard FileManager.default.isReadableFile(atPath: smtpCaFile) else {
                throw ArgumentParser.ValidationError("--smtp-ca-file \(smtpCaFile): no such file, or it cannot be read")
            }
        }
    }

    /// The board's rules for account recovery with `smtp` (nil: no mail, recovery unavailable).
    func recoveryRules(_ smtp: SMTPConfiguration?) -> RecoveryRules {
        RecoveryRules(
            mailEnabled: smtp != nil, messageIDDomain: smtp.map { String($0.from.split(separator: "@").last ?? "scavenger") } ?? "scavenger.invalid",
            huntsNeedVerifiedEmail: huntsNeedVerifiedEmail)
    }

    /// The outbox's sender through `smtp`. Each daemon runs one; rows are claimed one at a time,
    /// so two daemons never send one mail at once.
    func sender(_ smtp: SMTPConfiguration, store: Database, metrics: DaemonMetrics?, logger: Logger) -> MailSender {
        var configuration = MailSenderConfiguration()
        if let mailFirstRetrySeconds { configuration.firstRetrySeconds = max(0.1, mailFirstRetrySeconds) }
        if let mailLeaseSeconds { configuration.leaseSeconds = max(1, mailLeaseSeconds) }
        logger.info("sending mail", metadata: [
            "smtp": "\(smtp.url)", "from": "\(smtp.from)",
            "tls": "\(SMTPConfiguration.isStartTLS(smtp.url) ? (smtp.allowPlaintext ? "STARTTLS when offered" : "STARTTLS required") : "smtps")",
        ])
        return MailSender(store: store, client: SMTPClient(configuration: smtp), configuration: configuration, logger: logger, metrics: metrics?.factory)
    }
}
