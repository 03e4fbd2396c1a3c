import ScavengerCore
import ScavengerPinIndex

extension Feed {
    /// MAP: the pins everyone may see in the request's box, counted per cell of its zoom, as of
    /// the feed's clock. Pins whose expiry has passed are announced (and so leave the counts)
    /// first, so the counts are exact at once, not at the next announcement. The request must be
    /// valid (``MapRequest/problem`` nil).
    public func map(_ request: MapRequest) -> MapAnswer<Pin> {
        drainExpiries()
        return index.read { $0.map(request) }
    }

    /// Announces the expiries already due, if any: what every exact count needs first.
    func drainExpiries() {
        let now = clock.now.microseconds
        guard expiries.withLock({ queue in queue.nextDue.map { $0 <= now } ?? false }) else { return }
        announceExpiries()
    }
}
