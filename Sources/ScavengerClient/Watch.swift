import Foundation

/// What a watch of an area delivers.
public enum WatchEvent: Sendable, Hashable {
    /// A fresh snapshot begins: forget the pins you hold; those inside follow as ``pin(_:seq:)``,
    /// then ``ready(seq:)``. It comes first, and again whenever the watch could not resume (the
    /// server's change log no longer reached back, or the connection broke mid-snapshot).
    case snapshot(seq: Int)
    /// A pin visible inside the circle (new, changed or shown again): add or replace it.
    case pin(Pin, seq: Int)
    /// A pin that left the circle (deleted, removed, hidden, expired): drop it.
    case gone(id: String, seq: Int)
    /// The snapshot is complete; live events follow.
    case ready(seq: Int)
    /// The connection broke; the watch is resuming (events missed meanwhile will come).
    case disconnected
    /// The watch resumed after `seq`: what changed meanwhile comes next, then live events.
    case resumed(seq: Int)
}

/// What a watch of a hunt delivers.
public enum HuntEvent: Sendable, Hashable {
    /// The watch is in place (the server answered `WATCH HUNT`): every event from now on comes.
    case started
    /// The hunt started, was extended or ended.
    case hunt(Hunt)
    /// The host sent a hint.
    case hint(Hint)
    /// A player's check-in at a stop was accepted (in a team hunt `player` is the member who
    /// checked in, not the team).
    case found(player: String, stop: String, points: Int)
    /// A leaderboard entry's points or rank changed: in a team hunt, a team's entry (with its
    /// `members`).
    case score(LeaderboardEntry)
    /// A message in the hunt's chat.
    case reply(Reply)
    /// A player earned a badge in the hunt.
    case badge(player: String, badge: Badge)
    /// The server ended the watch, and the stream ends after this: the player left the hunt
    /// (`left`) or moderators removed it (`removed`).
    case closed(reason: String)
    /// The connection broke and the watch started again: hunt watches cannot resume, so read
    /// the hunt and its leaderboard again (`HUNT`, `LEADERBOARD`) for what changed meanwhile.
    case reconnected
}

private struct AreaEventBody: Decodable {
    var type: String
    var seq: Int?
    var pin: Pin?
    var id: String?
}

private struct HuntEventBody: Decodable {
    var type: String
    var hunt: Hunt?
    var text: String?
    var at: Date?
    var player: String?
    var stop: String?
    var points: Int?
    var entry: LeaderboardEntry?
    var reply: Reply?
    var reason: String?
    var badge: Badge?
}

extension ScavengerClient {
    /// Watches a circle: a snapshot of the pins inside (`WATCH … SNAPSHOT`), then every change,
    /// across reconnects (`WATCH … SINCE` the last `seq` seen). Ends when the task iterating it is
    /// cancelled or the iteration stops; throws only an `ERR` of the watch itself (a bad argument).
    public nonisolated func watch(
        lat: Double, lon: Double, radiusMeters: Double, kind: PinKind? = nil
    ) -> AsyncThrowingStream<WatchEvent, any Error> {
        var base = Line("WATCH")
        base.add(lat)
        base.add(lon)
        base.add(radiusMeters)
        base.option("KIND", kind?.rawValue)
        let command = base
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: WatchEvent.self)
        let task = Task { await self.runAreaWatch(command, continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Watches a hunt the caller hosts or plays (`WATCH HUNT id`): its state, hints, finds,
    /// scores and chat. After a broken connection it watches again and says so with
    /// ``HuntEvent/reconnected``.
    public nonisolated func watchHunt(_ id: String) -> AsyncThrowingStream<HuntEvent, any Error> {
        var command = Line("WATCH HUNT")
        command.add(id)
        let line = command
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: HuntEvent.self)
        let task = Task { await self.runHuntWatch(line, continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Starts a watch with `line` on a connection and routes its events to a stream: the reply's
    /// JSON, the connection and the events; nil after a lost connection or `UNAVAILABLE` (try
    /// again); throws any other `ERR`.
    private func startWatch(_ line: String) async throws
        -> (reply: WatchReply, connection: LineConnection, events: AsyncStream<Substring>)?
    {
        var used: LineConnection?
        let connection: LineConnection
        let reply: String
        do {
            connection = try await connected()
            used = connection
            reply = try await connection.send(line)
        } catch is ConnectionLost {
            lost(used)
            return nil
        }
        if let error = ScavengerError(errLine: reply[...]) {
            if error.code == .unavailable { return nil }
            throw error
        }
        guard reply.hasPrefix("OK ") else { throw ScavengerError(code: .badReply, message: String(reply.prefix(200))) }
        let started = try Self.decode(WatchReply.self, reply.dropFirst(3))
        let (events, sink) = AsyncStream.makeStream(of: Substring.self)
        connection.route(started.watch) { event in
            if let event { sink.yield(event) } else { sink.finish() }
        }
        return (started, connection, events)
    }

    private func runAreaWatch(_ command: Line, _ output: AsyncThrowingStream<WatchEvent, any Error>.Continuation) async {
        var lastSeq: Int?
        // Whether the events so far form a complete picture (the snapshot's `ready` came): only
        // then may a new watch resume after `lastSeq` (a snapshot's pins all carry one seq).
        var complete = false
        var failures = 0
        while !Task.isCancelled {
            let resuming = complete && lastSeq != nil
            let line = command.text + (resuming ? " SINCE \(lastSeq!)" : " SNAPSHOT")
            let started: (reply: WatchReply, connection: LineConnection, events: AsyncStream<Substring>)?
            do {
                started = try await startWatch(line)
            } catch is CancellationError {
                break
            } catch let error as ScavengerError where resuming && error.code == .badArgument {
                // The seq is past the log's end (the database was replaced or restored): start over.
                complete = false
                continue
            } catch {
                output.finish(throwing: error)
                return
            }
            guard let started else {
                failures += 1
                try? await Task.sleep(for: backoff(failures))
                continue
            }
            failures = 0
            let seq = started.reply.seq ?? 0
            if resuming {
                if started.reply.resumed == true {
                    output.yield(.resumed(seq: lastSeq!))
                } else {
                    // The log no longer reaches back: start over with a snapshot.
                    started.connection.unroute(started.reply.watch)
                    _ = try? await started.connection.send("UNWATCH \(started.reply.watch)")
                    complete = false
                    continue
                }
            } else {
                output.yield(.snapshot(seq: seq))
                lastSeq = seq
            }
            var overflowed = false
            await withTaskCancellationHandler {
                for await text in started.events {
                    guard let event = try? Self.decode(AreaEventBody.self, text) else { continue }
                    switch event.type {
                    case "pin":
                        guard let pin = event.pin else { continue }
                        lastSeq = event.seq ?? lastSeq
                        output.yield(.pin(pin, seq: event.seq ?? seq))
                    case "gone":
                        guard let id = event.id else { continue }
                        lastSeq = event.seq ?? lastSeq
                        output.yield(.gone(id: id, seq: event.seq ?? seq))
                    case "ready":
                        complete = true
                        output.yield(.ready(seq: event.seq ?? seq))
                    case "overflow":
                        overflowed = true
                        started.connection.unroute(started.reply.watch)
                    default:
                        continue
                    }
                }
            } onCancel: {
                started.connection.unroute(started.reply.watch)
            }
            if Task.isCancelled {
                if started.connection.isActive { _ = try? await started.connection.send("UNWATCH \(started.reply.watch)") }
                break
            }
            if !overflowed {
                output.yield(.disconnected)
                lost(started.connection)
            }
        }
        output.finish()
    }

    private func runHuntWatch(_ command: Line, _ output: AsyncThrowingStream<HuntEvent, any Error>.Continuation) async {
        var failures = 0
        var first = true
        while !Task.isCancelled {
            let started: (reply: WatchReply, connection: LineConnection, events: AsyncStream<Substring>)?
            do {
                started = try await startWatch(command.text)
            } catch is CancellationError {
                break
            } catch {
                output.finish(throwing: error)
                return
            }
            guard let started else {
                failures += 1
                try? await Task.sleep(for: backoff(failures))
                continue
            }
            failures = 0
            output.yield(first ? .started : .reconnected)
            first = false
            var closedBy: String?
            await withTaskCancellationHandler {
                for await text in started.events {
                    guard let event = try? Self.decode(HuntEventBody.self, text) else { continue }
                    switch event.type {
                    case "hunt": if let hunt = event.hunt { output.yield(.hunt(hunt)) }
                    case "hint": if let text = event.text, let at = event.at { output.yield(.hint(Hint(text: text, at: at))) }
                    case "found":
                        if let player = event.player, let stop = event.stop {
                            output.yield(.found(player: player, stop: stop, points: event.points ?? 0))
                        }
                    case "score": if let entry = event.entry { output.yield(.score(entry)) }
                    case "reply": if let reply = event.reply { output.yield(.reply(reply)) }
                    case "badge": if let player = event.player, let badge = event.badge { output.yield(.badge(player: player, badge: badge)) }
                    case "closed":
                        closedBy = event.reason ?? "closed"
                        started.connection.unroute(started.reply.watch)
                    default: continue
                    }
                }
            } onCancel: {
                started.connection.unroute(started.reply.watch)
            }
            if let closedBy {
                output.yield(.closed(reason: closedBy))
                break
            }
            if Task.isCancelled {
                if started.connection.isActive { _ = try? await started.connection.send("UNWATCH \(started.reply.watch)") }
                break
            }
            lost(started.connection)
        }
        output.finish()
    }
}
