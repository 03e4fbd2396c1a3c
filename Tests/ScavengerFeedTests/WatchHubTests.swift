import ScavengerCore
import ScavengerFeed
import ScavengerTestSupport
import Testing

@Suite("The watch hub's cell matching")
struct WatchHubTests {
    func pin(_ id: String, _ lat: Double, _ lon: Double, kind: PinKind = .text) -> Pin {
        Pin(
            id: id, lat: lat, lon: lon, kind: kind, text: "", author: "a", created: Timestamp(microseconds: 0),
            expires: Timestamp(microseconds: 1), region: nil, photo: nil, replies: 0)
    }

    @Test("a pin matches exactly the watches whose circle and kind hold it, at any mix of levels")
    func matchesLikeABruteForce() {
        let hub = WatchHub()
        let sink = RecordingSink()
        var random = SplitMix64(seed: 16)
        var areas: [String: WatchArea] = [:]
        for _ in 0 ..< 200 {
            let area = WatchArea(
                lat: 48 + Double.random(in: 0 ..< 1, using: &random) * 2, lon: 11 + Double.random(in: 0 ..< 1, using: &random) * 2, radius: [50, 400, 3000, 20_000, 50_000][Int.random(in: 0 ..< 5, using: &random)],
                kind: [nil, .text, .photo][Int.random(in: 0 ..< 3, using: &random)])
            areas[hub.add(area, sink: sink)] = area
        }
        for index in 0 ..< 2000 {
            let candidate = pin("p\(index)", 48 + Double.random(in: 0 ..< 1, using: &random) * 2, 11 + Double.random(in: 0 ..< 1, using: &random) * 2, kind: index % 2 == 0 ? .text : .photo)
            let expected = areas.filter { _, area in
                (area.kind == nil || area.kind == candidate.kind)
                    && Geodesy.distance(lat1: area.lat, lon1: area.lon, lat2: candidate.lat, lon2: candidate.lon) <= area.radius
            }.keys.sorted()
            #expect(hub.watches(holding: candidate) == expected)
        }
    }

    @Test("publish: pin on appearing, gone on leaving, nothing for a change inside; removed watches hear nothing")
    func publish() {
        let hub = WatchHub()
        let sink = RecordingSink()
        let near = hub.add(WatchArea(lat: 0, lon: 0, radius: 100), sink: sink)
        let wide = hub.add(WatchArea(lat: 0, lon: 0, radius: 10_000), sink: sink)
        let inside = pin("a", 0.0001, 0)
        let outsideNear = pin("a", 0.01, 0)
        hub.publish([PinTransition(before: nil, after: inside, seq: 1)])
        hub.publish([PinTransition(before: inside, after: inside, seq: 1)])
        hub.publish([PinTransition(before: inside, after: outsideNear, seq: 1)])
        hub.publish([PinTransition(before: outsideNear, after: nil, seq: 1)])
        #expect(hub.remove(id: near))
        #expect(!hub.remove(id: near))
        hub.publish([PinTransition(before: nil, after: inside, seq: 1)])
        let summary = sink.events.map { event -> String in
            switch event {
            case .pin(let watch, let pin, _, _): return "\(watch == near ? "near" : watch == wide ? "wide" : "?") pin \(pin.id)"
            case .gone(let watch, let id, _): return "\(watch == near ? "near" : watch == wide ? "wide" : "?") gone \(id)"
            case .overflow(let watch): return "\(watch == near ? "near" : watch == wide ? "wide" : "?") overflow"
            case .ready, .hunt, .hint, .found, .score, .reply, .closed, .badge, .review, .cells: return "another event"
            }
        }
        #expect(summary.sorted() == ["near gone a", "near pin a", "wide gone a", "wide pin a", "wide pin a"].sorted())
        #expect(summary.first?.hasSuffix("pin a") == true)
        #expect(hub.count == 1)
        // A reloaded feed tells every watch it lost events; the hub leaves ending them to the sinks.
        hub.overflowAll()
        #expect(sink.events.last == .overflow(watch: wide))
        #expect(hub.count == 1)
    }
}
