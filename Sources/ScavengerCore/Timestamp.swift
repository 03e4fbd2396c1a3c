#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// An instant, in microseconds since 1970-01-01T00:00:00Z, as PostgreSQL keeps it.
public struct Timestamp: Sendable, Hashable, Comparable, Codable {
    public var microseconds: Int64

    public init(microseconds: Int64) {
        self.microseconds = microseconds
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.microseconds < rhs.microseconds }

    /// 1970-01-01T00:00:00Z through 9999-12-31T23:59:59.999999Z, in microseconds: every time a
    /// stored row can have. A cursor's time outside it was not made by the server (and could
    /// overflow PostgreSQL's date arithmetic), so it is refused before any query.
    public static let storableMicroseconds: ClosedRange<Int64> = 0 ... 253_402_300_799_999_999

    /// Whether this time lies in ``storableMicroseconds``.
    public var isStorable: Bool { Self.storableMicroseconds.contains(microseconds) }

    /// RFC 3339 in UTC to the second: `2026-11-21T18:00:00Z`.
    public var rfc3339: String {
        var bytes: [UInt8] = []
        appendRFC3339(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends ``rfc3339`` as UTF-8 without building a string (for the hot reply path): the 20
    /// bytes go into the array's spare capacity in one step, two digits at a time.
    public func appendRFC3339(to bytes: inout [UInt8]) {
        let seconds = microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000
        let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
        let secondOfDay = Int(seconds - days * 86400)
        let (year, month, day) = Self.civil(fromDays: days)
        let fourDigits = (0 ... 9999).contains(year)
        if !fourDigits {
            // Years no pin will see: written plainly, at least four digits.
            var text = String(year.magnitude)
            while text.utf8.count < 4 { text = "0" + text }
            bytes.append(contentsOf: ((year < 0 ? "-" : "") + text).utf8)
        }
        bytes.append(addingCapacity: fourDigits ? 20 : 16) { out in
            func pair(_ value: Int) {
                out.append(Self.digitPairs[2 * value])
                out.append(Self.digitPairs[2 * value + 1])
            }
            if fourDigits {
                pair(Int(year) / 100)
                pair(Int(year) % 100)
            }
            out.append(UInt8(ascii: "-"))
            pair(Int(month))
            out.append(UInt8(ascii: "-"))
            pair(Int(day))
            out.append(UInt8(ascii: "T"))
            pair(secondOfDay / 3600)
            out.append(UInt8(ascii: ":"))
            pair(secondOfDay / 60 % 60)
            out.append(UInt8(ascii: ":"))
            pair(secondOfDay % 60)
            out.append(UInt8(ascii: "Z"))
        }
    }

    /// "00" through "99", back to back.
    static let digitPairs: [UInt8] = (0 ..< 100).flatMap { [UInt8(ascii: "0") + UInt8($0 / 10), UInt8(ascii: "0") + UInt8($0 % 10)] }

    /// Howard Hinnant's days-to-civil: the proleptic Gregorian date of a day number.
    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}

extension Timestamp {
    /// The current time, to the microsecond.
    public static var now: Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(microseconds: Int64(spec.tv_sec) * 1_000_000 + Int64(spec.tv_nsec) / 1000)
    }

    /// Parses a request's time: RFC 3339 in UTC, `YYYY-MM-DDTHH:MM:SS` with an optional fraction
    /// of up to 6 digits and a final `Z` (`t` and `z` accepted too). Nil for anything else,
    /// including impossible dates (`2026-02-30`), leap seconds and other offsets.
    public init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20 else { return nil }
        func digits(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = digits(0 ..< 4), let month = digits(5 ..< 7), let day = digits(8 ..< 10),
              let hour = digits(11 ..< 13), let minute = digits(14 ..< 16), let second = digits(17 ..< 19)
        else { return nil }
        var index = 19
        var micros: Int64 = 0
        if bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
            let count = index - start
            guard (1 ... 6).contains(count), let fraction = digits(start ..< index) else { return nil }
            micros = fraction
            for _ in count ..< 6 { micros *= 10 }
        }
        guard index == bytes.count - 1, bytes[index] == UInt8(ascii: "Z") || bytes[index] == UInt8(ascii: "z") else { return nil }
        guard (1 ... 12).contains(month), hour <= 23, minute <= 59, second <= 59 else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day >= 1, day <= monthDays[Int(month) - 1] else { return nil }
        let days = Self.days(fromCivil: year, month, day)
        self.init(microseconds: ((days * 86400 + hour * 3600 + minute * 60 + second) * 1_000_000) + micros)
    }

    /// Howard Hinnant's days-from-civil: the day number of a proleptic Gregorian date.
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
