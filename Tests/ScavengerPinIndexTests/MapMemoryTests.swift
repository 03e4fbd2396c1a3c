import Foundation
import ScavengerCore
import ScavengerPinIndex
import ScavengerTestSupport
import Testing

/// MAP's sets against the rest of the index, in bytes, at a size the environment names
/// (`MAP_MEMORY_PINS`, e.g. 1000000; 20,000 otherwise, so the suite stays quick). Bytes are
/// counted from the structures' sizes (capacity times stride), so a debug build measures what a
/// release build holds.
@Suite("MAP's memory against the pin index's")
struct MapMemoryTests {
    @Test("MAP's sets hold at most 20 % of the rest of the index's bytes")
    func ratio() {
        let pins = ProcessInfo.processInfo.environment["MAP_MEMORY_PINS"].flatMap { Int($0) } ?? 20_000
        var random = SplitMix64(seed: 42)
        let index = PinIndex()
        index.reserveCapacity(pins)
        index.beginBulkLoad(expectedPins: pins)
        let expires = Timestamp(microseconds: 4_000_000_000_000_000)
        for number in 0 ..< pins {
            // Clustered as the bench's set is: around a few hundred cities.
            let city = random.int(in: 0 ... 299)
            let lat = Double(city % 20) * 7 - 60 + random.double(in: -0.2 ... 0.2)
            let lon = Double(city / 20) * 23 - 170 + random.double(in: -0.2 ... 0.2)
            try? index.upsert(IndexedPin(
                id: Self.id(number), lat: lat, lon: lon, kind: number % 5 == 0 ? .photo : .text,
                text: String(repeating: "x", count: 40), author: "user\(number % 5_000)",
                created: Timestamp(microseconds: 0), expires: expires))
        }
        index.finishBulkLoad()
        let statistics = index.statistics
        let rest = statistics.approximateBytes - statistics.mapBytes
        let share = Double(statistics.mapBytes) / Double(rest)
        print("MAP memory at \(pins) pins: \(statistics.mapBytes) bytes against \(rest) for the rest of the index (\(Int((share * 1000).rounded()) / 10) %)")
        #expect(index.mappedCount() == pins)
        #expect(share <= 0.20, "MAP's sets: \(statistics.mapBytes) bytes, the rest \(rest)")
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
}
