import CoreMetrics
import Logging
import Mail
import ScavengerStore
import ServiceLifecycle

/// How the sender works through the outbox.
public struct MailSenderConfiguration: Sendable {
    /// How often the outbox is looked at when it had nothing due; default 1 s.
    public var pollInterval: Duration
    /// How long a claimed mail is leased to this daemon, in seconds; default 120 (longer than a
    /// send may take). Should the daemon die while sending, another sends it after this.
    public var leaseSeconds: Int
    /// The wait before the second try, in seconds; it doubles on each failure. Default 5.
    public var firstRetrySeconds: Double
    /// The longest wait between tries, in seconds; default 15 minutes.
    public var maximumRetrySeconds: Double
    /// Tries before a mail is given up; default 30 (days of an unreachable server at the maximum).
    public var maximumAttempts: Int

    public init(
        pollInterval: Duration = .seconds(1), leaseSeconds: Int = 120, firstRetrySeconds: Double = 5,
        maximumRetrySeconds: Double = 900, maximumAttempts: Int = 30
    ) {
        self.pollInterval = pollInterval
        self.leaseSeconds = leaseSeconds
        self.firstRetrySeconds = firstRetrySeconds
        self.maximumRetrySeconds = maximumRetrySeconds
        self.maximumAttempts = maximumAttempts
    }

    /// The wait after failed try number `attempt` (1 for the first), with up to 20 % jitter so
    /// that daemons do not retry in step: nil when the mail is given up.
    public func retryDelay(afterAttempt attempt: Int, jitter: Double = Double.random(in: 0 ... 0.2)) -> Double? {
        guard attempt < maximumAttempts else { return nil }
        let base = min(maximumRetrySeconds, firstRetrySeconds * Double(1 << min(max(attempt - 1, 0), 30)))
        return base * (1 + jitter)
    }
}

/// The outbox's sender, a service the daemon runs: claims one due mail at a time (skipping
/// what another daemon holds), sends it with the SMTP client, and marks it sent, or due again
/// after a back-off, or given up after a permanent refusal or too many tries. Counts sent mails,
/// tries that failed but may work later (retried), tries that need someone (failed: a mail given
/// up, or refused by a relay without STARTTLS, which stays queued), and the outbox's queue, as
/// metrics; logs each outcome.
public final class MailSender: Service, Sendable {
    let store: Database
    let client: SMTPClient
    let configuration: MailSenderConfiguration
    let logger: Logger
    let sent: Counter
    let retried: Counter
    let failed: Counter
    let queued: Gauge

    public init(
        store: Database, client: SMTPClient, configuration: MailSenderConfiguration = MailSenderConfiguration(),
        logger: Logger, metrics: (any MetricsFactory)? = nil
    ) {
        self.store = store
        self.client = client
        self.configuration = configuration
        self.logger = logger
        let factory = metrics ?? MetricsSystem.factory
        sent = Counter(label: "scavenger_mail_sent_total", factory: factory)
        retried = Counter(label: "scavenger_mail_retried_total", factory: factory)
        failed = Counter(label: "scavenger_mail_failed_total", factory: factory)
        queued = Gauge(label: "scavenger_mail_queued", factory: factory)
    }

    public func run() async throws {
        // Ends on graceful shutdown (or cancellation) as a normal return: a mail being sent
        // stays leased and is sent again (by this daemon or another) once the lease is over.
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    while try await self.sendOne() {}
                    self.queued.record(try await self.store.outboxCounts().queued)
                } catch let error as StoreError {
                    self.logger.warning("mail outbox unavailable", metadata: ["error": "\(error)"])
                }
                try await Task.sleep(for: self.configuration.pollInterval)
            }
        }
        await client.shutdown()
    }

    /// Sends the next due mail, if any; false when none was due.
    func sendOne() async throws(StoreError) -> Bool {
        guard let mail = try await store.claimMail(leaseSeconds: configuration.leaseSeconds) else { return false }
        let message = MailMessage(
            messageID: mail.messageID, to: mail.recipient, subject: mail.subject, body: mail.body,
            date: mail.createdMicroseconds / 1_000_000)
        var metadata: Logger.Metadata = ["mail.id": "\(mail.id)", "mail.message_id": "\(mail.messageID)", "mail.attempt": "\(mail.attempts)"]
        do {
            try await client.send(message)
        } catch {
            metadata["error"] = "\(error.description)"
            let delay = error.isPermanent ? nil : configuration.retryDelay(afterAttempt: mail.attempts)
            try await store.markMailFailed(id: mail.id, error: error.description, retryAfterSeconds: delay)
            guard let delay else {
                failed.increment()
                logger.error("mail given up", metadata: metadata)
                return true
            }
            metadata["retry_in_s"] = "\(Int(delay.rounded(.up)))"
            if error.isTLSUnavailable {
                // Not the server being away but a relay that would read the mail in the clear:
                // a failure someone must see (the relay fixed, or --smtp-allow-plaintext), while
                // the mail stays queued for the tries left.
                failed.increment()
                logger.error("mail not sent: the SMTP server offers no STARTTLS; it stays queued", metadata: metadata)
            } else {
                retried.increment()
                logger.warning("mail not sent; will retry", metadata: metadata)
            }
            return true
        }
        // Accepted: from here on it must never be sent again. Should this update fail (the
        // database away), the lease runs out and it is sent once more, with the same Message-ID.
        try await store.markMailSent(id: mail.id)
        sent.increment()
        logger.info("mail sent", metadata: metadata)
        return true
    }
}
