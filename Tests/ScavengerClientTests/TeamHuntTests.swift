import Foundation
import ScavengerClient
import ScavengerTestSupport
import Testing

/// Team hunts (protocol 1.4) through the client's typed calls, against a real daemon.
@Suite("ScavengerClient: team hunts", .timeLimit(.minutes(10)))
struct TeamHuntTests {
    static let gate = (lat: 52.5169, lon: 13.4019)
    static let tower = (lat: 52.5172, lon: 13.4019)

    @Test("join with a team (spaces quoted, found in any case); no team, a team in a hunt of single players and a full team refused; joining again moves the player before the start, not after; CHECKIN, HUNT's me and the board are the team's, with its members; winners are teams")
    func teams() async throws {
        try await Daemon.with { daemon in
            let host = try daemon.client(), ann = try daemon.client(), bob = try daemon.client()
            let carol = try daemon.client(), dan = try daemon.client()
            defer { Task { for client in [host, ann, bob, carol, dan] { await client.close() } } }
            _ = try await host.register(username: "hostess", email: "h@example.org", password: "password1")
            for (client, name) in [(ann, "ann"), (bob, "bob"), (carol, "carol"), (dan, "dan")] {
                _ = try await client.register(username: name, email: "\(name)@example.org", password: "password1")
            }
            let solo = try await host.createHunt(name: "Solo")
            let hunt = try await host.createHunt(name: "Relay", teamSize: 2)
            #expect(hunt.teams == 2 && solo.teams == nil)
            let gate = try await host.addStop(
                hunt: hunt.id, lat: Self.gate.lat, lon: Self.gate.lon, radiusMeters: 40, points: 10, title: "Gate")
            let tower = try await host.addStop(
                hunt: hunt.id, lat: Self.tower.lat, lon: Self.tower.lon, radiusMeters: 40, points: 20, title: "Tower")
            let code = try #require(hunt.code)

            // A team hunt needs a team; a hunt of single players takes none.
            let noTeam = await #expect(throws: ScavengerError.self) { try await ann.join(code) }
            #expect(noTeam?.code == .badArgument)
            let teamInSolo = await #expect(throws: ScavengerError.self) { try await ann.join(try #require(solo.code), team: "Red Foxes") }
            #expect(teamInSolo?.code == .badArgument)

            // The first to name a team makes it; the name finds it again in any case.
            let joined = try await ann.join(code, team: "Red Foxes")
            #expect(joined.id == hunt.id && joined.teams == 2)
            _ = try await bob.join(code, team: "red foxes")
            let full = await #expect(throws: ScavengerError.self) { try await dan.join(code, team: "RED FOXES") }
            #expect(full?.code == .conflict)
            _ = try await carol.join(code, team: "Blue")
            _ = try await dan.join(code, team: "Blue")
            // Before the start, joining again with another team moves the player (and makes
            // that team); once the hunt runs, a member's team is fixed.
            _ = try await dan.join(code, team: "Green Team")
            #expect(try await dan.hunt(hunt.id).me?.team == "Green Team")
            _ = try await host.startHunt(hunt.id)
            let moved = await #expect(throws: ScavengerError.self) { try await dan.join(code, team: "Blue") }
            #expect(moved?.code == .conflict)

            // A stop counts once per team: the team's standing follows each member's finds.
            let annFound = try await ann.checkIn(stop: gate.id, lat: Self.gate.lat, lon: Self.gate.lon)
            #expect(annFound.checkin.status == .accepted && annFound.checkin.player == "ann")
            #expect(annFound.score.points == 10 && annFound.score.found == 1 && annFound.score.rank == 1)
            let bobFound = try await bob.checkIn(stop: tower.id, lat: Self.tower.lat, lon: Self.tower.lon)
            #expect(bobFound.score.points == 30 && bobFound.score.found == 2 && bobFound.score.rank == 1)
            // Another team's find of the same stop is that team's.
            let carolFound = try await carol.checkIn(stop: gate.id, lat: Self.gate.lat, lon: Self.gate.lon)
            #expect(carolFound.score.points == 10 && carolFound.score.found == 1 && carolFound.score.rank == 2)

            let bobs = try #require(try await bob.hunt(hunt.id).me)
            #expect(bobs.team == "Red Foxes" && bobs.points == 30 && Set(bobs.found) == [gate.id, tower.id] && bobs.rank == 1)
            #expect(try await ann.hunt(hunt.id).me == bobs)
            let carols = try #require(try await carol.hunt(hunt.id).me)
            #expect(carols.team == "Blue" && carols.points == 10 && carols.found == [gate.id] && carols.rank == 2)

            // The board lists teams, each with its players' names; no player has a row of their own.
            let board = try await host.leaderboard(hunt.id).items
            let red = try #require(board.first { $0.player == "Red Foxes" })
            #expect(red.rank == 1 && red.points == 30 && red.found == 2 && red.members?.sorted() == ["ann", "bob"])
            let blue = try #require(board.first { $0.player == "Blue" })
            #expect(blue.rank == 2 && blue.points == 10 && blue.found == 1 && blue.members == ["carol"])
            #expect(!board.contains { ["ann", "bob", "carol", "dan"].contains($0.player) })
            #expect(try await carol.leaderboard(hunt.id, around: true).items.contains { $0.player == "Blue" })

            // Red Foxes found every stop: the winners are teams.
            _ = try await host.endHunt(hunt.id)
            #expect(try await host.hunt(hunt.id).winners == ["Red Foxes"])
        }
    }

    @Test("a team hunt's watch: found names the member who checked in, score carries the team's entry with its members")
    func watch() async throws {
        try await Daemon.with { daemon in
            let host = try daemon.client(), ann = try daemon.client(), bob = try daemon.client()
            defer { Task { for client in [host, ann, bob] { await client.close() } } }
            _ = try await host.register(username: "hostess", email: "h@example.org", password: "password1")
            _ = try await ann.register(username: "ann", email: "ann@example.org", password: "password1")
            _ = try await bob.register(username: "bob", email: "bob@example.org", password: "password1")
            let hunt = try await host.createHunt(name: "Relay", teams: true)
            let stop = try await host.addStop(hunt: hunt.id, lat: Self.gate.lat, lon: Self.gate.lon, radiusMeters: 40, points: 10, title: "Gate")
            _ = try await host.startHunt(hunt.id)
            _ = try await ann.join(try #require(hunt.code), team: "Red Foxes")
            _ = try await bob.join(try #require(hunt.code), team: "Red Foxes")

            let events = Collected<HuntEvent>()
            let watching = Task { for try await event in bob.watchHunt(hunt.id) { events.append(event) } }
            try await eventually("the watch is in place") { events.all.contains(.started) }
            _ = try await ann.checkIn(stop: stop.id, lat: Self.gate.lat, lon: Self.gate.lon)
            try await eventually("the member's find and the team's score arrive") {
                let all = events.all
                return all.contains(.found(player: "ann", stop: stop.id, points: 10))
                    && all.contains {
                        if case let .score(entry) = $0 {
                            entry.player == "Red Foxes" && entry.points == 10 && entry.found == 1 && entry.members?.sorted() == ["ann", "bob"]
                        } else { false }
                    }
            }
            #expect(!events.all.contains { if case let .score(entry) = $0 { entry.members == nil } else { false } })
            watching.cancel()
        }
    }
}
