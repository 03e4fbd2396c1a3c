/// An instant, in microseconds since 1970-01-01T00:00:00Z, as PostgreSQL keeps it.
public struct Timestamp: Sendable, Hashable, Comparable {
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
