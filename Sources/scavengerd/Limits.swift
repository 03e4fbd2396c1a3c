import ScavengerBoard
import ScavengerCore

/// The defaults of `serve`'s limits, in one place: its options take their defaults from here and
/// ``LimitsTable`` prints the README's table of limits from the same values.
enum ServeDefaults {
    static let maxLineBytes = 8 * 1024 * 1024
    static let maxHttpRequestLineBytes = 8 * 1024
    static let maxHttpHeaderBytes = 32 * 1024
    static let maxConnections = 1024
    static let maxConnectionsPerAddress = 64
    static let idleTimeout = 300
    static let lineTimeout = 30
    static let outputBufferBytes = 256 * 1024
    static let databaseConnections = 8
    static let databaseTimeout = 5
    static let defaultTtl = 48 * 3600
    static let maxTtl = 30 * 24 * 3600
    static let maxPhotoBytes = 5 * 1024 * 1024
    static let sessionTtl = 30 * 24 * 3600
    static let maxRadius = 50_000.0
    static let maxWatchesPerConnection = 16
    static let maxEventBytes = 1 << 20
    /// `scavengerd expire --keep-changes`: how long the change logs keep an entry.
    static let keepChanges = 24 * 3600
    static let minimumKeepChanges = 3600
    /// `serve --request-key-seconds` (and `expire`'s): how long a `REQUEST` key holds its result.
    static let requestKeySeconds = 24 * 3600
    static let reportThreshold = 3
    static let reportMinAccountAge = 24 * 3600
    static let claimSeconds = 15 * 60
    static let postRate = "30/600"
    static let photoRate = "10/600"
    static let replyRate = "60/600"
    static let reportRate = "20/3600"
    static let joinRate = "60/600"
    static let staffRateFactor = 10
    static let registerRate = "10/3600"
    static let loginAddressFailures = 20
    static let loginAccountFailures = 5
    static let loginMaxBackoff = 900
    static let passwordQueue = 64
    static let defaultBanSeconds = 7 * 24 * 3600
    static let maxStopsPerHunt = 100
    static let maxTeamsPerHunt = 200
    static let joinFailureRate = "20/600"
    static let codeGuesses = 5
    static let codeGuessWindow = 600
    static let tooFarTries = 30
    static let travelCheckMeters = 1000.0
    static let maxTravelSpeedKmh = 200.0
}

/// The README's table of limits and defaults (`scavengerd limits` prints it; a test checks the
/// README's copy and that every flag it names is one `serve --help` lists).
enum LimitsTable {
    /// One row: what is limited, its limit or default, and the flags that set it.
    struct Row {
        let what: String
        let value: String
        let flags: [String]
    }

    static var rows: [Row] {
        typealias D = ServeDefaults
        return [
            Row(what: "request line", value: bytes(D.maxLineBytes), flags: ["--max-line-bytes"]),
            Row(what: "HTTP request line (HTTP port)", value: bytes(D.maxHttpRequestLineBytes), flags: ["--max-http-request-line-bytes"]),
            Row(what: "HTTP request head: request line and header fields (HTTP port)", value: bytes(D.maxHttpHeaderBytes),
                flags: ["--max-http-header-bytes"]),
            Row(what: "connections at once, every port together", value: number(D.maxConnections), flags: ["--max-connections"]),
            Row(what: "connections at once from one address, every port together", value: number(D.maxConnectionsPerAddress),
                flags: ["--max-connections-per-address"]),
            Row(what: "silence before a connection is closed (both ports)", value: duration(D.idleTimeout), flags: ["--idle-timeout"]),
            Row(what: "finishing a request line, or an HTTP request head, once started", value: duration(D.lineTimeout),
                flags: ["--line-timeout"]),
            Row(what: "unread replies before the server stops answering a connection", value: bytes(D.outputBufferBytes),
                flags: ["--output-buffer-bytes"]),
            Row(what: "waiting for the database, in all, before `ERR UNAVAILABLE`", value: duration(D.databaseTimeout),
                flags: ["--database-timeout"]),
            Row(what: "username", value: "3–32 of `A-Z a-z 0-9 _ . -`", flags: []),
            Row(what: "email", value: "3–254 characters", flags: []),
            Row(what: "password", value: "8 characters to \(number(Validation.maximumPasswordBytes)) bytes, a letter and a digit",
                flags: []),
            Row(what: "text, caption, reply, note",
                value: "1–\(Validation.maximumTextLength) characters (a caption may be empty)", flags: []),
            Row(what: "photo, decoded", value: bytes(D.maxPhotoBytes), flags: ["--max-photo-bytes"]),
            Row(what: "photo pixels (read from its header)",
                value: "\(number(PhotoPixelLimits().maximumSide)) a side, \(number(PhotoPixelLimits().maximumPixels)) in all, "
                    + "\(number(PhotoPixelLimits().maximumInterlacedPixels)) progressive or interlaced", flags: []),
            Row(what: "pin TTL", value: "\(duration(D.defaultTtl)) by default, \(duration(D.maxTtl)) at most",
                flags: ["--default-ttl", "--max-ttl"]),
            Row(what: "session", value: duration(D.sessionTtl), flags: ["--session-ttl"]),
            Row(what: "`NEARBY` and `WATCH` radius", value: "\(number(Int(D.maxRadius))) m", flags: ["--max-radius"]),
            Row(what: "watches per connection", value: number(D.maxWatchesPerConnection), flags: ["--max-watches-per-connection"]),
            Row(what: "unsent watch events per connection before an overflow", value: bytes(D.maxEventBytes),
                flags: ["--max-event-bytes"]),
            // Not a flag of `serve`: the sweep trims the log.
            Row(what: "change log kept for `WATCH … SINCE` (`scavengerd expire --keep-changes`)",
                value: "\(duration(D.keepChanges)), at least \(duration(D.minimumKeepChanges))", flags: []),
            Row(what: "a write's `REQUEST` key holds its result (`scavengerd expire` keeps it as long)",
                value: duration(D.requestKeySeconds), flags: ["--request-key-seconds"]),
            Row(what: "page size (`LIMIT`)", value: "1–200, 50 by default", flags: []),
            Row(what: "reporters that hide an item",
                value: "\(D.reportThreshold), each account at least \(duration(D.reportMinAccountAge)) old",
                flags: ["--report-threshold", "--report-min-account-age"]),
            Row(what: "`POST`s per user", value: rate(D.postRate), flags: ["--post-rate"]),
            Row(what: "`POSTPHOTO`s per user", value: rate(D.photoRate), flags: ["--photo-rate"]),
            Row(what: "`REPLY`s per user", value: rate(D.replyRate), flags: ["--reply-rate"]),
            Row(what: "`REPORT`s per user", value: rate(D.reportRate), flags: ["--report-rate"]),
            Row(what: "`JOIN`s and `LEAVE`s together per user", value: rate(D.joinRate), flags: ["--join-rate"]),
            Row(what: "those rates for moderators and admins", value: "\(D.staffRateFactor) times the above",
                flags: ["--staff-rate-factor"]),
            Row(what: "`REGISTER`s and `FORGOT`s per client address, together", value: rate(D.registerRate), flags: ["--register-rate"]),
            Row(what: "failed `LOGIN`s before back-off",
                value: "\(D.loginAddressFailures) per address, \(D.loginAccountFailures) per account",
                flags: ["--login-address-failures", "--login-account-failures"]),
            Row(what: "longest login back-off", value: duration(D.loginMaxBackoff), flags: ["--login-max-backoff"]),
            Row(what: "password checks waiting for a thread", value: number(D.passwordQueue), flags: ["--password-queue"]),
            Row(what: "a moderator's claim", value: duration(D.claimSeconds), flags: ["--claim-seconds"]),
            Row(what: "ban from `RESOLVE … ban`", value: duration(D.defaultBanSeconds), flags: ["--default-ban-seconds"]),
            Row(what: "ban length",
                value: "1 second to \(duration(RequestChecks.maximumBanSeconds)), or permanent", flags: []),
            Row(what: "region name", value: "1–64 of `a-z 0-9 -`", flags: []),
            Row(what: "hunt name; description", value: "1–80 characters; up to 2,000", flags: []),
            Row(what: "stop title; clue; code", value: "1–80 characters; up to 500; 4–64", flags: []),
            Row(what: "stop radius; points; `BONUS`", value: "5–1,000 m; 0–10,000; 0–10,000", flags: []),
            Row(what: "a hunt's `DURATION`", value: "1 second to 30 days", flags: []),
            Row(what: "stops per hunt", value: number(D.maxStopsPerHunt), flags: ["--max-stops-per-hunt"]),
            Row(what: "teams per team hunt", value: number(D.maxTeamsPerHunt), flags: ["--max-teams-per-hunt"]),
            Row(what: "`JOIN`s by a code that finds no hunt, per client address", value: rate(D.joinFailureRate),
                flags: ["--join-failure-rate"]),
            Row(what: "wrong codes at a code stop before `RATE_LIMITED`",
                value: "\(D.codeGuesses) per player and stop within \(duration(D.codeGuessWindow))",
                flags: ["--code-guesses", "--code-guess-window"]),
            Row(what: "check-ins refused as too far (`TOO_FAR`) before `RATE_LIMITED`",
                value: "\(D.tooFarTries) per player and stop within the same window", flags: ["--too-far-tries"]),
            Row(what: "travel-speed check (a check-in is `flagged`)",
                value: "over \(number(Int(D.travelCheckMeters))) m from the previous check-in's fix, faster than \(Int(D.maxTravelSpeedKmh)) km/h",
                flags: ["--travel-check-meters", "--max-travel-speed"]),
        ]
    }

    /// The table as the README shows it.
    static var markdown: String {
        var lines = ["| What | Limit or default | Set by |", "| --- | --- | --- |"]
        for row in rows {
            lines.append("| \(row.what) | \(row.value) | \(row.flags.map { "`\($0)`" }.joined(separator: ", ")) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `1,024`.
    static func number(_ value: Int) -> String {
        let digits = Array(String(value))
        var text = ""
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { text.append(",") }
            text.append(digit)
        }
        return text
    }

    /// `8 MiB (8,388,608 bytes)`, `256 KiB`.
    static func bytes(_ value: Int) -> String {
        if value % (1 << 20) == 0 { return "\(value >> 20) MiB (\(number(value)) bytes)" }
        if value % (1 << 10) == 0 { return "\(value >> 10) KiB" }
        return "\(number(value)) bytes"
    }

    /// `30 s`, `15 minutes`, `an hour`, `48 hours`, `30 days`, `100 years`.
    static func duration(_ seconds: Int) -> String {
        func unit(_ count: Int, _ one: String, _ many: String) -> String { count == 1 ? one : "\(number(count)) \(many)" }
        let year = 365 * 86_400
        if seconds % year == 0 { return unit(seconds / year, "a year", "years") }
        if seconds % 86_400 == 0, seconds / 86_400 != 2 { return unit(seconds / 86_400, "a day", "days") }
        if seconds % 3600 == 0 { return unit(seconds / 3600, "an hour", "hours") }
        if seconds % 60 == 0, seconds >= 600 { return unit(seconds / 60, "a minute", "minutes") }
        return "\(seconds) s"
    }

    /// `30, refilled over 10 minutes`.
    static func rate(_ text: String) -> String {
        guard let limit = RateLimit(parsing: text) else { return text }
        return "\(limit.count), refilled over \(duration(limit.seconds))"
    }
}
