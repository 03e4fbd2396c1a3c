import Logging
import ScavengerCore
import ScavengerFeed
import ScavengerTestSupport
import Testing

/// MAP's counts checked step by step against a brute-force count over a plain array: random,
/// seeded sequences of writes, moves, hiding, removal and time passing (which expires pins),
/// applied to a feed without a database, as catch-ups apply what they read.
@Suite("MAP's cell counts follow every change (model-based)")
struct MapModelTests {
    /// What the model keeps of a pin.
    struct ModelPin {
        var id: String
        var lat: Double
        var lon: Double
        var kind: PinKind
        var expires: Timestamp
        var hidden: Bool
    }

    enum Step: CustomStringConvertible {
        case write(ModelPin)
        case remove(String)
        case setHidden(String, Bool)
        case advance(seconds: Double)
        case map(MapRequest)

        var description: String {
            switch self {
            case .write(let pin): "write(\(pin.id), \(pin.lat), \(pin.lon), \(pin.kind), expires \(pin.expires.microseconds), hidden \(pin.hidden))"
            case .remove(let id): "remove(\(id))"
            case .setHidden(let id, let hidden): "setHidden(\(id), \(hidden))"
            case .advance(let seconds): "advance(\(seconds))"
            case .map(let request): "map(\(request.south), \(request.west), \(request.north), \(request.east), zoom \(request.zoom), \(request.kind.map(\.rawValue) ?? "any"))"
            }
        }
    }

    static func id(_ number: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var digits: [Character] = []
        var rest = number
        for _ in 0 ..< 24 {
            digits.append(alphabet[rest % 32])
            rest /= 32
        }
        return "p" + String(digits.reversed())
    }

    /// Places near a few centres (so cells hold several pins), on tile edges, the antimeridian
    /// and the poles.
    static func place(_ random: inout SplitMix64) -> (lat: Double, lon: Double) {
        switch random.int(in: 0 ... 9) {
        case 0: return ([90, -90, 85.051_128_779_806_59, 0, -85.2][random.int(in: 0 ... 4)], random.double(in: -180 ... 180))
        case 1: return (random.double(in: -60 ... 60), [180, -180, 0, 90, -90][random.int(in: 0 ... 4)])
        case 2: return (random.double(in: -89 ... 89), random.double(in: -180 ... 180))
        default:
            let centres = [(48.8566, 2.3522), (-17.7, 179.99), (0.0, 0.0), (35.68, 139.76)]
            let centre = centres[random.int(in: 0 ... 3)]
            let spread = [0.0001, 0.01, 1][random.int(in: 0 ... 2)]
            let lat = min(90, max(-90, centre.0 + random.double(in: -spread ... spread)))
            var lon = centre.1 + random.double(in: -spread ... spread)
            if lon > 180 { lon -= 360 }
            return (lat, lon)
        }
    }

    static func request(_ random: inout SplitMix64) -> MapRequest {
        let kind: PinKind? = [nil, .text, .photo][random.int(in: 0 ... 2)]
        if random.int(in: 0 ... 3) == 0 {
            return MapRequest(south: -90, west: -180, north: 90, east: 180, zoom: random.int(in: 0 ... 6), kind: kind, limit: 2_000)
        }
        while true {
            let zoom = random.int(in: 0 ... 22)
            let (lat, lon) = place(&random)
            let half = random.logUniform(0.000_01 ... 60)
            let south = max(-90, lat - half), north = min(90, lat + half)
            var west = lon - half * 2, east = lon + half * 2
            if west < -180 { west += 360 }
            if east > 180 { east -= 360 }
            let request = MapRequest(south: south, west: west, north: north, east: east, zoom: zoom, kind: kind, limit: 2_000)
            if request.problem == nil { return request }
        }
    }

    /// The cells the brute force counts: every visible, live pin of the kind in a tile the box touches.
    static func expected(_ pins: [ModelPin], _ request: MapRequest, now: Timestamp) -> [MapGrid.Tile: [ModelPin]] {
        let span = request.span
        var cells: [MapGrid.Tile: [ModelPin]] = [:]
        for pin in pins where !pin.hidden && pin.expires > now && (request.kind == nil || request.kind == pin.kind) {
            let tile = MapGrid.Tile(
                level: span.level, x: MapGrid.column(longitude: pin.lon, level: span.level),
                y: MapGrid.row(latitude: pin.lat, level: span.level))
            if span.overlaps(tile) { cells[tile, default: []].append(pin) }
        }
        return cells
    }

    @Test("counts, totals, single pins and mean positions equal the brute force after every step", arguments: 0 ..< 40 as Range<UInt64>)
    func modelBased(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let clock = HeldClock(at: Timestamp(microseconds: 1_800_000_000_000_000))
        var logger = Logger(label: "map-model")
        logger.logLevel = .critical
        let feed = Feed(database: OfflineBoard.unreachableDatabase(), logger: logger, clock: clock)
        feed.loadOffline([])
        var model: [ModelPin] = []
        var history: [Step] = []
        var nextID = 1
        for _ in 0 ..< 150 {
            let step: Step
            switch random.int(in: 0 ... 9) {
            case 0 ... 3:
                let (lat, lon) = Self.place(&random)
                var pin = ModelPin(
                    id: Self.id(nextID), lat: lat, lon: lon, kind: random.int(in: 0 ... 2) == 0 ? .photo : .text,
                    expires: Timestamp(microseconds: clock.now.microseconds + Int64(random.int(in: -2 ... 60)) * 1_000_000),
                    hidden: random.int(in: 0 ... 7) == 0)
                if !model.isEmpty, random.int(in: 0 ... 3) == 0 {
                    pin.id = model[random.int(in: 0 ... model.count - 1)].id  // a move, a new expiry, a new kind
                } else {
                    nextID += 1
                }
                step = .write(pin)
            case 4 where !model.isEmpty: step = .remove(model[random.int(in: 0 ... model.count - 1)].id)
            case 5 where !model.isEmpty: step = .setHidden(model[random.int(in: 0 ... model.count - 1)].id, random.int(in: 0 ... 1) == 0)
            case 6: step = .advance(seconds: Double(random.int(in: 0 ... 8_000)) / 1_000)
            default: step = .map(Self.request(&random))
            }
            history.append(step)
            switch step {
            case .write(let pin):
                model.removeAll { $0.id == pin.id }
                model.append(pin)
                feed.upsert(Self.indexed(pin))
            case .remove(let id):
                model.removeAll { $0.id == id }
                feed.remove(id: id)
            case .setHidden(let id, let hidden):
                guard let at = model.firstIndex(where: { $0.id == id }) else { break }
                model[at].hidden = hidden
                feed.upsert(Self.indexed(model[at]))
            case .advance(let seconds):
                clock.advance(seconds: seconds)
            case .map(let request):
                let answer = feed.map(request)
                let want = Self.expected(model, request, now: clock.now)
                let context = "seed \(seed), after \(history.count) steps: \(history)"
                #expect(answer.total == want.values.reduce(0) { $0 + $1.count }, "\(context)")
                #expect(answer.cells.count == want.count, "\(context)")
                for cell in answer.cells {
                    let pins = want[cell.tile] ?? []
                    #expect(cell.count == pins.count, "\(cell.tile) \(context)")
                    #expect((cell.pin?.id) == (pins.count == 1 ? pins[0].id : nil), "\(context)")
                    if !pins.isEmpty, pins.count <= 16 {
                        let lat = pins.reduce(0) { $0 + $1.lat } / Double(pins.count)
                        let lon = pins.reduce(0) { $0 + $1.lon } / Double(pins.count)
                        #expect(abs(cell.lat - lat) < 1e-9 && abs(cell.lon - lon) < 1e-9, "\(context)")
                    }
                    let box = cell.tile.box
                    #expect(cell.lat >= box.south - 1e-9 || cell.lat <= -85.05, "\(context)")
                    #expect(cell.lon >= box.west - 1e-9 && cell.lon <= box.east + 1e-9, "\(context)")
                }
                let order = answer.cells.map { ($0.count, $0.tile) }
                #expect(zip(order, order.dropFirst()).allSatisfy { $0.0 > $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }, "\(context)")
            }
        }
    }

    @Test("LIMIT keeps the fullest cells; total still counts every cell")
    func limitKeepsFullest() {
        let clock = HeldClock(at: Timestamp(microseconds: 1_800_000_000_000_000))
        var logger = Logger(label: "map-limit")
        logger.logLevel = .critical
        let feed = Feed(database: OfflineBoard.unreachableDatabase(), logger: logger, clock: clock)
        feed.loadOffline([])
        let expires = Timestamp(microseconds: clock.now.microseconds + 60_000_000)
        var number = 1
        for (place, pins) in [((10.0, 10.0), 3), ((-10.0, -10.0), 1), ((40.0, 100.0), 2)] {
            for _ in 0 ..< pins {
                feed.upsert(Self.indexed(ModelPin(id: Self.id(number), lat: place.0, lon: place.1, kind: .text, expires: expires, hidden: false)))
                number += 1
            }
        }
        let answer = feed.map(MapRequest(south: -80, west: -180, north: 80, east: 180, zoom: 2, limit: 2))
        #expect(answer.total == 6)
        #expect(answer.cells.map(\.count) == [3, 2])
        #expect(answer.cells[0].lat == 10 && answer.cells[0].lon == 10)
        clock.advance(seconds: 60)
        #expect(feed.map(MapRequest(south: -80, west: -180, north: 80, east: 180, zoom: 2)).total == 0)
    }

    @Test("WATCH MAP: changed cells at most once a second of the feed's clock; a new single pin is a change; an emptied cell has count 0")
    func watchEvents() {
        let clock = HeldClock(at: Timestamp(microseconds: 1_800_000_000_000_000))
        var logger = Logger(label: "map-watch")
        logger.logLevel = .critical
        let feed = Feed(database: OfflineBoard.unreachableDatabase(), logger: logger, clock: clock)
        feed.loadOffline([])
        let sink = RecordingSink()
        let started = feed.startMapWatch(MapRequest(south: 10, west: 20, north: 11, east: 21, zoom: 8), sink: sink)
        started.release()
        let expires = Timestamp(microseconds: clock.now.microseconds + 60_000_000)
        func pin(_ number: Int, lat: Double = 10.5, lon: Double = 20.5, expires: Timestamp = expires) -> IndexedPin {
            Self.indexed(ModelPin(id: Self.id(number), lat: lat, lon: lon, kind: .text, expires: expires, hidden: false))
        }
        func cells() -> [[(count: Int, pin: String?)]] {
            sink.events.map { event in
                guard case .cells(let watch, let cells) = event, watch == started.id else { return [] }
                return cells.map { ($0.count, $0.pin?.id) }
            }
        }
        feed.upsert(pin(1))
        feed.upsert(pin(2, lat: 40, lon: 40))  // outside the box
        feed.tickMapWatches()
        #expect(sink.events.isEmpty)  // not a second yet
        clock.advance(seconds: 1)
        feed.tickMapWatches()
        #expect(cells().map { $0.map(\.count) } == [[1]])
        #expect(cells().last?.first?.pin == Self.id(1))
        // Another pin takes its place within the second: one event, a second later.
        feed.remove(id: Self.id(1))
        feed.upsert(pin(3, lat: 10.51))
        feed.tickMapWatches()
        #expect(sink.events.count == 1)
        clock.advance(seconds: 1)
        feed.tickMapWatches()
        #expect(cells().last?.first?.pin == Self.id(3))
        // Nothing changed: no event.
        clock.advance(seconds: 5)
        feed.tickMapWatches()
        #expect(sink.events.count == 2)
        // It expires: the cell empties, count 0.
        clock.advance(seconds: 60)
        feed.tickMapWatches()
        #expect(cells().last?.map(\.count) == [0])
        #expect(feed.removeMapWatch(id: started.id))
        #expect(feed.mapWatchCount == 0)
    }

    static func indexed(_ pin: ModelPin) -> IndexedPin {
        IndexedPin(
            id: pin.id, lat: pin.lat, lon: pin.lon, kind: pin.kind, text: "t", author: "alice",
            created: Timestamp(microseconds: 0), expires: pin.expires,
            photo: pin.kind == .photo ? PhotoInfo(mime: "image/jpeg", bytes: 10) : nil, hidden: pin.hidden)
    }
}
