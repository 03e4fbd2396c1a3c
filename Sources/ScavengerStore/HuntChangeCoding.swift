import Foundation
import ScavengerCore

/// The JSON payloads of the hunts' change log, one shape per kind.
enum HuntChangeCoding {
    static func encode(_ change: HuntChange) -> (kind: String, payload: String) {
        let kind: String
        var object: [String: Any] = [:]
        switch change {
        case .hunt:
            kind = "hunt"
        case .hint(let text, let at):
            kind = "hint"
            object = ["text": text, "at": at.microseconds]
        case .found(let player, let stop, let points):
            kind = "found"
            object = ["player": player, "stop": stop, "points": points]
        case .standing(let standing, let renamedFrom):
            kind = "standing"
            object = [
                "player": standing.player, "points": standing.points, "found": standing.found,
                "at": standing.at.map { $0.microseconds as Any } ?? NSNull(), "from": renamedFrom ?? NSNull(),
            ]
            if let userID = standing.userID { object["user"] = userID }
        case .left(let player, let userID):
            kind = "left"
            object = ["player": player]
            if let userID { object["user"] = userID }
        case .reply(let reply):
            kind = "reply"
            object = ["id": reply.id, "text": reply.text, "author": reply.author, "created": reply.created.microseconds]
        case .totals(let totals):
            kind = "totals"
            func standing(_ standing: Leaderboard.Standing) -> [String: Any] {
                ["points": standing.points, "found": standing.found, "at": standing.at.map { $0.microseconds as Any } ?? NSNull()]
            }
            object = [
                "user": totals.user, "all": standing(totals.allTime), "week": totals.week.mondayDay, "weekly": standing(totals.weekly),
                "played": totals.huntsPlayed, "completed": totals.huntsCompleted, "role": totals.role.rawValue,
            ]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return (kind, String(decoding: data, as: UTF8.self))
    }

    static func decode(kind: String, payload: String, hunt: String) -> HuntChange? {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(payload.utf8))) as? [String: Any] else { return nil }
        func int(_ key: String) -> Int? { (object[key] as? NSNumber)?.intValue }
        func string(_ key: String) -> String? { object[key] as? String }
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
            return .standing(StandingChange(player: player, points: points, found: found, at: at, userID: int("user")), renamedFrom: string("from"))
        case "left":
            guard let player = string("player") else { return nil }
            return .left(player: player, userID: int("user"))
        case "reply":
            guard let id = string("id"), let text = string("text"), let author = string("author"), let created = int("created") else {
                return nil
            }
            return .reply(PinReply(id: id, pin: hunt, text: text, author: author, created: Timestamp(microseconds: Int64(created))))
        case "totals":
            func standing(_ value: Any?) -> Leaderboard.Standing? {
                guard let object = value as? [String: Any], let points = (object["points"] as? NSNumber)?.intValue,
                      let found = (object["found"] as? NSNumber)?.intValue
                else { return nil }
                let at = (object["at"] as? NSNumber).map { Timestamp(microseconds: $0.int64Value) }
                return Leaderboard.Standing(points: points, found: found, at: at)
            }
            guard let user = string("user"), let allTime = standing(object["all"]), let weekly = standing(object["weekly"]),
                  let week = int("week").flatMap(ScoreWeek.init(mondayDay:)), let played = int("played"), let completed = int("completed"),
                  let role = string("role").flatMap(Role.init(rawValue:))
            else { return nil }
            return .totals(UserTotals(
                user: user, allTime: allTime, week: week, weekly: weekly, huntsPlayed: played, huntsCompleted: completed, role: role))
        default:
            return nil
        }
    }
}
