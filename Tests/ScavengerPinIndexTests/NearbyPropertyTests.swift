import Foundation
import Testing
import ScavengerCore
@testable import ScavengerPinIndex
import ScavengerTestSupport

/// Points near the hard places: both sides of the antimeridian, both poles, and a city.
func randomPoint(_ random: inout SplitMix64, near centre: (Double, Double), spread: Double) -> (lat: Double, lon: Double) {
    if centre.0 == 90 || centre.0 == -90 {
        let point = Geodesy.destination(lat: centre.0, lon: 0, bearing: random.double(in: 0 ..< 360), distance: spread * random.double(in: 0 ... 1))
        // Some exactly at the pole.
        return random.chance(0.05) ? (centre.0, random.double(in: -180 ... 180)) : point
    }
    let point = Geodesy.destination(lat: centre.0, lon: centre.1, bearing: random.double(in: 0 ..< 360), distance: spread * random.double(in: 0 ... 1).squareRoot())
    if random.chance(0.03) { return (point.lat, random.chance(0.5) ? 180 : -180) }
    return point
}

let hotSpots: [(Double, Double)] = [(0, 180), (45, -180), (90, 0), (-90, 0), (48.8566, 2.3522), (-89.9, 100), (89.5, -179.8)]

@Suite("NEARBY against brute force")
struct NearbyPropertyTests {
    static let now = Timestamp(microseconds: 1_800_000_000_000_000)

    struct Model {
        var pins: [String: IndexedPin] = [:]

        func expected(_ query: NearbyQuery, now: Timestamp) -> [(id: String, distance: Double)] {
            let centre = Geodesy.UnitVector(lat: query.lat, lon: query.lon)
            return pins.values.compactMap { pin -> (id: String, distance: Double)? in
                guard pin.expires > now, !pin.hidden, query.kind == nil || query.kind == pin.kind else { return nil }
                let distance = Geodesy.distance(centre, Geodesy.UnitVector(lat: pin.lat, lon: pin.lon))
                return distance <= query.radius ? (pin.id, distance) : nil
            }
            .sorted { $0.distance != $1.distance ? $0.distance < $1.distance : $0.id < $1.id }
        }
    }

    static func makePins(_ random: inout SplitMix64, count: Int) -> [IndexedPin] {
        var pins: [IndexedPin] = []
        for index in 0 ..< count {
            let point: (lat: Double, lon: Double)
            if index > 0, random.chance(0.08) {
                // Same spot as an earlier pin: ties broken by id.
                let earlier = pins[random.int(in: 0 ... pins.count - 1)]
                point = (earlier.lat, earlier.lon)
            } else if random.chance(0.1) {
                point = (random.double(in: -90 ... 90), random.double(in: -180 ... 180))
            } else {
                let spot = hotSpots[random.int(in: 0 ... hotSpots.count - 1)]
                let spread = [300.0, 2000, 2000, 20_000, 60_000][random.int(in: 0 ... 4)]
                point = randomPoint(&random, near: spot, spread: spread)
            }
            let photo = random.chance(0.3)
            let expires = random.chance(0.1)
                ? Timestamp(microseconds: now.microseconds - Int64(random.int(in: 0 ... 1000)))
                : Timestamp(microseconds: now.microseconds + 1 + Int64(random.int(in: 0 ... 1_000_000)))
            pins.append(IndexedPin(
                id: random.pinID(), lat: point.lat, lon: point.lon, kind: photo ? .photo : .text, text: "pin \(index)",
                author: "user\(index % 17)", created: Timestamp(microseconds: Int64(index)), expires: expires,
                region: nil, photo: photo ? PhotoInfo(mime: "image/png", bytes: index) : nil, replies: 0,
                hidden: random.chance(0.1)
            ))
        }
        return pins
    }

    static func randomQuery(_ random: inout SplitMix64, model: Model, pins: [IndexedPin]) -> NearbyQuery {
        let centre: (lat: Double, lon: Double)
        switch random.int(in: 0 ... 9) {
        case 0 ... 1:
            let pin = pins[random.int(in: 0 ... pins.count - 1)]
            centre = (pin.lat, pin.lon)  // distance 0 to at least one pin
        case 2:
            centre = (random.double(in: -90 ... 90), random.double(in: -180 ... 180))
        default:
            centre = randomPoint(&random, near: hotSpots[random.int(in: 0 ... hotSpots.count - 1)], spread: random.chance(0.5) ? 3000 : 40_000)
        }
        let kinds: [PinKind?] = [nil, nil, .text, .photo]
        return NearbyQuery(
            lat: centre.lat, lon: centre.lon, radius: random.logUniform(random.chance(0.5) ? 1 ... 50_000 : 500 ... 50_000),
            limit: random.chance(0.5) ? random.int(in: 1 ... 10) : random.int(in: 1 ... 200),
            kind: kinds[random.int(in: 0 ... 3)]
        )
    }

    /// Follows `next` to the end and compares with the brute-force answer.
    static func check(_ index: PinIndex, _ model: Model, _ start: NearbyQuery, now: Timestamp) throws {
        let expected = model.expected(start, now: now)
        var query = start
        // Keep the number of pages reasonable for large answers.
        if expected.count / query.limit > 25 { query.limit = min(200, expected.count / 25 + 1) }
        var got: [(id: String, distance: Double)] = []
        var pages = 0
        while true {
            let page = try index.nearby(query, now: now)
            pages += 1
            #expect(page.pins.count <= query.limit)
            got += page.pins.map { ($0.pin.id, $0.distance) }
            guard let next = page.next else { break }
            #expect(page.pins.count == query.limit)
            let decoded = try #require(NearbyCursor(encoded: next.encoded))
            #expect(decoded == next)
            query.after = decoded
            try #require(pages <= expected.count + 1, "paging does not end")
        }
        let expectedIDs = expected.map(\.id)
        let gotIDs = got.map(\.id)
        #expect(Set(gotIDs).count == gotIDs.count, "a pin twice")
        #expect(gotIDs == expectedIDs, "query \(start): missing \(Set(expectedIDs).subtracting(gotIDs).count), extra \(Set(gotIDs).subtracting(expectedIDs).count)")
        #expect(got.map(\.distance) == expected.map(\.distance))
        if let first = got.first, let pin = model.pins[first.id] {
            #expect(first.distance == Geodesy.distance(lat1: start.lat, lon1: start.lon, lat2: pin.lat, lon2: pin.lon))
        }
    }

    @Test("paged NEARBY lists exactly the brute-force answer, in order", arguments: [Grid.defaultMaximumCells, 1, 400])
    func matchesBruteForce(maximumCoverCells: Int) throws {
        var random = SplitMix64(seed: 0x5CA7_E46E_0000 + UInt64(maximumCoverCells))
        let pins = Self.makePins(&random, count: 5000)
        let index = PinIndex(maximumCoverCells: maximumCoverCells)
        var model = Model()
        for pin in pins {
            try index.upsert(pin)
            model.pins[pin.id] = pin
        }
        #expect(index.count == pins.count)
        for _ in 0 ..< 250 {
            try Self.check(index, model, Self.randomQuery(&random, model: model, pins: pins), now: Self.now)
        }

        // Move, hide, delete and expire some, then ask again.
        for pin in pins {
            switch random.int(in: 0 ... 19) {
            case 0, 1:
                var moved = pin
                let point = randomPoint(&random, near: hotSpots[random.int(in: 0 ... hotSpots.count - 1)], spread: 20_000)
                (moved.lat, moved.lon) = (point.lat, point.lon)
                moved.kind = random.chance(0.5) ? .text : .photo
                try index.upsert(moved)
                model.pins[pin.id] = moved
            case 2:
                #expect(index.remove(id: pin.id))
                model.pins[pin.id] = nil
            case 3:
                let hidden = !(model.pins[pin.id]?.hidden ?? false)
                #expect(index.setHidden(id: pin.id, hidden))
                model.pins[pin.id]?.hidden = hidden
            default:
                break
            }
        }
        let later = Timestamp(microseconds: Self.now.microseconds + 300_000)
        let expired = model.pins.values.filter { $0.expires <= later }.count
        #expect(index.removeExpired(now: later) == expired)
        model.pins = model.pins.filter { $0.value.expires > later }
        #expect(index.count == model.pins.count)
        let remaining = Array(model.pins.values)
        for _ in 0 ..< 150 {
            try Self.check(index, model, Self.randomQuery(&random, model: model, pins: remaining), now: later)
        }
    }

    @Test("a bulk load (cells filled in at the end, sorted) answers as pins added one by one", arguments: [false, true])
    func bulkLoad(removeDuringLoad: Bool) throws {
        var random = SplitMix64(seed: 0xB01C_10AD + (removeDuringLoad ? 1 : 0))
        let pins = Self.makePins(&random, count: 4000)
        let bulk = PinIndex()
        let oneByOne = PinIndex()
        // Some pins before the load, which then adds to them.
        for pin in pins.prefix(300) {
            try bulk.upsert(pin)
            try oneByOne.upsert(pin)
        }
        var model = Model()
        for pin in pins.prefix(300) { model.pins[pin.id] = pin }
        bulk.beginBulkLoad(expectedPins: 3700)
        for (number, pin) in pins.dropFirst(300).enumerated() {
            try bulk.upsert(pin)
            try oneByOne.upsert(pin)
            model.pins[pin.id] = pin
            // A pin read twice, the second time moved (or not), as a load by pages can.
            if random.chance(0.05) {
                let earlier = try #require(model.pins[pins[random.int(in: 0 ... 299 + number)].id])
                var again = earlier
                if random.chance(0.7) {
                    let point = randomPoint(&random, near: hotSpots[random.int(in: 0 ... hotSpots.count - 1)], spread: 5000)
                    (again.lat, again.lon) = (point.lat, point.lon)
                }
                if random.chance(0.5) {
                    again.expires = Timestamp(microseconds: again.expires.microseconds + Int64(random.int(in: 1 ... 1000)))
                }
                try bulk.upsert(again)
                try oneByOne.upsert(again)
                model.pins[again.id] = again
            }
            if removeDuringLoad, number == 2000 {
                // Removing finishes the bulk load first; the rest go in one by one.
                let gone = pins[random.int(in: 0 ... 299 + number)].id
                #expect(bulk.remove(id: gone) == oneByOne.remove(id: gone))
                model.pins[gone] = nil
            }
        }
        bulk.finishBulkLoad()
        bulk.finishBulkLoad()  // a second finish changes nothing
        #expect(bulk.count == model.pins.count)
        #expect(bulk.statistics.cells == oneByOne.statistics.cells)
        // Every pin's expiry once, as it was written last.
        var expiries: [PinKey: Int64] = [:]
        var listed = 0
        bulk.forEachExpiry { expires, key in
            expiries[key] = expires
            listed += 1
        }
        #expect(listed == model.pins.count)
        #expect(expiries == Dictionary(uniqueKeysWithValues: model.pins.values.map { (PinKey(id: $0.id)!, $0.expires.microseconds) }))
        for _ in 0 ..< 200 {
            try Self.check(bulk, model, Self.randomQuery(&random, model: model, pins: pins), now: Self.now)
        }
        // After the load, the usual paths: moves and removals of bulk-loaded pins.
        for pin in pins where random.chance(0.1) {
            if random.chance(0.5) {
                #expect(bulk.remove(id: pin.id) == (model.pins[pin.id] != nil))
                model.pins[pin.id] = nil
            } else if var moved = model.pins[pin.id] {
                let point = randomPoint(&random, near: hotSpots[random.int(in: 0 ... hotSpots.count - 1)], spread: 20_000)
                (moved.lat, moved.lon) = (point.lat, point.lon)
                try bulk.upsert(moved)
                model.pins[pin.id] = moved
            }
        }
        let remaining = Array(model.pins.values)
        for _ in 0 ..< 100 {
            try Self.check(bulk, model, Self.randomQuery(&random, model: model, pins: remaining), now: Self.now)
        }
    }

    @Test("huge radii: coarse levels and the full scan agree with brute force", arguments: [60_000.0, 300_000, 3_000_000, 20_037_509])
    func hugeRadii(radius: Double) throws {
        var random = SplitMix64(seed: UInt64(radius))
        let pins = Self.makePins(&random, count: 1500)
        let index = PinIndex()
        var model = Model()
        for pin in pins {
            try index.upsert(pin)
            model.pins[pin.id] = pin
        }
        for _ in 0 ..< 6 {
            var query = Self.randomQuery(&random, model: model, pins: pins)
            query.radius = radius
            query.limit = 200
            try Self.check(index, model, query, now: Self.now)
        }
    }

    @Test("many pins on one spot page by id")
    func ties() throws {
        var random = SplitMix64(seed: 99)
        let index = PinIndex()
        var model = Model()
        for number in 0 ..< 500 {
            let pin = IndexedPin(
                id: random.pinID(), lat: -89.99, lon: 179.99, kind: .text, text: "t\(number)", author: "a",
                created: Timestamp(microseconds: 0), expires: Timestamp(microseconds: .max)
            )
            try index.upsert(pin)
            model.pins[pin.id] = pin
        }
        for limit in [1, 7, 200] {
            try Self.check(index, model, NearbyQuery(lat: -89.99, lon: 179.99, radius: 1, limit: limit), now: Self.now)
            try Self.check(index, model, NearbyQuery(lat: -89.99, lon: -180, radius: 5000, limit: limit), now: Self.now)
        }
    }
}
