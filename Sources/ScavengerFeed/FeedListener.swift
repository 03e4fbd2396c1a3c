import Logging
import NIOPosix
import ScavengerStore
import ServiceLifecycle

/// Keeps the feed in step with writes made by other processes (other daemons, the CLI): waits
/// for their announcements on a ``ChangeListener`` of its own, on a thread of its own, and applies
/// each. When the connection breaks it reconnects and reloads the whole feed, since
/// announcements may have been missed. It also drops expired pins from memory now and then.
public final class FeedListener: Service, Sendable {
    private let feed: Feed
    private let logger: Logger
    private let purgeIntervalSeconds: Double
    private let initialListener: ChangeListener?

    /// - Parameter listening: a listener opened before the feed was loaded (``Feed/startListening()``),
    ///   so that no change between the load and the listening is lost.
    public init(feed: Feed, logger: Logger, listening: ChangeListener? = nil, purgeIntervalSeconds: Double = 60) {
        self.feed = feed
        self.logger = logger
        self.initialListener = listening
        self.purgeIntervalSeconds = purgeIntervalSeconds
    }

    public func run() async throws {
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        defer { thread.shutdownGracefully { _ in } }
        await cancelWhenGracefulShutdown {
            var pending = self.initialListener
            while !Task.isCancelled {
                do {
                    let listener: ChangeListener
                    if let ready = pending {
                        listener = ready
                        pending = nil
                    } else {
                        listener = try await thread.runIfActive { [database = self.feed.database] in
                            try database.listenForChanges()
                        }
                        // Changes made while nobody listened are not replayed: reload everything.
                        let count = try await self.feed.load()
                        self.logger.info("feed reloaded after reconnecting", metadata: ["pins": "\(count)"])
                    }
                    try await self.listen(on: listener, thread: thread)
                } catch is CancellationError {
                    return
                } catch {
                    self.logger.warning("feed listener lost its connection; retrying", metadata: ["error": "\(error)"])
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    private func listen(on listener: ChangeListener, thread: NIOThreadPool) async throws {
        var lastPurge = ContinuousClock.now
        while !Task.isCancelled {
            let changes = try await thread.runIfActive {
                try listener.waitForChanges(timeoutMilliseconds: 500)
            }
            for change in changes {
                await apply(change)
            }
            if ContinuousClock.now - lastPurge > .seconds(purgeIntervalSeconds) {
                let purged = feed.purgeExpired()
                if purged > 0 { logger.debug("expired pins dropped from memory", metadata: ["pins": "\(purged)"]) }
                lastPurge = .now
            }
        }
    }

    private func apply(_ change: AnnouncedChange) async {
        do {
            switch change {
            case .pins(let changes):
                for change in changes { try await feed.apply(change) }
            case .region(let name):
                try await feed.regionChanged(named: name)
            }
        } catch {
            logger.warning("could not apply a change", metadata: ["change": "\(change)", "error": "\(error)"])
        }
    }
}
