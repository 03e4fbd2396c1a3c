import Foundation
import Testing
@testable import ScavengerCore
import ScavengerTestSupport

@Suite("Geodesy")
struct GeodesyTests {
    static let radius = Geodesy.earthRadius

    @Test("known distances", arguments: [
        // (lat1, lon1, lat2, lon2, metres)
        (0.0, 0.0, 1.0, 0.0, radius * .pi / 180),  // a degree of latitude ≈ 111,195 m
        (45.0, 10.0, 46.0, 10.0, radius * .pi / 180),
        (0.0, 0.0, 0.0, 90.0, radius * .pi / 2),  // a quarter of the equator
        (0.0, 0.0, 90.0, 0.0, radius * .pi / 2),
        (0.0, 0.0, 0.0, 180.0, radius * .pi),  // antipodes
        (90.0, 0.0, -90.0, 0.0, radius * .pi),
        (45.0, 10.0, -45.0, -170.0, radius * .pi),
        (0.0, 179.5, 0.0, -179.5, radius * .pi / 180),  // across the antimeridian
        (89.0, 0.0, 89.0, 180.0, 2 * radius * .pi / 180),  // across the pole
    ])
    func knownDistances(lat1: Double, lon1: Double, lat2: Double, lon2: Double, metres: Double) {
        let distance = Geodesy.distance(lat1: lat1, lon1: lon1, lat2: lat2, lon2: lon2)
        #expect(abs(distance - metres) < 1e-3, "\(distance) vs \(metres)")
    }

    @Test("a degree of latitude is about 111,195 m")
    func degreeOfLatitude() {
        let distance = Geodesy.distance(lat1: 10, lon1: 20, lat2: 11, lon2: 20)
        #expect(abs(distance - 111_195.08) < 0.01)
    }

    @Test("identical points are exactly 0 apart, 180 and -180 are one meridian, a pole is one point", arguments: [
        (12.5, 33.25, 12.5, 33.25),
        (10.0, 180.0, 10.0, -180.0),
        (-33.0, -180.0, -33.0, 180.0),
        (90.0, 0.0, 90.0, 123.0),
        (-90.0, -45.0, -90.0, 180.0),
        (0.0, 0.0, -0.0, -0.0),
    ])
    func zeroDistance(lat1: Double, lon1: Double, lat2: Double, lon2: Double) {
        #expect(Geodesy.distance(lat1: lat1, lon1: lon1, lat2: lat2, lon2: lon2) == 0)
        #expect(Geodesy.UnitVector(lat: lat1, lon: lon1) == Geodesy.UnitVector(lat: lat2, lon: lon2))
    }

    @Test("exact sines and cosines at multiples of 90°")
    func exactQuadrants() {
        #expect(Geodesy.sinCos(degrees: 90) == (1, 0))
        #expect(Geodesy.sinCos(degrees: -90) == (-1, 0))
        #expect(Geodesy.sinCos(degrees: 180) == (0, -1))
        #expect(Geodesy.sinCos(degrees: -180) == (0, -1))
        #expect(Geodesy.sinCos(degrees: 360) == (0, 1))
        #expect(Geodesy.sinCos(degrees: 0) == (0, 1))
        let (s, c) = Geodesy.sinCos(degrees: 30)
        #expect(abs(s - 0.5) < 1e-15)
        #expect(abs(c - 3.0.squareRoot() / 2) < 1e-15)
    }

    @Test("unit vectors have length 1")
    func unitLength() {
        var random = SplitMix64(seed: 7)
        for _ in 0 ..< 1000 {
            let v = Geodesy.UnitVector(lat: random.double(in: -90 ... 90), lon: random.double(in: -180 ... 180))
            #expect(abs((v.x * v.x + v.y * v.y + v.z * v.z) - 1) < 1e-15)
        }
    }

    @Test("the chord distance agrees with haversine and is symmetric")
    func agreesWithHaversine() {
        var random = SplitMix64(seed: 42)
        for index in 0 ..< 5000 {
            let lat1 = random.double(in: -90 ... 90)
            let lon1 = random.double(in: -180 ... 180)
            // Mix far pairs with close ones (down to centimetres).
            let scale = [180.0, 1, 1e-3, 1e-6][index % 4]
            let lat2 = max(-90, min(90, lat1 + random.double(in: -scale ... scale)))
            var lon2 = lon1 + random.double(in: -scale ... scale)
            if lon2 > 180 { lon2 -= 360 }
            if lon2 < -180 { lon2 += 360 }
            let chord = Geodesy.distance(lat1: lat1, lon1: lon1, lat2: lat2, lon2: lon2)
            let haversine = Geodesy.haversine(lat1: lat1, lon1: lon1, lat2: lat2, lon2: lon2)
            #expect(abs(chord - haversine) <= max(1e-6 * haversine, 1e-6), "\(lat1),\(lon1) → \(lat2),\(lon2)")
            #expect(chord == Geodesy.distance(lat1: lat2, lon1: lon2, lat2: lat1, lon2: lon1))
        }
    }

    @Test("destination lands at the given distance", arguments: [1.0, 100, 10_000, 50_000, 1_000_000])
    func destination(distance: Double) {
        var random = SplitMix64(seed: UInt64(distance))
        for _ in 0 ..< 500 {
            let lat = random.double(in: -89.9 ... 89.9)
            let lon = random.double(in: -180 ... 180)
            let end = Geodesy.destination(lat: lat, lon: lon, bearing: random.double(in: 0 ..< 360), distance: distance)
            #expect(end.lon >= -180 && end.lon <= 180 && end.lat >= -90 && end.lat <= 90)
            let measured = Geodesy.distance(lat1: lat, lon1: lon, lat2: end.lat, lon2: end.lon)
            #expect(abs(measured - distance) <= 1e-6 * distance + 1e-6)
        }
    }

    @Test("the chord bound admits every point within the distance")
    func chordBound() {
        var random = SplitMix64(seed: 3)
        for _ in 0 ..< 2000 {
            let radius = random.double(in: 0 ... 50_000)
            let a = Geodesy.UnitVector(lat: random.double(in: -90 ... 90), lon: random.double(in: -180 ... 180))
            let end = Geodesy.destination(lat: asinDegrees(a.z), lon: 0, bearing: random.double(in: 0 ..< 360), distance: radius)
            let start = Geodesy.UnitVector(lat: asinDegrees(a.z), lon: 0)
            let b = Geodesy.UnitVector(lat: end.lat, lon: end.lon)
            if Geodesy.distance(start, b) <= radius {
                #expect(Geodesy.chordSquared(start, b) <= Geodesy.chordSquaredBound(forDistance: radius))
            }
        }
        #expect(Geodesy.chordSquaredBound(forDistance: .pi * Geodesy.earthRadius) >= 4)
    }

    func asinDegrees(_ z: Double) -> Double { asin(max(-1, min(1, z))) * 180 / .pi }
}
