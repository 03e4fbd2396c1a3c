import Foundation
import ScavengerCore
@testable import ScavengerFeed
import Testing

/// Handing watch events over outside the feed's lock: the outbox's batches, and the queue that
/// keeps them in the order they were made.
@Suite("Watch events handed over in order, outside the feed's lock")
struct WatchDeliveryTests {
    /// The sinks (by number) events are added for, in order; each event names its place.
    @Test("an outbox hands each sink its own events in one call, in the order they were added", arguments: [
        [0], [0, 0, 0], [0, 1, 0, 1], [2, 0, 2, 2, 1, 0],
    ])
    func outbox(order: [Int]) {
        let sinks = (0 ..< 3).map { _ in RecordingSink() }
        var outbox = WatchOutbox()
        for (place, sink) in order.enumerated() { outbox.add(.overflow(watch: "w\(place)"), for: sinks[sink]) }
        #expect(outbox.eventCount == order.count && !outbox.isEmpty)
        outbox.deliver()
        for (number, sink) in sinks.enumerated() {
            let expected = order.enumerated().filter { $0.element == number }.map { WatchEvent.overflow(watch: "w\($0.offset)") }
            #expect(sink.events == expected)
            #expect(sink.calls == (expected.isEmpty ? 0 : 1))
        }
    }

    @Test("an empty outbox is not queued, and waiting for it returns at once")
    func nothingToDeliver() async {
        let delivery = WatchDelivery()
        let batch = delivery.enqueue(WatchOutbox())
        #expect(batch == nil && delivery.pending == 0)
        await delivery.deliver(through: batch)
        #expect(!delivery.deliverQueued())
    }

    @Test("a batch queued while another is being handed over waits for it; its caller returns once it has been handed over")
    func queuedBehindADelivery() async {
        let delivery = WatchDelivery()
        let sink = HoldingSink()
        var first = WatchOutbox()
        first.add(.overflow(watch: "h1"), for: sink)
        delivery.enqueue(first)
        // On a thread of its own: it blocks (in the sink), which no task of the pool may.
        let deliverer = Thread { delivery.deliverQueued() }
        deliverer.start()
        await sink.holding.wait()
        var second = WatchOutbox()
        second.add(.overflow(watch: "h2"), for: sink)
        let batch = delivery.enqueue(second)
        // Another caller is handing events over: this one leaves its batch to it.
        #expect(!delivery.deliverQueued())
        #expect(delivery.pending == 2)
        let waiter = Task {
            await delivery.deliver(through: batch)
            return (sink.events, delivery.pending)
        }
        sink.letGo()
        let (heard, pending) = await waiter.value
        #expect(heard == [.overflow(watch: "h1"), .overflow(watch: "h2")])
        #expect(pending == 0)
    }

    @Test("a sink that makes events while it is called: they follow, handed over by the caller already delivering, not from inside the sink")
    func eventsMadeInsideASink() {
        let delivery = WatchDelivery()
        let sink = RecordingSink()
        let nested = Recorded<Bool>()
        let reentrant = CallbackSink { events in
            guard events == [.overflow(watch: "r1")] else { return }
            var more = WatchOutbox()
            more.add(.overflow(watch: "s2"), for: sink)
            delivery.enqueue(more)
            nested.append(delivery.deliverQueued())
            // Not yet: the caller delivering hands them over once this call returns.
            nested.append(sink.events.count == 1)
        }
        var first = WatchOutbox()
        first.add(.overflow(watch: "s1"), for: sink)
        first.add(.overflow(watch: "r1"), for: reentrant)
        delivery.enqueue(first)
        #expect(delivery.deliverQueued())
        #expect(nested.all == [false, true])
        #expect(sink.events == [.overflow(watch: "s1"), .overflow(watch: "s2")])
        #expect(delivery.pending == 0)
    }
}
