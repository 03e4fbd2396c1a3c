import ScavengerCore

/// The JSON payloads of the hunts' change log, one shape per kind.
///
/// Written and read here by hand, not through Foundation's `JSONSerialization`: every hunt write
/// encodes its entries and every daemon decodes every entry, and a profile of a crowd of
/// check-ins found `JSONSerialization` (its dictionaries of `Any`, its casts) taking about 30 %
/// of the daemon's CPU. The payloads are flat objects of strings, integers and nulls (the
/// totals' two standings nested one level), so a small writer and reader suffice; the reader
/// takes any JSON PostgreSQL's `jsonb` prints back.
enum HuntChangeCoding {
    static func encode(_ change: HuntChange) -> (kind: String, payload: String) {
        var object = JSONObjectWriter()
        let kind: String
        switch change {
        case .hunt:
            kind = "hunt"
        case .hint(let text, let at):
            kind = "hint"
            object.string("text", text)
            object.int("at", at.microseconds)
        case .found(let player, let stop, let points):
            kind = "found"
            object.string("player", player)
            object.string("stop", stop)
            object.int("points", Int64(points))
        case .standing(let standing, let renamedFrom):
            kind = "standing"
            object.string("player", standing.player)
            object.int("points", Int64(standing.points))
            object.int("found", Int64(standing.found))
            object.int("at", standing.at?.microseconds)
            object.string("from", renamedFrom)
            if let userID = standing.userID { object.int("user", Int64(userID)) }
            // A time trial's times, only when there are any (older entries have none).
            if let first = standing.trialFirst { object.int("trial_first", first.microseconds) }
            if let last = standing.trialLast { object.int("trial_last", last.microseconds) }
        case .left(let player, let userID):
            kind = "left"
            object.string("player", player)
            if let userID { object.int("user", Int64(userID)) }
        case .reply(let reply):
            kind = "reply"
            object.string("id", reply.id)
            object.string("text", reply.text)
            object.string("author", reply.author)
            object.int("created", reply.created.microseconds)
        case .totals(let totals):
            kind = "totals"
            func standing(_ standing: Leaderboard.Standing) -> String {
                var nested = JSONObjectWriter()
                nested.int("points", Int64(standing.points))
                nested.int("found", Int64(standing.found))
                nested.int("at", standing.at?.microseconds)
                return nested.text
            }
            object.string("user", totals.user)
            object.raw("all", standing(totals.allTime))
            object.int("week", Int64(totals.week.mondayDay))
            object.raw("weekly", standing(totals.weekly))
            object.int("played", Int64(totals.huntsPlayed))
            object.int("completed", Int64(totals.huntsCompleted))
            object.string("role", totals.role.rawValue)
        case .badge(let player, let badge):
            kind = "badge"
            object.string("player", player)
            object.string("id", badge.id)
            object.string("name", badge.name)
            object.string("description", badge.description)
            object.string("hunt", badge.hunt)
            object.int("at", badge.at.microseconds)
        case .review(let checkIn, let status):
            kind = "review"
            object.string("checkin", checkIn)
            object.string("status", status.rawValue)
        case .team(let team):
            kind = "team"
            object.string("team", team.team)
            object.int("points", Int64(team.points))
            object.int("found", Int64(team.found))
            object.int("at", team.at?.microseconds)
            object.raw("members", "[" + team.members.map(JSONObjectWriter.quoted).joined(separator: ",") + "]")
            object.raw("users", "[" + team.memberIDs.map(String.init).joined(separator: ",") + "]")
            if let first = team.trialFirst { object.int("trial_first", first.microseconds) }
            if let last = team.trialLast { object.int("trial_last", last.microseconds) }
        }
        return (kind, object.text)
    }

    static func decode(kind: String, payload: String, hunt: String) -> HuntChange? {
        guard case .object(let object)? = JSONValueReader.parse(payload) else { return nil }
        func int(_ key: String) -> Int? { object[key]?.integer.flatMap { Int(exactly: $0) } }
        func string(_ key: String) -> String? { object[key]?.string }
        switch kind {
        case "hunt":
            return .hunt
        case "hint":
            guard let text = string("text"), let at = int("at") else { return nil }
            return .hint(text: text, at: Timestamp(microseconds: Int64(at)))
        case "found":
            guard let player = string("player"), let stop = string("stop"), let points = int("points") else { return nil }
            return .found(player: player, stop: stop, points: points)
        case "standing":
            guard let player = string("player"), let points = int("points"), let found = int("found") else { return nil }
            let at = int("at").map { Timestamp(microseconds: Int64($0)) }
            var standing = StandingChange(player: player, points: points, found: found, at: at, userID: int("user"))
            standing.trialFirst = int("trial_first").map { Timestamp(microseconds: Int64($0)) }
            standing.trialLast = int("trial_last").map { Timestamp(microseconds: Int64($0)) }
            return .standing(standing, renamedFrom: string("from"))
        case "left":
            guard let player = string("player") else { return nil }
            return .left(player: player, userID: int("user"))
        case "reply":
            guard let id = string("id"), let text = string("text"), let author = string("author"), let created = int("created") else {
                return nil
            }
            return .reply(PinReply(id: id, pin: hunt, text: text, author: author, created: Timestamp(microseconds: Int64(created))))
        case "totals":
            func standing(_ value: JSONValueReader.Value?) -> Leaderboard.Standing? {
                guard case .object(let nested)? = value, let points = nested["points"]?.integer, let found = nested["found"]?.integer else {
                    return nil
                }
                let at = nested["at"]?.integer.map { Timestamp(microseconds: $0) }
                return Leaderboard.Standing(points: Int(points), found: Int(found), at: at)
            }
            guard let user = string("user"), let allTime = standing(object["all"]), let weekly = standing(object["weekly"]),
                  let week = int("week").flatMap(ScoreWeek.init(mondayDay:)), let played = int("played"), let completed = int("completed"),
                  let role = string("role").flatMap(Role.init(rawValue:))
            else { return nil }
            return .totals(UserTotals(
                user: user, allTime: allTime, week: week, weekly: weekly, huntsPlayed: played, huntsCompleted: completed, role: role))
        case "badge":
            guard let player = string("player"), let id = string("id"), let name = string("name"), let description = string("description"),
                  let at = int("at")
            else { return nil }
            return .badge(player: player, badge: Badge(id: id, name: name, description: description, hunt: string("hunt"), at: Timestamp(microseconds: Int64(at))))
        case "team":
            guard let name = string("team"), let points = int("points"), let found = int("found"),
                  case .array(let memberValues)? = object["members"], case .array(let userValues)? = object["users"]
            else { return nil }
            let members = memberValues.compactMap(\.string), users = userValues.compactMap { $0.integer.flatMap { Int(exactly: $0) } }
            guard members.count == memberValues.count, users.count == members.count else { return nil }
            var team = TeamStandingChange(
                team: name, points: points, found: found, at: int("at").map { Timestamp(microseconds: Int64($0)) }, members: members,
                memberIDs: users)
            team.trialFirst = int("trial_first").map { Timestamp(microseconds: Int64($0)) }
            team.trialLast = int("trial_last").map { Timestamp(microseconds: Int64($0)) }
            return .team(team)
        case "review":
            guard let checkIn = string("checkin"), let status = string("status").flatMap(CheckInStatus.init(rawValue:)) else { return nil }
            return .review(checkIn: checkIn, status: status)
        default:
            return nil
        }
    }
}

/// Writes one JSON object, member by member.
struct JSONObjectWriter {
    private var members: [String] = []

    mutating func string(_ key: String, _ value: String?) {
        members.append(Self.quoted(key) + ":" + (value.map(Self.quoted) ?? "null"))
    }

    mutating func int(_ key: String, _ value: Int64?) {
        members.append(Self.quoted(key) + ":" + (value.map { String($0) } ?? "null"))
    }

    /// A member whose value is JSON text already.
    mutating func raw(_ key: String, _ json: String) {
        members.append(Self.quoted(key) + ":" + json)
    }

    var text: String { "{" + members.joined(separator: ",") + "}" }

    /// `text` as a JSON string: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        out.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
        return out
    }
}

/// Reads JSON text into a small tree: enough for the log's payloads (and any JSON PostgreSQL
/// prints). Numbers that are not integers are kept as `number` (not used by the payloads).
enum JSONValueReader {
    indirect enum Value: Equatable {
        case object([String: Value])
        case array([Value])
        case string(String)
        case integer(Int64)
        case number(Double)
        case bool(Bool)
        case null

        var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
        var string: String? { if case .string(let value) = self { value } else { nil } }
    }

    /// The value `text` holds, or nil when it is not one JSON value.
    static func parse(_ text: String) -> Value? {
        var bytes = Array(text.utf8)[...]
        guard let value = parseValue(&bytes, depth: 0) else { return nil }
        skipSpace(&bytes)
        return bytes.isEmpty ? value : nil
    }

    private static func skipSpace(_ bytes: inout ArraySlice<UInt8>) {
        while let byte = bytes.first, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { bytes.removeFirst() }
    }

    private static func parseValue(_ bytes: inout ArraySlice<UInt8>, depth: Int) -> Value? {
        guard depth < 32 else { return nil }
        skipSpace(&bytes)
        guard let first = bytes.first else { return nil }
        switch first {
        case UInt8(ascii: "{"):
            bytes.removeFirst()
            var members: [String: Value] = [:]
            skipSpace(&bytes)
            if bytes.first == UInt8(ascii: "}") {
                bytes.removeFirst()
                return .object(members)
            }
            while true {
                skipSpace(&bytes)
                guard bytes.first == UInt8(ascii: "\""), let key = parseString(&bytes) else { return nil }
                skipSpace(&bytes)
                guard bytes.first == UInt8(ascii: ":") else { return nil }
                bytes.removeFirst()
                guard let value = parseValue(&bytes, depth: depth + 1) else { return nil }
                members[key] = value
                skipSpace(&bytes)
                guard let next = bytes.popFirst() else { return nil }
                if next == UInt8(ascii: "}") { return .object(members) }
                guard next == UInt8(ascii: ",") else { return nil }
            }
        case UInt8(ascii: "["):
            bytes.removeFirst()
            var elements: [Value] = []
            skipSpace(&bytes)
            if bytes.first == UInt8(ascii: "]") {
                bytes.removeFirst()
                return .array(elements)
            }
            while true {
                guard let value = parseValue(&bytes, depth: depth + 1) else { return nil }
                elements.append(value)
                skipSpace(&bytes)
                guard let next = bytes.popFirst() else { return nil }
                if next == UInt8(ascii: "]") { return .array(elements) }
                guard next == UInt8(ascii: ",") else { return nil }
            }
        case UInt8(ascii: "\""):
            return parseString(&bytes).map(Value.string)
        case UInt8(ascii: "t"): return parseWord("true", .bool(true), &bytes)
        case UInt8(ascii: "f"): return parseWord("false", .bool(false), &bytes)
        case UInt8(ascii: "n"): return parseWord("null", .null, &bytes)
        default:
            return parseNumber(&bytes)
        }
    }

    private static func parseWord(_ word: String, _ value: Value, _ bytes: inout ArraySlice<UInt8>) -> Value? {
        let expected = Array(word.utf8)
        guard bytes.starts(with: expected) else { return nil }
        bytes.removeFirst(expected.count)
        return value
    }

    private static func parseNumber(_ bytes: inout ArraySlice<UInt8>) -> Value? {
        var end = bytes.startIndex
        var integral = true
        while end < bytes.endIndex {
            let byte = bytes[end]
            if (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") {
                end += 1
            } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "+") {
                integral = false
                end += 1
            } else {
                break
            }
        }
        guard end > bytes.startIndex else { return nil }
        let text = String(decoding: bytes[bytes.startIndex ..< end], as: UTF8.self)
        bytes = bytes[end...]
        if integral, let value = Int64(text) { return .integer(value) }
        return Double(text).map(Value.number)
    }

    /// A string at the front of `bytes` (its opening quote first), escapes decoded.
    private static func parseString(_ bytes: inout ArraySlice<UInt8>) -> String? {
        guard bytes.popFirst() == UInt8(ascii: "\"") else { return nil }
        var out: [UInt8] = []
        var scalars = String.UnicodeScalarView()
        func flush() {
            if !out.isEmpty {
                scalars.append(contentsOf: String(decoding: out, as: UTF8.self).unicodeScalars)
                out.removeAll(keepingCapacity: true)
            }
        }
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: "\""):
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                guard let escape = bytes.popFirst() else { return nil }
                switch escape {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): out.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    guard var code = hex4(&bytes) else { return nil }
                    if (0xD800 ... 0xDBFF).contains(code) {
                        // A surrogate pair: the low half must follow as \uXXXX.
                        guard bytes.popFirst() == UInt8(ascii: "\\"), bytes.popFirst() == UInt8(ascii: "u"), let low = hex4(&bytes),
                              (0xDC00 ... 0xDFFF).contains(low)
                        else { return nil }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { return nil }
                    flush()
                    scalars.append(scalar)
                default:
                    return nil
                }
            default:
                out.append(byte)
            }
        }
        return nil
    }

    private static func hex4(_ bytes: inout ArraySlice<UInt8>) -> UInt32? {
        guard bytes.count >= 4 else { return nil }
        let text = String(decoding: bytes.prefix(4), as: UTF8.self)
        bytes.removeFirst(4)
        return UInt32(text, radix: 16)
    }
}
