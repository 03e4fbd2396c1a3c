import ScavengerCore
import ScavengerTestSupport
import Testing

private func stop(lat: Double = 48.8584, lon: Double = 2.2945, radius: Double = 50, proof: StopProof = .place) -> HuntStop {
    HuntStop(
        id: "s1", hunt: "h1", n: 1, title: "Tower", clue: "", lat: lat, lon: lon, radiusMeters: radius, points: 10, proof: proof,
        foundBy: 0, hidden: false)
}

/// The fix `meters` from `stop` along `bearing`.
private func fix(_ meters: Double, from stop: HuntStop, bearing: Double = 37, accuracy: Double = 0) -> Fix {
    let point = Geodesy.destination(lat: stop.lat, lon: stop.lon, bearing: bearing, distance: meters)
    return Fix(lat: point.lat, lon: point.lon, accuracyMeters: accuracy)
}

@Suite("Proof of presence")
struct PresenceTests {
    @Test("the distance is the canonical great-circle one, the same as NEARBY's")
    func canonicalDistance() {
        let tower = stop()
        for meters in [0.0, 1, 49.5, 50, 123.4, 5000, 2_000_000] {
            let near = fix(meters, from: tower)
            let distance = Presence.distance(from: near, to: tower)
            #expect(distance == Geodesy.distance(lat1: near.lat, lon1: near.lon, lat2: tower.lat, lon2: tower.lon))
            #expect(abs(distance - meters) < 1e-6 * max(1, meters), "\(distance) vs \(meters)")
        }
        // Across the antimeridian and at a pole, as NEARBY measures.
        let dateLine = stop(lat: 0, lon: 180)
        #expect(abs(Presence.distance(from: Fix(lat: 0, lon: -179.9995), to: dateLine) - Geodesy.earthRadius * .pi / 180 * 0.0005) < 1e-6)
        #expect(Presence.distance(from: Fix(lat: 90, lon: 12), to: stop(lat: 90, lon: -170)) == 0)
    }

    @Test("place and photo stops: at most the radius is present, beyond it TOO_FAR", arguments: [StopProof.place, .photo])
    func radiusEdge(proof: StopProof) throws {
        let tower = stop(proof: proof)
        let probe = fix(50, from: tower)
        let exact = Presence.distance(from: probe, to: tower)
        var atRadius = tower
        atRadius.radiusMeters = exact
        #expect(try Presence.judge(probe, at: atRadius) == .present(distanceMeters: exact))
        atRadius.radiusMeters = exact.nextDown
        #expect(try Presence.judge(probe, at: atRadius) == .tooFar(distanceMeters: exact))
        #expect(try Presence.judge(Fix(lat: tower.lat, lon: tower.lon), at: tower) == .present(distanceMeters: 0))
    }

    @Test("TOO_FAR carries whole metres, rounded down", arguments: [
        (50.001, 50), (50.999, 50), (51.0, 51), (1234.9999, 1234), (10_000.5, 10_000), (2_000_000.7, 2_000_000),
    ])
    func wholeMetres(meters: Double, whole: Int) throws {
        #expect(PresenceVerdict.tooFar(distanceMeters: meters).wholeMeters == whole)
        let tower = stop()
        let verdict = try Presence.judge(fix(meters, from: tower, bearing: 200), at: tower)
        guard case .tooFar(let distance) = verdict else {
            Issue.record("\(meters) m from a 50 m stop was \(verdict)")
            return
        }
        #expect(abs(distance - meters) < 1e-6 * meters)
        #expect(verdict.wholeMeters == Int(distance.rounded(.down)))
    }

    @Test("a fix just past the radius reports the radius's whole metres")
    func justPastTheRadius() throws {
        let tower = stop(radius: 50)
        let probe = fix(50.4, from: tower)
        let verdict = try Presence.judge(probe, at: tower)
        #expect(verdict == .tooFar(distanceMeters: Presence.distance(from: probe, to: tower)))
        #expect(verdict.wholeMeters == 50)
    }

    @Test("an ACCURACY larger than the radius cannot prove presence; equal to it can", arguments: [StopProof.place, .photo])
    func accuracy(proof: StopProof) throws {
        let tower = stop(radius: 50, proof: proof)
        let here = Fix(lat: tower.lat, lon: tower.lon, accuracyMeters: 50)
        #expect(try Presence.judge(here, at: tower) == .present(distanceMeters: 0))
        let vague = Fix(lat: tower.lat, lon: tower.lon, accuracyMeters: 50.0.nextUp)
        #expect(throws: ValidationError.self) { try Presence.judge(vague, at: tower) }
        #expect(throws: ValidationError("ACCURACY (120 m) is larger than the stop's radius (50 m): such a fix cannot prove presence")) {
            try Presence.judge(Fix(lat: tower.lat, lon: tower.lon, accuracyMeters: 120), at: tower)
        }
        // Checked before the distance: a far, vague fix is a bad argument, not TOO_FAR.
        #expect(throws: ValidationError.self) { try Presence.judge(fix(5000, from: tower, accuracy: 51), at: tower) }
        for bad in [-1.0, .nan, .infinity] {
            #expect(throws: ValidationError("ACCURACY must be a number of metres, at least 0")) {
                try Presence.judge(Fix(lat: tower.lat, lon: tower.lon, accuracyMeters: bad), at: tower)
            }
        }
    }

    @Test("code stops: the distance is recorded, not judged, and ACCURACY is not checked")
    func codeStops() throws {
        let vault = stop(radius: 5, proof: .code)
        let far = fix(3000, from: vault, accuracy: 10_000)
        let verdict = try Presence.judge(far, at: vault)
        #expect(verdict == .present(distanceMeters: Presence.distance(from: far, to: vault)))
        #expect(abs(verdict.distanceMeters - 3000) < 1e-6)
        #expect(try Presence.judge(Fix(lat: vault.lat, lon: vault.lon, accuracyMeters: -3), at: vault) == .present(distanceMeters: 0))
    }

    @Test("a latitude or longitude out of range is a bad argument at any stop", arguments: [
        (90.5, 0.0), (-91.0, 0.0), (0.0, 180.5), (0.0, -181.0), (.nan, 0.0), (0.0, .infinity),
    ])
    func coordinates(lat: Double, lon: Double) {
        for proof in StopProof.allCases {
            #expect(throws: ValidationError.self) { try Presence.judge(Fix(lat: lat, lon: lon), at: stop(proof: proof)) }
        }
    }
}

private let second: Int64 = 1_000_000
private let noon = Timestamp(microseconds: 1_800_000_000 * second)
private func later(_ micros: Int64) -> Timestamp { Timestamp(microseconds: noon.microseconds + micros) }

@Suite("Travel speed")
struct TravelSpeedTests {
    @Test("flagged only beyond 1 km and above 200 km/h, both strictly", arguments: [
        // (metres, elapsed µs, flagged)
        (1000.0, 0 as Int64, false),  // 1 km exactly: never checked
        (1000.0.nextUp, 0, true),  // just over, in no time at all
        (999.0, -5 * second, false),
        (1500.0, -5 * second, true),  // a previous check-in "later" (two daemons' clocks): no time
        (1500.0, -3600 * second, true),
        (2000.0, 36 * second, false),  // 200 km/h exactly
        (2000.0, 36 * second - 1, true),  // a microsecond sooner: faster than 200 km/h
        (2000.0, 36 * second + 1, false),
        (200_000.0, 3600 * second, false),  // 200 km in an hour
        (200_000.001, 3600 * second, true),
        (5_000_000.0, 3600 * second, true),  // a flight
        (1000.5, 1, true),
        (1000.5, 3600 * second, false),
    ])
    func thresholds(meters: Double, elapsed: Int64, flagged: Bool) {
        #expect(TravelSpeed.isImplausible(distanceMeters: meters, elapsedMicroseconds: elapsed, rules: HuntRules()) == flagged)
    }

    @Test("both thresholds come from the rules", arguments: [
        (HuntRules(travelCheckMinimumMeters: 5000), 4000.0, 0 as Int64, false),
        (HuntRules(travelCheckMinimumMeters: 5000), 5001.0, 0, true),
        (HuntRules(travelCheckMinimumMeters: 0), 0.5, 0, true),
        (HuntRules(travelCheckMinimumMeters: 0), 0.0, 0, false),
        (HuntRules(maximumTravelSpeedKmh: 900), 2000.0, 8 * second, false),  // 900 km/h exactly
        (HuntRules(maximumTravelSpeedKmh: 900), 2000.0, 8 * second - 1, true),
        (HuntRules(maximumTravelSpeedKmh: 5), 2000.0, 1440 * second - 1, true),
        (HuntRules(maximumTravelSpeedKmh: 5), 2000.0, 1440 * second, false),
    ])
    func configurable(rules: HuntRules, meters: Double, elapsed: Int64, flagged: Bool) {
        #expect(TravelSpeed.isImplausible(distanceMeters: meters, elapsedMicroseconds: elapsed, rules: rules) == flagged)
    }

    @Test("between two fixes: the canonical distance over the time between")
    func betweenFixes() {
        let rules = HuntRules()
        let paris = Fix(lat: 48.8566, lon: 2.3522)
        let london = Fix(lat: 51.5074, lon: -0.1278)  // about 344 km
        let distance = Geodesy.distance(lat1: paris.lat, lon1: paris.lon, lat2: london.lat, lon2: london.lon)
        #expect(abs(distance - 343_900) < 1000)
        // 200 km/h needs distance / 200 hours; a little longer is fine, a little shorter is not.
        let needed = Int64((distance / 200_000 * 3600 * 1e6).rounded(.up))
        #expect(!TravelSpeed.isImplausible(from: paris, at: noon, to: london, at: later(needed + 1000), rules: rules))
        #expect(TravelSpeed.isImplausible(from: paris, at: noon, to: london, at: later(needed - 1000), rules: rules))
        #expect(TravelSpeed.isImplausible(from: paris, at: noon, to: london, at: later(30 * 60 * second), rules: rules))
        // The accuracy plays no part, and a walk never trips it.
        let nearby = Fix(lat: 48.8600, lon: 2.3522, accuracyMeters: 500)
        #expect(!TravelSpeed.isImplausible(from: paris, at: noon, to: nearby, at: noon, rules: rules))
    }

    @Test("the speed a move takes, for reviewers", arguments: [
        (2000.0, 36 * second, 200.0), (0.0, 0 as Int64, 0.0), (1.0, 0, .infinity), (1.0, -1, .infinity), (100_000.0, 3600 * second, 100.0),
    ])
    func speed(meters: Double, elapsed: Int64, kmh: Double) {
        #expect(TravelSpeed.speedKmh(distanceMeters: meters, elapsedMicroseconds: elapsed) == kmh)
    }
}

@Suite("Wrong codes at a code stop")
struct CodeGuessTests {
    @Test("fewer than 5 wrong codes in the window never lock")
    func underTheLimit() {
        let rules = HuntRules()
        let times = (0 ..< 4).map { later(Int64($0) * second) }
        #expect(CodeGuesses.lockout(wrongCodesAt: times, now: later(5 * second), rules: rules) == nil)
        #expect(CodeGuesses.lockout(wrongCodesAt: [], now: noon, rules: rules) == nil)
    }

    @Test("the 5th wrong code locks until the first of them is 10 minutes old", arguments: [
        // (now, seconds to wait)
        (4 * second, 596 as Int?),  // the first was at 0: it leaves at 600 s
        (4 * second + 1, 596),  // rounded up to whole seconds
        (5 * second - 1, 596),
        (5 * second, 595),
        (100 * second, 500),
        (599 * second, 1),
        (600 * second - 1, 1),
        (600 * second, nil),  // exactly 10 minutes old: no longer counted
        (700 * second, nil),
    ] as [(Int64, Int?)])
    func lockout(now: Int64, wait: Int?) {
        let times = (0 ..< 5).map { later(Int64($0) * second) }
        #expect(CodeGuesses.lockout(wrongCodesAt: times.reversed(), now: later(now), rules: HuntRules()) == wait)
    }

    @Test("with more than 5 in the window, the wait lasts until fewer than 5 remain")
    func moreThanTheLimit() {
        let times = [0, 10, 20, 30, 40, 50, 60].map { later(Int64($0) * second) }
        // Seven within the window: three must leave, the third of them at 20 + 600.
        #expect(CodeGuesses.lockout(wrongCodesAt: times, now: later(70 * second), rules: HuntRules()) == 550)
        // Old ones outside the window do not count.
        let old = [-1000, -900, -800, 0, 10, 20].map { later(Int64($0) * second) }
        #expect(CodeGuesses.lockout(wrongCodesAt: old, now: later(30 * second), rules: HuntRules()) == nil)
    }

    @Test("the count and the window come from the rules")
    func configurable() {
        let rules = HuntRules(codeGuesses: 2, codeGuessWindowSeconds: 60)
        let times = [later(0), later(30 * second)]
        #expect(CodeGuesses.lockout(wrongCodesAt: times, now: later(31 * second), rules: rules) == 29)
        #expect(CodeGuesses.lockout(wrongCodesAt: times, now: later(60 * second), rules: rules) == nil)
        #expect(CodeGuesses.lockout(wrongCodesAt: [later(0)], now: later(1), rules: HuntRules(codeGuesses: 1, codeGuessWindowSeconds: 1)) == 1)
    }
}
