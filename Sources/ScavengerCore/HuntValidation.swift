/// The contract's fixed bounds for hunts, stops and check-ins (the configurable ones are
/// ``HuntRules``'). Lengths are in characters, counted as Unicode code points like every text of
/// the protocol.
public enum HuntLimits {
    /// A hunt's name: 1–80 characters.
    public static let nameLength: ClosedRange<Int> = 1 ... 80
    /// A hunt's `DESCRIPTION`: up to 2,000 characters.
    public static let descriptionLength: ClosedRange<Int> = 0 ... 2000
    /// A stop's title: 1–80 characters.
    public static let titleLength: ClosedRange<Int> = 1 ... 80
    /// A stop's `CLUE`: up to 500 characters.
    public static let clueLength: ClosedRange<Int> = 0 ... 500
    /// A stop's `CODE`: 4–64 characters.
    public static let codeLength: ClosedRange<Int> = 4 ... 64
    /// A stop's radius_m: 5–1,000 metres.
    public static let radiusMeters: ClosedRange<Double> = 5 ... 1000
    /// A stop's points: 0–10,000.
    public static let points: ClosedRange<Int> = 0 ... 10_000
    /// An APPROVE's `BONUS`: 0–10,000 points.
    public static let bonus: ClosedRange<Int> = 0 ... 10_000
    /// A hunt's `DURATION`: 1 second to 30 days.
    public static let durationSeconds: ClosedRange<Int> = 1 ... 30 * 24 * 3600
    /// EXTEND's seconds: at least 1 (the contract's bound) and at most 100 years, which keeps
    /// the arithmetic far from overflow; no end it could reach from today is past the year 9999
    /// (``HuntSchedule/extended(bySeconds:at:)`` refuses one that would be).
    public static let extendSeconds: ClosedRange<Int> = 1 ... 100 * 365 * 24 * 3600
    /// The farthest a hunt's end may be from now after an EXTEND: 100 years.
    public static let farthestEndSeconds = 100 * 365 * 24 * 3600
    /// A team hunt's `SIZE`, the largest team: 2–50.
    public static let teamSize: ClosedRange<Int> = 2 ... 50
    /// A team hunt's largest team when `TEAMS` names no `SIZE`.
    public static let defaultTeamSize = 6
    /// How many guests a hunt may take (`GUESTS n`), and how many when no n is given.
    public static let guests: ClosedRange<Int> = 1 ... 1000
    public static let defaultGuests = 100
    /// A time trial's `TRIAL` seconds: 60 s to 7 days.
    public static let trialSeconds: ClosedRange<Int> = 60 ... 7 * 24 * 3600
    /// A hunt's own `BADGE` name: 1–40 characters.
    public static let badgeNameLength: ClosedRange<Int> = 1 ... 40
}

/// Stop codes are matched as join codes are: case-insensitively, surrounding spaces ignored (a
/// phone that capitalises the first letter, or a space typed after the code, spends no guess).
public enum StopCode {
    /// The form a stop code is hashed and compared in: without surrounding white space, upper case.
    public static func normalized(_ code: String) -> String {
        let scalars = Array(code.unicodeScalars)
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        var trimmed = String.UnicodeScalarView()
        trimmed.append(contentsOf: scalars[first ... last])
        return String(trimmed).uppercased()
    }
}

extension Validation {
    /// A hunt's name: 1–80 characters, the text rules of `POST`.
    public static func huntName(_ name: String) throws(ValidationError) {
        try text(name, name: "name", length: HuntLimits.nameLength)
    }

    /// A hunt's `DESCRIPTION`: up to 2,000 characters (may be empty), the text rules of `POST`.
    public static func huntDescription(_ description: String) throws(ValidationError) {
        try text(description, name: "DESCRIPTION", length: HuntLimits.descriptionLength)
    }

    /// A hunt's own badge's name (`BADGE`): 1–40 characters, the text rules of `POST`, and not
    /// the name or id of a built-in badge (compared case-insensitively, spaces around ignored).
    public static func badgeName(_ name: String) throws(ValidationError) {
        try text(name, name: "BADGE", length: HuntLimits.badgeNameLength)
        let folded = name.trimmingSpaces.lowercased()
        if let taken = BadgeRules.builtIn.first(where: { $0.name.lowercased() == folded || $0.id.lowercased() == folded }) {
            throw ValidationError("BADGE may not be a built-in badge's name (\(taken.name), \(taken.id))")
        }
    }

    /// A stop's title: 1–80 characters, the text rules of `POST`.
    public static func stopTitle(_ title: String) throws(ValidationError) {
        try text(title, name: "title", length: HuntLimits.titleLength)
    }

    /// A stop's `CLUE`: up to 500 characters (may be empty), the text rules of `POST`.
    public static func clue(_ clue: String) throws(ValidationError) {
        try text(clue, name: "CLUE", length: HuntLimits.clueLength)
    }

    /// A stop's secret `CODE`: 4–64 characters, none of them a control character (newline and
    /// tab included: a code is typed on one line) or a bidirectional control.
    public static func stopCode(_ code: String) throws(ValidationError) {
        var count = 0
        for scalar in code.unicodeScalars {
            count += 1
            if isControl(scalar) {
                throw ValidationError("CODE must not contain control characters")
            }
            if isBidiControl(scalar) {
                throw ValidationError(
                    "CODE must not contain bidirectional embedding, override or isolate controls (U+202A to U+202E, U+2066 to U+2069)")
            }
        }
        let bounds = HuntLimits.codeLength
        guard bounds.contains(count) else {
            throw ValidationError("CODE must be \(bounds.lowerBound) to \(bounds.upperBound) characters long")
        }
    }

    /// A stop's proof and code together: `PROOF code` needs a `CODE`, and a `CODE` needs
    /// `PROOF code`; the code itself must pass ``stopCode(_:)``.
    public static func stopProof(_ proof: StopProof, code: String?) throws(ValidationError) {
        switch (proof, code) {
        case (.code, nil):
            throw ValidationError("PROOF code needs CODE")
        case (.code, let code?):
            try stopCode(StopCode.normalized(code))
        case (_, nil):
            break
        case (_, .some):
            throw ValidationError("CODE is only for PROOF code")
        }
    }

    /// A stop's radius_m: 5–1,000 metres (a fraction is allowed).
    public static func stopRadius(_ meters: Double) throws(ValidationError) {
        let bounds = HuntLimits.radiusMeters
        guard bounds.contains(meters) else {
            throw ValidationError("radius_m must be between \(Int(bounds.lowerBound)) and \(Int(bounds.upperBound))")
        }
    }

    /// A stop's points: 0–10,000.
    public static func stopPoints(_ points: Int) throws(ValidationError) {
        try whole(points, "points", in: HuntLimits.points)
    }

    /// An APPROVE's `BONUS`: 0–10,000 points.
    public static func bonus(_ points: Int) throws(ValidationError) {
        try whole(points, "BONUS", in: HuntLimits.bonus)
    }

    /// A hunt's `DURATION`: 1 second to 30 days.
    public static func huntDuration(_ seconds: Int) throws(ValidationError) {
        try whole(seconds, "DURATION", in: HuntLimits.durationSeconds)
    }

    /// EXTEND's seconds: at least 1 (at most 100 years, see ``HuntLimits/extendSeconds``).
    public static func extendSeconds(_ seconds: Int) throws(ValidationError) {
        try whole(seconds, "seconds", in: HuntLimits.extendSeconds)
    }

    /// A player's name in a hunt (`AS name`): the username rules.
    public static func playerName(_ name: String) throws(ValidationError) {
        do {
            try username(name)
        } catch {
            throw ValidationError("a player's name follows the username rules: \(error.message)")
        }
    }

    /// A team's name in a team hunt (`JOIN … TEAM team`): 1–40 characters, the username's
    /// (letters, digits, `_`, `.`, `-`) and spaces, neither first nor last.
    public static func teamName(_ name: String) throws(ValidationError) {
        let bytes = Array(name.utf8)
        guard (1 ... 40).contains(bytes.count) else { throw ValidationError("a team's name must be 1 to 40 characters long") }
        for byte in bytes where byte != UInt8(ascii: " ") && !isUsernameByte(byte) {
            throw ValidationError("a team's name may contain only letters A-Z a-z, digits, '_', '.', '-' and spaces")
        }
        guard bytes.first != UInt8(ascii: " "), bytes.last != UInt8(ascii: " ") else {
            throw ValidationError("a team's name may not start or end with a space")
        }
    }

    /// A fix's `ACCURACY`: a number of metres, at least 0.
    public static func accuracy(_ meters: Double) throws(ValidationError) {
        guard meters >= 0, meters.isFinite else {
            throw ValidationError("ACCURACY must be a number of metres, at least 0")
        }
    }

    /// A latitude in [-90, 90] and a longitude in [-180, 180].
    public static func coordinates(lat: Double, lon: Double) throws(ValidationError) {
        guard (-90 ... 90).contains(lat) else { throw ValidationError("latitude must be within [-90, 90]") }
        guard (-180 ... 180).contains(lon) else { throw ValidationError("longitude must be within [-180, 180]") }
    }

    /// The text rules of `POST` (no control characters but newline and tab, no bidirectional
    /// embedding, override or isolate controls) with a length, in characters, within `length`.
    /// The messages are ``text(_:name:allowEmpty:)``'s.
    public static func text(_ text: String, name: String, length: ClosedRange<Int>) throws(ValidationError) {
        var count = 0
        for scalar in text.unicodeScalars {
            count += 1
            if isControl(scalar), scalar != "\n", scalar != "\t" {
                throw ValidationError("\(name) must not contain control characters other than newline and tab")
            }
            if isBidiControl(scalar) {
                throw ValidationError(
                    "\(name) must not contain bidirectional embedding, override or isolate controls (U+202A to U+202E, U+2066 to U+2069)")
            }
        }
        if count == 0, length.lowerBound > 0 {
            throw ValidationError("\(name) must not be empty")
        }
        guard count >= length.lowerBound else {
            throw ValidationError("\(name) must be at least \(length.lowerBound) characters long")
        }
        guard count <= length.upperBound else {
            throw ValidationError("\(name) must be at most \(length.upperBound) characters long")
        }
    }

    /// A whole number within `range`; the message names it and the value given.
    static func whole(_ value: Int, _ name: String, in range: ClosedRange<Int>) throws(ValidationError) {
        guard range.contains(value) else {
            throw ValidationError("\(name) must be between \(range.lowerBound) and \(range.upperBound), got \(value)")
        }
    }
}

extension String {
    /// The text without spaces, tabs and newlines around it.
    fileprivate var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first ... last]
    }
}
