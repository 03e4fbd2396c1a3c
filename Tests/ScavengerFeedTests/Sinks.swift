import ScavengerCore
import Synchronization

/// A sink that keeps what it is given.
final class RecordingSink: WatchSink {
    private let received = Mutex<[WatchEvent]>([])

    var events: [WatchEvent] { received.withLock { $0 } }

    func deliver(_ events: [WatchEvent]) { received.withLock { $0 += events } }
}
