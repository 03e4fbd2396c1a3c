// Over 400 lines on purpose: one suite per index operation, sharing the small pin builders at
// the top; the randomized model tests live in NearbyPropertyTests.swift.

import Synchronization
import Testing
import ScavengerCore
@testable import ScavengerPinIndex
import ScavengerTestSupport

@Suite("PinIndex")
struct PinIndexTests {
    static let now = Timestamp(microseconds: 1_800_000_000_000_000)
    static let later = Timestamp(microseconds: now.microseconds + 3_600_000_000)

    static func pin(
        _ id: String, _ lat: Double = 48.8566, _ lon: Double = 2.3522, kind: PinKind = .text, text: String = "hello",
        author: String = "alice", created: Int64 = 0, expires: Timestamp = later, region: String? = nil,
        replies: Int = 0, hidden: Bool = false
    ) -> IndexedPin {
        IndexedPin(
            id: id, lat: lat, lon: lon, kind: kind, text: text, author: author,
            created: Timestamp(microseconds: created), expires: expires, region: region,
            photo: kind == .photo ? PhotoInfo(mime: "image/jpeg", bytes: 1234) : nil, replies: replies, hidden: hidden
        )
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

    static func nearbyIDs(_ index: PinIndex, _ query: NearbyQuery, now: Timestamp = now) throws -> [String] {
        try index.nearby(query, now: now).pins.map(\.pin.id)
    }

    @Test("upsert stores every field; pin(id:) gives it back")
    func roundTrip() throws {
        let index = PinIndex()
        let photo = Self.pin(Self.id(1), -33.5, 151.25, kind: .photo, text: "a caption with ünïcödé 😀", author: "bob",
                             created: 42, region: "harbour", replies: 3, hidden: true)
        let text = Self.pin(Self.id(2), text: "")
        try index.upsert(photo)
        try index.upsert(text)
        #expect(index.count == 2)
        #expect(index.pin(id: photo.id) == photo)
        #expect(index.pin(id: text.id) == text)
        #expect(index.pin(id: Self.id(3)) == nil)
        #expect(index.pin(id: "nonsense") == nil)
        #expect(photo.pin.photo == PhotoInfo(mime: "image/jpeg", bytes: 1234))
        #expect(IndexedPin(photo.pin, hidden: true) == photo)
    }

    @Test("bad ids and coordinates are refused", arguments: [
        ("pshort", 0.0, 0.0), ("r" + String(repeating: "a", count: 24), 0, 0), ("P" + String(repeating: "a", count: 24), 0, 0),
        ("p" + String(repeating: "a", count: 23) + "1", 0, 0), ("p" + String(repeating: "a", count: 25), 0, 0),
    ])
    func badIDs(id: String, lat: Double, lon: Double) {
        let index = PinIndex()
        #expect(throws: PinIndexError.invalidID(id)) { try index.upsert(Self.pin(id, lat, lon)) }
        #expect(index.count == 0)
    }

    @Test("out-of-range coordinates are refused", arguments: [(91.0, 0.0), (-90.5, 0), (0, 180.01), (0, -181), (.nan, 0), (0, .infinity)])
    func badCoordinates(lat: Double, lon: Double) {
        let index = PinIndex()
        #expect(throws: PinIndexError.invalidCoordinates) { try index.upsert(Self.pin(Self.id(1), lat, lon)) }
        #expect(throws: PinIndexError.invalidCoordinates) { try index.nearby(NearbyQuery(lat: lat, lon: lon, radius: 10), now: Self.now) }
        #expect(index.count == 0)
    }

    @Test("bad query values are refused")
    func badQueries() {
        let index = PinIndex()
        for radius in [0.0, -1, .nan, .infinity] {
            #expect(throws: PinIndexError.self) { try index.nearby(NearbyQuery(lat: 0, lon: 0, radius: radius), now: Self.now) }
        }
        #expect(throws: PinIndexError.self) { try index.nearby(NearbyQuery(lat: 0, lon: 0, radius: 1, limit: 0), now: Self.now) }
        #expect(throws: PinIndexError.self) { try index.region(named: "x", limit: 0, now: Self.now) }
    }

    @Test("upsert replaces, moves, and remove forgets")
    func replaceAndRemove() throws {
        let index = PinIndex()
        let id = Self.id(7)
        try index.upsert(Self.pin(id, text: "first"))
        try index.upsert(Self.pin(id, text: "second", author: "carol"))
        #expect(index.count == 1)
        #expect(index.pin(id: id)?.text == "second")
        #expect(index.pin(id: id)?.author == "carol")
        let paris = NearbyQuery(lat: 48.8566, lon: 2.3522, radius: 100)
        let sydney = NearbyQuery(lat: -33.86, lon: 151.21, radius: 100)
        #expect(try Self.nearbyIDs(index, paris) == [id])
        #expect(try Self.nearbyIDs(index, sydney) == [])
        try index.upsert(Self.pin(id, -33.86, 151.21, text: "moved"))
        #expect(index.count == 1)
        #expect(try Self.nearbyIDs(index, paris) == [])
        #expect(try Self.nearbyIDs(index, sydney) == [id])
        // Every level forgot the old place.
        #expect(index.pinIDs(inCells: Grid.levels.map { Grid.cell(lat: 48.8566, lon: 2.3522, level: $0) }).isEmpty)
        #expect(index.pinIDs(inCells: Grid.levels.map { Grid.cell(lat: -33.86, lon: 151.21, level: $0) }) == Array(repeating: id, count: 6))
        #expect(index.remove(id: id))
        #expect(!index.remove(id: id))
        #expect(index.count == 0)
        #expect(index.pin(id: id) == nil)
        #expect(try Self.nearbyIDs(index, sydney) == [])
        #expect(index.pinIDs(inCells: Grid.levels.map { Grid.cell(lat: -33.86, lon: 151.21, level: $0) }).isEmpty)
    }

    @Test("hidden, expired and other-kind pins stay out of NEARBY")
    func filters() throws {
        let index = PinIndex()
        try index.upsert(Self.pin(Self.id(1), kind: .text))
        try index.upsert(Self.pin(Self.id(2), kind: .photo))
        try index.upsert(Self.pin(Self.id(3), hidden: true))
        try index.upsert(Self.pin(Self.id(4), expires: Self.now))  // expires now: gone
        try index.upsert(Self.pin(Self.id(5), expires: Timestamp(microseconds: Self.now.microseconds + 1)))
        let query = NearbyQuery(lat: 48.8566, lon: 2.3522, radius: 10)
        #expect(try Self.nearbyIDs(index, query) == [Self.id(1), Self.id(2), Self.id(5)])
        var texts = query
        texts.kind = .text
        #expect(try Self.nearbyIDs(index, texts) == [Self.id(1), Self.id(5)])
        var photos = query
        photos.kind = .photo
        #expect(try Self.nearbyIDs(index, photos) == [Self.id(2)])
        // Filters come before the limit: the one visible pin is found even with LIMIT 1.
        var one = query
        one.limit = 1
        one.kind = .photo
        #expect(try Self.nearbyIDs(index, one) == [Self.id(2)])

        #expect(index.visiblePin(id: Self.id(3), now: Self.now) == nil)
        #expect(index.visiblePin(id: Self.id(4), now: Self.now) == nil)
        #expect(index.visiblePin(id: Self.id(5), now: Self.now)?.id == Self.id(5))
        #expect(index.setHidden(id: Self.id(3), false))
        #expect(index.setHidden(id: Self.id(1), true))
        #expect(!index.setHidden(id: Self.id(99), true))
        #expect(try Self.nearbyIDs(index, query) == [Self.id(2), Self.id(3), Self.id(5)])
        // One microsecond later id 5 has expired too.
        #expect(try Self.nearbyIDs(index, query, now: Timestamp(microseconds: Self.now.microseconds + 1)) == [Self.id(2), Self.id(3)])
        #expect(index.removeExpired(now: Timestamp(microseconds: Self.now.microseconds + 1)) == 2)
        #expect(index.count == 3)
        #expect(index.pin(id: Self.id(4)) == nil)
        #expect(index.pin(id: Self.id(1))?.hidden == true)
    }

    @Test("NEARBY orders by distance, then id, and reports distances")
    func order() throws {
        let index = PinIndex()
        // Three on the centre (ties by id), one 500 m north, one 100 m east.
        for number in [9, 3, 5] { try index.upsert(Self.pin(Self.id(number), 10, 20)) }
        let north = Geodesy.destination(lat: 10, lon: 20, bearing: 0, distance: 500)
        let east = Geodesy.destination(lat: 10, lon: 20, bearing: 90, distance: 100)
        try index.upsert(Self.pin(Self.id(1), north.lat, north.lon))
        try index.upsert(Self.pin(Self.id(2), east.lat, east.lon))
        let page = try index.nearby(NearbyQuery(lat: 10, lon: 20, radius: 1000), now: Self.now)
        #expect(page.pins.map(\.pin.id) == [Self.id(3), Self.id(5), Self.id(9), Self.id(2), Self.id(1)])
        #expect(page.pins.map(\.distance)[0 ..< 3] == [0, 0, 0])
        #expect(abs(page.pins[3].distance - 100) < 1e-6)
        #expect(abs(page.pins[4].distance - 500) < 1e-6)
        #expect(page.next == nil)
        // The radius is inclusive of the canonical distance.
        let exact = page.pins[4].distance
        #expect(try Self.nearbyIDs(index, NearbyQuery(lat: 10, lon: 20, radius: exact)).count == 5)
        #expect(try Self.nearbyIDs(index, NearbyQuery(lat: 10, lon: 20, radius: exact.nextDown)).count == 4)
    }

    @Test("NEARBY pages with cursors and refuses another query's cursor")
    func cursors() throws {
        let index = PinIndex()
        for number in 0 ..< 10 {
            let point = Geodesy.destination(lat: 0, lon: 179.9999, bearing: Double(number) * 36, distance: Double(number % 4) * 10)
            try index.upsert(Self.pin(Self.id(number), point.lat, point.lon))
        }
        var query = NearbyQuery(lat: 0, lon: 179.9999, radius: 100, limit: 4)
        var seen: [String] = []
        var pages = 0
        while true {
            let page = try index.nearby(query, now: Self.now)
            seen += page.pins.map(\.pin.id)
            pages += 1
            guard let next = page.next else { break }
            let encoded = next.encoded
            #expect(!encoded.contains(" ") && encoded.allSatisfy { $0.isASCII })
            let decoded = try #require(NearbyCursor(encoded: encoded))
            query.after = decoded
        }
        #expect(pages == 3)
        #expect(seen.count == 10 && Set(seen).count == 10)

        let first = try index.nearby(NearbyQuery(lat: 0, lon: 179.9999, radius: 100, limit: 2), now: Self.now)
        let cursor = try #require(first.next)
        // Same query with another LIMIT is fine.
        #expect(try index.nearby(NearbyQuery(lat: 0, lon: 179.9999, radius: 100, limit: 5, after: cursor), now: Self.now).pins.count == 5)
        for other in [
            NearbyQuery(lat: 0, lon: 179.9999, radius: 101, after: cursor),
            NearbyQuery(lat: 0.0001, lon: 179.9999, radius: 100, after: cursor),
            NearbyQuery(lat: 0, lon: -179.9999, radius: 100, after: cursor),
            NearbyQuery(lat: 0, lon: 179.9999, radius: 100, kind: .text, after: cursor),
        ] {
            #expect(throws: PinIndexError.cursorMismatch) { try index.nearby(other, now: Self.now) }
        }
    }

    @Test("a cursor's text: fingerprint, distance or time bits, id, in lowercase hex")
    func cursorText() {
        let id = "paaaaaaaaaaaaaaaaaaaaaaa7"
        #expect(NearbyCursor(distance: 1.5, id: id, fingerprint: 0x0123_4567_89AB_CDEF).encoded
            == "0123456789abcdef.3ff8000000000000.\(id)")
        #expect(RegionCursor(created: Timestamp(microseconds: -1), id: id, fingerprint: 10).encoded
            == "000000000000000a.ffffffffffffffff.\(id)")
    }

    @Test("cursor texts are strict", arguments: [
        "", "abc", "0123456789abcdef.0123456789abcdef", "0123456789abcdef.0123456789abcdef.pnotanid",
        "0123456789ABCDEF.0000000000000000.paaaaaaaaaaaaaaaaaaaaaaaa", "0123456789abcdef.0000000000000000.paaaaaaaaaaaaaaaaaaaaaaaa.x",
        "0123456789abcde.0000000000000000.paaaaaaaaaaaaaaaaaaaaaaaa", "0123456789abcdef.fff8000000000000.paaaaaaaaaaaaaaaaaaaaaaaa",
    ])
    func malformedCursors(text: String) {
        #expect(NearbyCursor(encoded: text) == nil)
        if !text.hasPrefix("0123456789abcdef.fff8") { #expect(RegionCursor(encoded: text) == nil) }
    }

    @Test("cursors survive encoding")
    func cursorEncoding() {
        let nearby = NearbyCursor(distance: 123.456_789_012_345, id: Self.id(77), fingerprint: 0xDEAD_BEEF_0123_4567)
        #expect(NearbyCursor(encoded: nearby.encoded) == nearby)
        let region = RegionCursor(created: Timestamp(microseconds: -5), id: Self.id(78), fingerprint: 1)
        #expect(RegionCursor(encoded: region.encoded) == region)
        #expect(NearbyQuery(lat: 0, lon: 0, radius: 5).fingerprint == NearbyQuery(lat: -0.0, lon: 0, radius: 5, limit: 9).fingerprint)
        #expect(RegionCursor.fingerprint(region: "a", kind: nil) != RegionCursor.fingerprint(region: "a", kind: .text))
    }

    @Test("REGION pages newest first, ties by id, with filters and cursors")
    func regionPages() throws {
        let index = PinIndex()
        var expected: [(created: Int64, id: String)] = []
        for number in 0 ..< 25 {
            let created = Int64(number / 2)  // pairs share a creation time
            try index.upsert(Self.pin(Self.id(number), created: created, region: "old-town"))
            expected.append((created, Self.id(number)))
        }
        try index.upsert(Self.pin(Self.id(100), created: 1000, region: "old-town", hidden: true))
        try index.upsert(Self.pin(Self.id(101), created: 1001, expires: Self.now, region: "old-town"))
        try index.upsert(Self.pin(Self.id(102), created: 1002, region: "harbour"))
        try index.upsert(Self.pin(Self.id(103), created: 1003))
        expected.sort { $0.created != $1.created ? $0.created > $1.created : $0.id > $1.id }

        var seen: [String] = []
        var cursor: RegionCursor?
        repeat {
            let page = try index.region(named: "old-town", limit: 10, after: cursor, now: Self.now)
            #expect(page.pins.count <= 10)
            seen += page.pins.map(\.id)
            cursor = page.next.flatMap { RegionCursor(encoded: $0.encoded) }
            if page.next != nil { #expect(cursor != nil) }
        } while cursor != nil
        #expect(seen == expected.map(\.id))
        #expect(try index.region(named: "nowhere", limit: 10, now: Self.now).pins.isEmpty)
        #expect(try index.region(named: "harbour", limit: 10, now: Self.now).pins.map(\.id) == [Self.id(102)])
        #expect(try index.region(named: "harbour", limit: 10, kind: .photo, now: Self.now).pins.isEmpty)
        let page = try index.region(named: "old-town", limit: 3, now: Self.now)
        let next = try #require(page.next)
        #expect(throws: PinIndexError.cursorMismatch) { try index.region(named: "harbour", limit: 3, after: next, now: Self.now) }
        #expect(throws: PinIndexError.cursorMismatch) { try index.region(named: "old-town", limit: 3, kind: .text, after: next, now: Self.now) }
        #expect(page.pins.allSatisfy { $0.region == "old-town" })

        #expect(index.liveCounts(now: Self.now) == ["old-town": 25, "harbour": 1])
        #expect(index.setRegion(id: Self.id(0), "harbour"))
        #expect(index.setRegion(id: Self.id(1), nil))
        #expect(index.setHidden(id: Self.id(100), false))
        #expect(index.liveCounts(now: Self.now) == ["old-town": 24, "harbour": 2])
        #expect(index.pin(id: Self.id(0))?.region == "harbour")
        #expect(index.pin(id: Self.id(1))?.region == nil)
        #expect(Set(index.pinIDs(inRegion: "harbour")) == [Self.id(0), Self.id(102)])
        #expect(index.remove(id: Self.id(102)))
        #expect(index.liveCounts(now: Self.now) == ["old-town": 24, "harbour": 1])
        #expect(index.removeExpired(now: Self.now) == 1)
        #expect(index.pinIDs(inRegion: "old-town").count == 24)
        #expect(index.liveCounts(now: Self.later) == [:])
    }

    @Test("reply counts")
    func replies() throws {
        let index = PinIndex()
        try index.upsert(Self.pin(Self.id(1), replies: 2))
        #expect(index.addReplies(id: Self.id(1), delta: 3))
        #expect(index.pin(id: Self.id(1))?.replies == 5)
        #expect(index.addReplies(id: Self.id(1), delta: -9))
        #expect(index.pin(id: Self.id(1))?.replies == 0)
        #expect(index.setReplies(id: Self.id(1), 11))
        #expect(index.pin(id: Self.id(1))?.replies == 11)
        #expect(!index.setReplies(id: Self.id(2), 1))
        #expect(!index.addReplies(id: Self.id(2), delta: 1))
    }

    @Test("cell buckets agree with a dictionary of sets")
    func cellBuckets() {
        var random = SplitMix64(seed: 12)
        var buckets = CellBuckets(level: 0)
        var model: [CellKey: Set<UInt32>] = [:]
        // Few cells, so they pass through one, two and many slots and back; many cells, so the
        // table grows and probe runs wrap.
        let cells = (0 ..< 300).map { Grid.cell(lat: Double($0 % 30) * 0.01, lon: Double($0 / 30) * 0.01, level: 0) }
        for step in 0 ..< 20000 {
            let cell = cells[random.int(in: 0 ... (step < 10000 ? 9 : cells.count - 1))]
            let slot = UInt32(random.int(in: 0 ... 40))
            if model[cell, default: []].contains(slot) {
                buckets.remove(slot, from: cell)
                model[cell]!.remove(slot)
                if model[cell]!.isEmpty { model[cell] = nil }
            } else {
                buckets.insert(slot, into: cell)
                model[cell, default: []].insert(slot)
            }
            if step % 997 == 0 {
                buckets.removeAll(from: cell) { $0 % 3 == 0 }
                model[cell] = model[cell]?.filter { $0 % 3 != 0 }
                if model[cell]?.isEmpty == true { model[cell] = nil }
            }
        }
        #expect(buckets.count == model.count)
        #expect(buckets.slotCount == model.values.reduce(0) { $0 + $1.count })
        for cell in cells {
            let slots = buckets.slots(in: cell)
            #expect(slots.count == Set(slots).count)
            #expect(Set(slots) == model[cell] ?? [])
        }
        var collected: [UInt32] = []
        buckets.collectSlots(in: cells, into: &collected)
        #expect(collected.count == buckets.slotCount)
        // Subsets of the cells, with cells never filled among them: each cell's slots, no others.
        let absent = (0 ..< 50).map { Grid.cell(lat: 10 + Double($0) * 0.01, lon: 0, level: 0) }
        for _ in 0 ..< 50 {
            let subset = Array(Set((0 ..< 40).map { _ in (cells + absent)[random.int(in: 0 ... cells.count + absent.count - 1)] }))
            var some: [UInt32] = [7]
            buckets.collectSlots(in: subset, into: &some)
            let expected: [UInt32] = [7] + subset.flatMap { Array(model[$0] ?? []) }
            #expect(some.first == 7 && some.sorted() == expected.sorted())
        }
        #expect(buckets.approximateBytes > 0)
    }

    @Test("statistics")
    func statistics() throws {
        let index = PinIndex()
        for number in 0 ..< 10 { try index.upsert(Self.pin(Self.id(number), Double(number), 0)) }
        #expect(index.remove(id: Self.id(0)))
        let statistics = index.statistics
        #expect(statistics.pins == 9)
        #expect(statistics.slots == 10)
        #expect(statistics.cells == [9, 9, 9, 9])
        #expect(statistics.textBytes == 60)
        #expect(statistics.garbageBytes == 6)
        #expect(statistics.approximateBytes > 0)
    }

    @Test("far-off expiry times survive")
    func farExpiries() throws {
        let index = PinIndex()
        for (number, microseconds) in [Int64.max, .min, 1 << 55, -(1 << 55) - 1, (1 << 55) - 1].enumerated() {
            try index.upsert(Self.pin(Self.id(number), expires: Timestamp(microseconds: microseconds)))
            #expect(index.pin(id: Self.id(number))?.expires.microseconds == microseconds)
        }
        let visible = try Self.nearbyIDs(index, NearbyQuery(lat: 48.8566, lon: 2.3522, radius: 1))
        #expect(visible == [Self.id(0), Self.id(2), Self.id(4)])
        #expect(index.removeExpired(now: Self.now) == 2)
        try index.upsert(Self.pin(Self.id(0)))
        #expect(index.pin(id: Self.id(0))?.expires == Self.later)
    }

    @Test("the index works from many tasks behind a Mutex")
    func behindMutex() async throws {
        let index = PinIndex()
        for number in 0 ..< 100 { try index.upsert(Self.pin(Self.id(number), 48.8566, 2.3522 + Double(number) * 1e-5)) }
        /// How the daemon holds it: a Mutex in a Sendable object.
        final class Shared: Sendable {
            let index: Mutex<PinIndex>
            init(_ index: sending PinIndex) { self.index = Mutex(index) }
        }
        let shared = Shared(index)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0 ..< 8 {
                group.addTask {
                    try shared.index.withLock { index in
                        if task % 2 == 0 { try index.upsert(Self.pin(Self.id(1000 + task))) }
                        return try index.nearby(NearbyQuery(lat: 48.8566, lon: 2.3522, radius: 1000, limit: 200), now: Self.now).pins.count
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts.allSatisfy { $0 >= 100 && $0 <= 104 })
        #expect(shared.index.withLock { $0.count } == 104)
    }

    @Test("ids compare like their strings")
    func idOrder() {
        var random = SplitMix64(seed: 5)
        for _ in 0 ..< 2000 {
            let a = random.pinID()
            let b = random.next() % 3 == 0 ? String(a.prefix(13)) + String(random.pinID().dropFirst(13)) : random.pinID()
            let keyA = PinKey(id: a)!
            let keyB = PinKey(id: b)!
            #expect((keyA < keyB) == (a < b))
            #expect(keyA.string == a)
        }
    }

    @Test("random writes keep REGION pages and counts right")
    func randomRegionWrites() throws {
        var random = SplitMix64(seed: 21)
        let index = PinIndex()
        var model: [String: IndexedPin] = [:]
        var ids: [String] = []
        let regions = ["north", "south", "old-town"]
        func checkRegions(now: Timestamp) throws {
            var counts: [String: Int] = [:]
            for pin in model.values where !pin.hidden && pin.expires > now {
                if let region = pin.region { counts[region, default: 0] += 1 }
            }
            #expect(index.liveCounts(now: now) == counts)
            for region in regions {
                for kind in [nil, PinKind.text, .photo] {
                    let expected = model.values
                        .filter { $0.region == region && !$0.hidden && $0.expires > now && (kind == nil || $0.kind == kind) }
                        .sorted { $0.created != $1.created ? $0.created > $1.created : $0.id > $1.id }
                        .map(\.id)
                    var got: [String] = []
                    var cursor: RegionCursor?
                    let limit = random.int(in: 1 ... 40)
                    repeat {
                        let page = try index.region(named: region, limit: limit, kind: kind, after: cursor, now: now)
                        #expect(page.pins.count <= limit)
                        got += page.pins.map(\.id)
                        cursor = page.next
                    } while cursor != nil
                    #expect(got == expected, "\(region) \(String(describing: kind))")
                }
            }
        }
        for step in 0 ..< 4000 {
            switch random.int(in: 0 ... 19) {
            case 0 ... 10:
                let id = !ids.isEmpty && random.chance(0.2) ? ids[random.int(in: 0 ... ids.count - 1)] : random.pinID()
                let pin = Self.pin(
                    id, kind: random.chance(0.5) ? .text : .photo, created: Int64(step / 4),  // ties on created
                    expires: Timestamp(microseconds: Self.now.microseconds + Int64(random.int(in: -1000 ... 100_000))),
                    region: random.chance(0.8) ? regions[random.int(in: 0 ... 2)] : nil, hidden: random.chance(0.1)
                )
                if model[id] == nil { ids.append(id) }
                try index.upsert(pin)
                model[id] = pin
            case 11 ... 13 where !ids.isEmpty:
                let position = random.int(in: 0 ... ids.count - 1)
                #expect(index.remove(id: ids[position]))
                model[ids[position]] = nil
                ids.swapAt(position, ids.count - 1)
                ids.removeLast()
            case 14 ... 15 where !ids.isEmpty:
                let id = ids[random.int(in: 0 ... ids.count - 1)]
                let hidden = random.chance(0.5)
                #expect(index.setHidden(id: id, hidden))
                model[id]?.hidden = hidden
            case 16 ... 17 where !ids.isEmpty:
                let id = ids[random.int(in: 0 ... ids.count - 1)]
                let region = random.chance(0.8) ? regions[random.int(in: 0 ... 2)] : nil
                #expect(index.setRegion(id: id, region))
                model[id]?.region = region
            case 18:
                let now = Timestamp(microseconds: Self.now.microseconds + Int64(random.int(in: 0 ... 20000)))
                let expired = model.values.filter { $0.expires <= now }.map(\.id)
                #expect(index.removeExpired(now: now) == expired.count)
                for id in expired { model[id] = nil }
                ids = ids.filter { model[$0] != nil }
            default:
                break
            }
            if step % 500 == 499 {
                try checkRegions(now: Self.now)
                try checkRegions(now: Timestamp(microseconds: Self.now.microseconds + 50_000))
            }
        }
        #expect(index.count == model.count)
    }

    @Test("random writes agree with a dictionary; texts survive arena compaction")
    func randomWrites() throws {
        var random = SplitMix64(seed: 8)
        let index = PinIndex()
        var model: [String: IndexedPin] = [:]
        var ids: [String] = []
        for step in 0 ..< 6000 {
            let action = random.int(in: 0 ... 9)
            if action < 6 || ids.isEmpty {
                let id = !ids.isEmpty && random.chance(0.2) ? ids[random.int(in: 0 ... ids.count - 1)] : random.pinID()
                let pin = Self.pin(
                    id, random.double(in: -90 ... 90), random.double(in: -180 ... 180), kind: random.chance(0.5) ? .text : .photo,
                    text: String(repeating: "x\(step) ", count: random.int(in: 0 ... 30)), author: "u\(random.int(in: 0 ... 40))",
                    created: Int64(step), region: random.chance(0.3) ? "r\(random.int(in: 0 ... 3))" : nil,
                    hidden: random.chance(0.1)
                )
                if model[id] == nil { ids.append(id) }
                try index.upsert(pin)
                model[id] = pin
            } else {
                let position = random.int(in: 0 ... ids.count - 1)
                let id = ids[position]
                #expect(index.remove(id: id))
                model[id] = nil
                ids.swapAt(position, ids.count - 1)
                ids.removeLast()
            }
        }
        #expect(index.count == model.count)
        for (id, pin) in model { #expect(index.pin(id: id) == pin) }
        #expect(index.texts.garbage <= max(1 << 16, index.texts.count / 2))
        var counts: [String: Int] = [:]
        for pin in model.values where !pin.hidden { if let region = pin.region { counts[region, default: 0] += 1 } }
        #expect(index.liveCounts(now: Self.now) == counts)
        // Every pin sits in exactly one bucket per level.
        for level in PinIndex.levels {
            #expect(index.buckets[level].slotCount == model.count)
        }
        let box = index.locations(minLat: -10, maxLat: 10, minLon: 170, maxLon: -170)
        let inBox = model.values.filter { $0.lat >= -10 && $0.lat <= 10 && ($0.lon >= 170 || $0.lon <= -170) }
        #expect(Set(box.map(\.id)) == Set(inBox.map(\.id)))
    }
}
