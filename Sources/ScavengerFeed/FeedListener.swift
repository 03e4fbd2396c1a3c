import Logging
import NIOPosix
import Postgres
import ScavengerStore
import ServiceLifecycle

/// Keeps the feed in step with writes made by other processes (other daemons, the CLI):
/// listens on a connection of its own and applies each `NOTIFY`. When the connection breaks it
/// reconnects and reloads the whole feed, since notifications may have been missed. It also
/// drops expired pins from memory now and then.
public final class FeedListener: Service, Sendable {
    private let feed: Feed
    private let configuration: PostgresConfiguration
    private let logger: Logger
    private let purgeIntervalSeconds: Double
    private let initialConnection: PostgresConnection?

    /// - Parameter listening: a connection already listening (from ``listen(_:)``), opened before
    ///   the feed was loaded so that no change between the load and the listening is lost.
    public init(
        feed: Feed, configuration: PostgresConfiguration, logger: Logger, listening: PostgresConnection? = nil,
        purgeIntervalSeconds: Double = 60
    ) {
        self.feed = feed
        self.configuration = configuration
        self.logger = logger
        self.initialConnection = listening
        self.purgeIntervalSeconds = purgeIntervalSeconds
    }

    /// Opens a connection that listens for changes (blocking).
    public static func listen(_ configuration: PostgresConfiguration) throws -> PostgresConnection {
        let connection = try PostgresConnection.connect(configuration)
        try connection.query("LISTEN \(unescaped: PinChange.channel)")
        try connection.query("LISTEN \(unescaped: PinChange.regionsChannel)")
        return connection
    }

    public func run() async throws {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        defer { thread.shutdownGracefully { _ in } }
        await cancelWhenGracefulShutdown {
            var pending = self.initialConnection
            while !Task.isCancelled {
                do {
                    let connection: PostgresConnection
                    if let ready = pending {
                        connection = ready
                        pending = nil
                    } else {
                        connection = try await thread.runIfActive { [configuration = self.configuration] in
                            try Self.listen(configuration)
                        }
                        // Changes made while nobody listened are not replayed: reload everything.
                        let count = try await self.feed.load()
                        self.logger.info("feed reloaded after reconnecting", metadata: ["pins": "\(count)"])
                    }
                    try await self.listen(on: connection, thread: thread)
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.warning("feed listener lost its connection; retrying", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    private func listen(on connection: PostgresConnection, thread: NIOThreadPool) async throws {
        var lastPurge = ContinuousClock.now
        while !Task.isCancelled {
            let notifications = try await thread.runIfActive { [origin = feed.database.instanceID] in
                try Self.waitForChanges(on: connection, notMadeBy: origin, timeoutMilliseconds: 500)
            }
            for notification in notifications {
                await handle(notification)
            }
            if ContinuousClock.now - lastPurge > .seconds(purgeIntervalSeconds) {
                let purged = feed.purgeExpired()
                if purged > 0 { logger.debug("expired pins dropped from memory", metadata: ["pins": "\(purged)"]) }
                lastPurge = .now
            }
        }
    }

    /// Waits (blocking) until a notification this feed must act on arrives, or the timeout
    /// passes. The announcements of this process's own pin writes are dropped here, on the
    /// listener's thread: the feed already holds those pins, and every group commit sends one.
    static func waitForChanges(
        on connection: PostgresConnection, notMadeBy origin: String, timeoutMilliseconds: Int
    ) throws(PostgresError) -> [PostgresNotification] {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMilliseconds)
        while true {
            let left = deadline - .now
            guard left > .zero else { return [] }
            let received = try connection.waitForNotifications(
                timeoutMilliseconds: Int((left / .milliseconds(1)).rounded(.up)))
            let foreign = received.filter { !PinChange.isAnnouncement($0, madeBy: origin) }
            if !foreign.isEmpty || received.isEmpty { return foreign }
        }
    }

    private func handle(_ notification: PostgresNotification) async {
        do {
            switch notification.channel {
            case PinChange.channel:
                // This process's own announcements were dropped by `waitForChanges`.
                guard let (_, changes) = PinChange.parse(notification.payload) else { return }
                for change in changes { try await feed.apply(change) }
            case PinChange.regionsChannel:
                let parts = notification.payload.split(separator: " ")
                guard parts.count == 2 else { return }
                try await feed.regionChanged(named: String(parts[1]))
            default:
                return
            }
        } catch {
            logger.warning("could not apply a change", metadata: ["payload": "\(notification.payload)", "error": "\(error)"])
        }
    }
}
