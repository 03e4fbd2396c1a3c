import Foundation
import NIOCore
import Postgres
import ScavengerCore
import ScavengerTestSupport
import Testing

/// The users' totals (all-time and per week) as the store keeps them, and as a brute force
/// computes them from the check-ins and players: they must be equal.
private func totals(_ environment: TestEnvironment) async throws -> (kept: [String], computed: [String]) {
    let kept = try await environment.pool.query("""
        SELECT u.name, s.points, s.found, coalesce((extract(epoch FROM s.points_at) * 1000000)::bigint, 0) AS at_us,
               s.hunts_played, s.hunts_completed
        FROM user_scores s JOIN users u ON u.id = s.user_id ORDER BY u.name
        """)
    let computed = try await environment.pool.query("""
        SELECT u.name,
               coalesce((SELECT sum(c.points) FROM checkins c WHERE c.user_id = u.id AND c.status = 'accepted'), 0) AS points,
               (SELECT count(*) FROM checkins c WHERE c.user_id = u.id AND c.status = 'accepted') AS found,
               coalesce((SELECT (extract(epoch FROM max(c.accepted_at)) * 1000000)::bigint FROM checkins c
                         WHERE c.user_id = u.id AND c.status = 'accepted' AND c.points > 0), 0) AS at_us,
               (SELECT count(*) FROM hunt_players p WHERE p.user_id = u.id) AS hunts_played,
               (SELECT count(*) FROM hunt_players p JOIN hunts h ON h.id = p.hunt_id
                WHERE p.user_id = u.id AND h.stop_count > 0 AND p.found = h.stop_count) AS hunts_completed
        FROM users u WHERE u.id IN (SELECT user_id FROM user_scores) ORDER BY u.name
        """)
    func lines(_ rows: PostgresRows) throws -> [String] {
        try rows.map { row in
            let name: String = try row.string("name")
            let points: Int = try row.int("points")
            let found: Int = try row.int("found")
            let at: Int = try row.int("at_us")
            let played: Int = try row.int("hunts_played")
            let completed: Int = try row.int("hunts_completed")
            return "\(name) points \(points) found \(found) at \(at) played \(played) completed \(completed)"
        }
    }
    return (try lines(kept), try lines(computed))
}

/// The weekly totals, kept and computed.
private func weeks(_ environment: TestEnvironment) async throws -> (kept: [String], computed: [String]) {
    let kept = try await environment.pool.query("""
        SELECT w.week::text AS week, u.name, w.points, w.found, coalesce((extract(epoch FROM w.points_at) * 1000000)::bigint, 0) AS at_us
        FROM user_week_scores w JOIN users u ON u.id = w.user_id WHERE w.found > 0 ORDER BY w.week, u.name
        """)
    let computed = try await environment.pool.query("""
        SELECT score_week(c.accepted_at)::text AS week, u.name, sum(c.points)::integer AS points, count(*)::integer AS found,
               coalesce((extract(epoch FROM max(c.accepted_at) FILTER (WHERE c.points > 0)) * 1000000)::bigint, 0) AS at_us
        FROM checkins c JOIN users u ON u.id = c.user_id WHERE c.status = 'accepted'
        GROUP BY score_week(c.accepted_at), u.name ORDER BY 1, 2
        """)
    func lines(_ rows: PostgresRows) throws -> [String] {
        try rows.map { row in
            let week: String = try row.string("week")
            let name: String = try row.string("name")
            let points: Int = try row.int("points")
            let found: Int = try row.int("found")
            let at: Int = try row.int("at_us")
            return "\(week) \(name) points \(points) found \(found) at \(at)"
        }
    }
    return (try lines(kept), try lines(computed))
}

@Suite("Each user's totals across hunts, kept by the writing transactions (groundwork of RANKING and PROFILE)")
struct UserScoreTests {
    @Test("after seeded random check-ins, approvals, rejections, leaves and rejoins, every total equals a brute force over the check-ins", arguments: [7, 42])
    func totalsMatch(seed: UInt64) async throws {
        try await withDatabaseServer { address, environment in
            let names = ["host", "pa1", "pa2", "pa3", "pa4"]
            try await asUsers(names, address, environment) { (users: [Conversation]) async throws in
                let host = users[0]
                let players = Array(users[1...])
                var random = SplitMix64(seed: seed)
                // Two hunts: one of place stops, one of photo stops that need reviews.
                let places = try await host.makeHunt(stops: (0 ..< 4).map { StopPlan(north: Double($0) * 20, points: 5 + $0) })
                let photos = try await host.makeHunt(
                    name: "photos", stops: (0 ..< 3).map { StopPlan(north: Double($0) * 20, points: 10 * $0, options: "PROOF photo") })
                var joined: [Int: Set<String>] = [:]
                var pending: [String] = []
                var accepted: [String] = []
                for step in 0 ..< 60 {
                    let index = Int(random.next() % UInt64(players.count))
                    let player = players[index]
                    switch random.next() % 6 {
                    case 0, 1:
                        let hunt = random.next() % 2 == 0 ? places : photos
                        if joined[index, default: []].contains(hunt.id) {
                            let stop = Int(random.next() % UInt64(hunt.stops.count))
                            let reply = try await player.checkInReply(
                                hunt.stops[stop], at: hunt.places[stop], hunt.id == photos.id ? photoOption : "")
                            if reply.hasPrefix("OK ") {
                                let id = try JSONObject(okLine: reply)["checkin"]["id"].string
                                if hunt.id == photos.id { pending.append(id) } else { accepted.append(id) }
                            } else {
                                #expect(reply.hasPrefix("ERR CONFLICT "), "step \(step): \(reply)")
                            }
                        } else {
                            try await player.join(hunt)
                            joined[index, default: []].insert(hunt.id)
                        }
                    case 2:
                        if let id = pending.popLast() {
                            _ = try await host.ok("APPROVE \(id) BONUS \(random.next() % 3)")
                            accepted.append(id)
                        }
                    case 3:
                        if !accepted.isEmpty {
                            let id = accepted.remove(at: Int(random.next() % UInt64(accepted.count)))
                            let reply = try await host.call("REJECT \(id)")
                            #expect(reply.hasPrefix("OK ") || reply.hasPrefix("ERR NOT_FOUND "), "step \(step): \(reply)")
                        }
                    case 4:
                        if let hunt = [places, photos].first(where: { joined[index, default: []].contains($0.id) }) {
                            _ = try await player.ok("LEAVE \(hunt.id)")
                            joined[index]?.remove(hunt.id)
                        }
                    default:
                        let hunt = places
                        if !joined[index, default: []].contains(hunt.id) {
                            try await player.join(hunt)
                            joined[index, default: []].insert(hunt.id)
                        }
                    }
                    let (kept, computed) = try await totals(environment)
                    #expect(kept == computed, "after step \(step)")
                    if kept != computed { return }
                }
                let (keptWeeks, computedWeeks) = try await weeks(environment)
                #expect(keptWeeks == computedWeeks)
                #expect(!keptWeeks.isEmpty)
            }
        }
    }
}
