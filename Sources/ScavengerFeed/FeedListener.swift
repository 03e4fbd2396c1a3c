import Foundation
import Logging
import NIOPosix
import ScavengerStore
import ServiceLifecycle
import Synchronization

/// Loads the feed and keeps it in step with the change log: waits for wake-ups on a
/// ``ChangeListener`` of its own, on a thread of its own, and catches the feed up after each.
///
/// While the database cannot be reached it retries (every second); the daemon serves meanwhile,
/// answering what needs the feed with `UNAVAILABLE` until the first load. When the listening
/// connection breaks it reconnects and replays the log from the feed's place, so no change is
/// lost and nothing is reloaded. It also catches up now and then without a wake-up (a safety
/// net), announces expiries to watches every second, and drops expired pins from memory. Ended
/// sessions it hears of (and, after each connect, "any") go to the store's ``SessionEndings``.
public final class FeedListener: Service, Sendable {
    private let feed: Feed
    private let logger: Logger
    private let purgeIntervalSeconds: Double
    private let initialListener: ChangeListener?

    /// How long one wait for a wake-up lasts before the listener looks around.
    static let waitMilliseconds = 500
    /// Catch-ups without a wake-up: in case one was missed, and to number what no daemon numbered
    /// (a write of a daemon that died right after its commit, of the command line or of psql:
    /// writers number nothing themselves, `db/0037`). Each catch-up numbers before it reads; with
    /// nothing to number it takes no lock and writes nothing.
    static let safetyCatchUpSeconds = 1.0
    /// How long the feed's place may trail this daemon's own new pins (already in the feed): a
    /// catch-up after each of their wake-ups would only read them again.
    static let ownPinsCatchUpMilliseconds = 250
    /// How often expired pins are announced to watches as `gone` (well within the contract's 5 s).
    static let expiryAnnouncementSeconds = 1.0

    /// - Parameter listening: a listener already open (``Feed/startListening()``), if any.
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
        // Expiries are announced on a clock of their own, on a thread of its own: neither waiting
        // on the database (a slow catch-up, a lost connection) nor a busy task pool may delay a
        // watch's `gone`.
        let announcer = ExpiryAnnouncer(feed: feed, intervalSeconds: Self.expiryAnnouncementSeconds)
        announcer.start()
        defer { announcer.stop() }
        await cancelWhenGracefulShutdown {
            var pending = self.initialListener
            var failures = 0
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
                    }
                    // Listening first, then reading the log: a change committed in between is
                    // both heard and read, never missed.
                    if !self.feed.isLoaded {
                        let started = ContinuousClock.now
                        let pins = try await self.feed.load()
                        let sizes = self.feed.indexStatistics
                        self.logger.info("feed loaded", metadata: [
                            "pins": "\(pins)", "regions": "\(self.feed.regionNames.count)",
                            "index_mb": "\(sizes.approximateBytes / 1_000_000)", "cells_mb": "\(sizes.cellBytes / 1_000_000)",
                            "cells": "\(sizes.cells)", "map_mb": "\((Double(sizes.mapBytes) / 100_000).rounded() / 10)",
                            "seconds": "\(ContinuousClock.now - started)",
                        ])
                    }
                    try await self.feed.catchUp()
                    // The rankings (logged by the hunts' feed, whichever task loads them).
                    _ = try await self.feed.hunts.loadIfNeeded()
                    try await self.feed.hunts.catchUp()
                    if failures > 0 {
                        self.logger.info("feed listener is back; replayed the change log", metadata: [
                            "change": "\(self.feed.appliedChange ?? 0)",
                        ])
                    }
                    failures = 0
                    // Sessions may have ended while nobody listened: every one held is checked.
                    self.feed.database.sessionEndings.heard([.any])
                    try await self.listen(on: listener, thread: thread)
                } catch is CancellationError {
                    return
                } catch {
                    failures += 1
                    if failures == 1 || failures % 30 == 0 {
                        self.logger.warning("feed listener cannot reach the database; retrying", metadata: [
                            "error": "\(error)", "attempts": "\(failures)",
                        ])
                    }
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    private func listen(on listener: ChangeListener, thread: NIOThreadPool) async throws {
        var lastPurge = ContinuousClock.now
        var lastCatchUp = ContinuousClock.now
        // This daemon's own new pins are in its feed already (``Feed/writeOwnPin(id:_:)``): their
        // wake-ups do not end a wait until `ownPinsCatchUpMilliseconds` after the first, and the
        // feed catches up at most that often for them, to move its place past them, so that
        // other writes' catch-ups do not find a backlog.
        let ownWriter = feed.database.writerID
        var ownPinsBehind = false
        while !Task.isCancelled {
            let wakeUp = try await thread.runIfActive {
                try listener.waitForChanges(
                    timeoutMilliseconds: Self.waitMilliseconds, ownWriter: ownWriter,
                    ownPinsWaitMilliseconds: Self.ownPinsCatchUpMilliseconds)
            }
            feed.database.sessionEndings.heard(listener.takeEndedSessions())
            if wakeUp == .ownNewPins || feed.takeFailedOwnWrites() { ownPinsBehind = true }
            let sinceCatchUp = ContinuousClock.now - lastCatchUp
            if wakeUp == .changes || sinceCatchUp > .seconds(Self.safetyCatchUpSeconds)
                || (ownPinsBehind && sinceCatchUp >= .milliseconds(Self.ownPinsCatchUpMilliseconds)) {
                try await feed.catchUp()
                try await feed.hunts.catchUp()
                lastCatchUp = .now
                ownPinsBehind = false
            } else if wakeUp == .hunts {
                // Only the hunts' log changed: the pins' feed has nothing to read.
                try await feed.hunts.catchUp()
            }
            // A hunt whose STARTS or ENDS passed is announced by every daemon's own clock.
            feed.hunts.announceScheduledChanges()
            if ContinuousClock.now - lastPurge > .seconds(purgeIntervalSeconds) {
                let purged = feed.purgeExpired()
                if purged > 0 { logger.debug("expired pins dropped from memory", metadata: ["pins": "\(purged)"]) }
                lastPurge = .now
            }
        }
    }
}

/// Calls ``Feed/announceExpiries()`` every interval on a thread of its own until stopped.
final class ExpiryAnnouncer: Sendable {
    private let feed: Feed
    private let intervalSeconds: Double
    private let stopped = Atomic<Bool>(false)

    init(feed: Feed, intervalSeconds: Double) {
        self.feed = feed
        self.intervalSeconds = intervalSeconds
    }

    func start() {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: intervalSeconds)
                if stopped.load(ordering: .relaxed) { return }
                if feed.isLoaded {
                    feed.announceExpiries()
                    feed.tickMapWatches()
                }
            }
        }
        thread.name = "expiry-announcer"
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
    }
}
