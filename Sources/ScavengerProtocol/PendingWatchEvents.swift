import DequeModule
import ScavengerCore

/// Watch events encoded and waiting for a connection that is not taking them yet, on any front
/// end. Bounded: once more than `maximumBytes` wait, the watch whose event went past the bound
/// loses its waiting events and gets one `overflow` line instead; the front end then ends that
/// watch (the line goes out although the watch has ended).
public struct PendingWatchEvents: Sendable {
    /// Each line with the watch it belongs to (nil for an `overflow` line); each line ends in `\n`.
    public typealias Line = (watch: String?, bytes: [UInt8])

    public let maximumBytes: Int
    private var lines = Deque<Line>()
    /// Bytes waiting, in all.
    public private(set) var byteCount = 0
    /// Watches that overflowed and that the front end has not ended yet: their events are dropped.
    private var overflowed: [String] = []

    public init(maximumBytes: Int) {
        self.maximumBytes = maximumBytes
    }

    /// Whether nothing waits.
    public var isEmpty: Bool { lines.isEmpty }

    /// Encodes and queues the events of the watches `holds` still holds; returns the watches
    /// that overflowed now, for the front end to end.
    public mutating func add(_ events: [WatchEvent], holds: (String) -> Bool) -> [String] {
        var ended: [String] = []
        var scratch: [UInt8] = []
        for event in events where holds(event.watch) && !overflowed.contains(event.watch) {
            if case .overflow = event {
                overflow(event.watch)
                ended.append(event.watch)
                continue
            }
            scratch.removeAll(keepingCapacity: true)
            EventLine.encode(event, into: &scratch)
            // A watch's `closed` line goes out after the front end has let the watch go (as an
            // `overflow` line does).
            if case .closed = event {
                lines.append((nil, scratch))
            } else {
                lines.append((event.watch, scratch))
            }
            byteCount += scratch.count
            if byteCount > maximumBytes {
                overflow(event.watch)
                ended.append(event.watch)
            }
        }
        return ended
    }

    /// The front end ended these overflowed watches: their later events are its to filter.
    public mutating func ended(_ watches: [String]) {
        overflowed.removeAll { watches.contains($0) }
    }

    /// The oldest waiting line.
    public mutating func popFirst() -> Line? {
        guard let line = lines.popFirst() else { return nil }
        byteCount -= line.bytes.count
        return line
    }

    /// Every waiting line, oldest first, taken out.
    public mutating func takeAll() -> [Line] {
        defer { removeAll() }
        return Array(lines)
    }

    /// Drops everything waiting.
    public mutating func removeAll() {
        lines.removeAll()
        byteCount = 0
    }

    /// Drops the watch's waiting events and queues its `overflow` line.
    private mutating func overflow(_ watch: String) {
        lines.removeAll { $0.watch == watch }
        byteCount = lines.reduce(0) { $0 + $1.bytes.count }
        let line = EventLine.overflow(watch: watch)
        lines.append((nil, line))
        byteCount += line.count
        overflowed.append(watch)
    }
}
