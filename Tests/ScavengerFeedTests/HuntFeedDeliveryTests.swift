import Foundation
import ScavengerCore
@testable import ScavengerFeed
@testable import ScavengerStore
import ScavengerTestSupport
import Testing

/// The hunts' feed without a database (its store's port is closed): batches of the log applied
/// straight (what a catch-up does with what it read) and the clock's announcements, and the
/// sinks they reach.
// The time limit only guards against a hang: a sink run under the feed's lock that calls back
// into it would wait for that lock for ever.
@Suite("The hunts' feed hands events over outside its lock, in log order", .timeLimit(.minutes(10)))
struct HuntFeedDeliveryTests {
    static func offlineFeed(clock: any WallClock = HeldClock()) -> HuntFeed {
        HuntFeed(database: OfflineBoard.unreachableDatabase(), clock: clock)
    }

    @Test("a sink called during a catch-up may call back into the feed: end its watch, start another, read what it keeps")
    func sinkCallsBackDuringCatchUp() async {
        let feed = Self.offlineFeed()
        let later = RecordingSink()
        let seen = Recorded<String>()
        let sink = CallbackSink { events in
            for case .hint(let watch, "first", _) in events {
                seen.append("removed \(feed.removeWatch(id: watch))")
                seen.append(feed.addWatch(.fixture(), player: nil, sink: later))
                seen.append("watches \(feed.watchCount)")
                seen.append(feed.access(to: "h1", viewer: nil) == nil ? "no board kept" : "a board kept")
            }
        }
        let first = feed.addWatch(.fixture(), player: nil, sink: sink)
        let at = Timestamp(microseconds: 1)
        #expect(await feed.apply([.entry(1, .hint(text: "first", at: at))], records: [:])?.seq == 1)
        #expect(await feed.apply([.entry(2, .hint(text: "second", at: at))], records: [:])?.seq == 2)
        let second = seen.all.count > 1 ? seen.all[1] : ""
        #expect(seen.all == ["removed true", second, "watches 1", "no board kept"])
        #expect(sink.events == [.hint(watch: first, text: "first", at: at)])
        #expect(later.events == [.hint(watch: second, text: "second", at: at)])
    }

    @Test("a sink called during an announcement may make more events: they reach every watcher after the ones before them")
    func sinkAnnouncesDuringAnnouncement() {
        let clock = HeldClock()
        let feed = Self.offlineFeed(clock: clock)
        let start = clock.now
        let record = HuntRecord.fixture(starts: start.plus(seconds: 10), durationSeconds: 10)
        let later = RecordingSink()
        let seen = Recorded<String>()
        let sink = CallbackSink { events in
            guard events.first?.huntState == .running else { return }
            seen.append(feed.addWatch(record, player: nil, sink: later))
            clock.advance(seconds: 10)
            // Past its end: announced to both watches, after this call returns.
            feed.announceScheduledChanges()
            seen.append("heard meanwhile: \(later.events.count)")
        }
        let first = feed.addWatch(record, player: nil, sink: sink)
        clock.advance(seconds: 10)
        feed.announceScheduledChanges()
        let second = seen.all.first ?? ""
        #expect(seen.all == [second, "heard meanwhile: 0"])
        #expect(sink.events == [
            .hunt(watch: first, hunt: record.hunt(at: start.plus(seconds: 10))),
            .hunt(watch: first, hunt: record.hunt(at: start.plus(seconds: 20))),
        ])
        #expect(later.events == [.hunt(watch: second, hunt: record.hunt(at: start.plus(seconds: 20)))])
        #expect(sink.events.compactMap(\.huntState) == [.running, .ended])
    }

    @Test("a catch-up's events wait for an announcement's still being handed over: the watcher hears them in the order they were made")
    func catchUpWaitsForAnAnnouncement() async {
        let clock = HeldClock()
        let feed = Self.offlineFeed(clock: clock)
        let start = clock.now
        let record = HuntRecord.fixture(starts: start.plus(seconds: 10), durationSeconds: 60)
        let sink = HoldingSink()
        let watch = feed.addWatch(record, player: nil, sink: sink)
        clock.advance(seconds: 10)
        // The announcement is made first, and held in the sink (on a thread of its own: it
        // blocks there, which no task of the pool may).
        let announcer = Thread { feed.announceScheduledChanges() }
        announcer.start()
        await sink.holding.wait()
        let at = Timestamp(microseconds: 1)
        let returned = Recorded<Bool>()
        let catchUp = Task {
            _ = await feed.apply([.entry(1, .hint(text: "made second", at: at))], records: [:])
            returned.append(true)
        }
        // Until its batch is queued behind the one held (or, handed over on its own, it returned).
        while feed.undeliveredBatches < 2 && returned.all.isEmpty { await Task.yield() }
        #expect(returned.all.isEmpty, "the catch-up waits while the batch before its own is being handed over")
        sink.letGo()
        await catchUp.value
        #expect(sink.events == [
            .hunt(watch: watch, hunt: record.hunt(at: start.plus(seconds: 10))), .hint(watch: watch, text: "made second", at: at),
        ])
        #expect(feed.undeliveredBatches == 0)
    }

    @Test("events reach each watcher in log order, each once, however many tasks apply the log at once")
    func orderUnderConcurrentCatchUps() async {
        let feed = Self.offlineFeed()
        let watchers = [RecordingSink(), RecordingSink()]
        let otherHunt = RecordingSink()
        for sink in watchers { _ = feed.addWatch(.fixture(), player: nil, sink: sink) }
        _ = feed.addWatch(.fixture("h2"), player: nil, sink: otherHunt)
        let changes = 10_000, tasks = 6
        // Each task applies every `tasks`-th entry, as catch-ups would if nothing kept them one
        // at a time: each entry either moves the place on or is skipped as applied already.
        await withTaskGroup(of: Void.self) { group in
            for task in 0 ..< tasks {
                group.addTask {
                    for seq in stride(from: task + 1, through: changes, by: tasks) {
                        let hint = HuntChange.hint(text: "\(seq)", at: Timestamp(microseconds: Int64(seq)))
                        _ = await feed.apply([.entry(seq, hint, hunt: seq % 3 == 0 ? "h2" : "h1")], records: [:])
                    }
                }
            }
        }
        let heard = watchers.map { $0.events.compactMap(\.hintText).compactMap(Int.init) }
        let heardElsewhere = otherHunt.events.compactMap(\.hintText).compactMap(Int.init)
        #expect(heard[0] == heard[1])
        for sequence in [heard[0], heardElsewhere] {
            #expect(sequence == sequence.sorted(), "in log order")
            #expect(Set(sequence).count == sequence.count, "each once")
        }
        #expect(heard[0].allSatisfy { $0 % 3 != 0 } && heardElsewhere.allSatisfy { $0 % 3 == 0 })
        // The last entry is never passed over.
        #expect(max(heard[0].last ?? 0, heardElsewhere.last ?? 0) == changes)
    }
}
