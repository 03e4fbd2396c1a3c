import Dispatch
import ScavengerCore
import ScavengerTestSupport
import Synchronization

/// A sink that keeps what it is given, and how many calls gave it.
final class RecordingSink: WatchSink {
    private let received = Mutex<(events: [WatchEvent], calls: Int)>(([], 0))

    var events: [WatchEvent] { received.withLock { $0.events } }

    /// Calls of ``deliver(_:)`` so far.
    var calls: Int { received.withLock { $0.calls } }

    func deliver(_ events: [WatchEvent]) {
        received.withLock {
            $0.events += events
            $0.calls += 1
        }
    }
}

/// A sink that keeps what it is given, then runs `body` with it (from inside ``deliver(_:)``,
/// as a connection's sink runs while the feed hands events over).
final class CallbackSink: WatchSink {
    private let recording = RecordingSink()
    private let body: @Sendable ([WatchEvent]) -> Void

    init(_ body: @escaping @Sendable ([WatchEvent]) -> Void) {
        self.body = body
    }

    var events: [WatchEvent] { recording.events }

    func deliver(_ events: [WatchEvent]) {
        recording.deliver(events)
        body(events)
    }
}

/// What a callback saw, kept for the test to read afterwards.
final class Recorded<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])

    var all: [Value] { values.withLock { $0 } }

    func append(_ value: Value) { values.withLock { $0.append(value) } }
}

/// A sink that holds its first call until ``letGo()`` (as a connection's slow sink would take
/// its time), and keeps what it is given once each call is over: events it keeps in an order
/// other than the one they were handed over in show up.
final class HoldingSink: WatchSink {
    private let recording = RecordingSink()
    private let held = Mutex(false)
    private let release = DispatchSemaphore(value: 0)
    /// Opened once the first call is being held.
    let holding = Gate()

    var events: [WatchEvent] { recording.events }

    func deliver(_ events: [WatchEvent]) {
        let first = held.withLock { held in defer { held = true }; return !held }
        if first {
            holding.open()
            release.wait()
        }
        recording.deliver(events)
    }

    func letGo() {
        release.signal()
    }
}
