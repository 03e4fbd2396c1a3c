import Foundation
import ScavengerClient
import ScavengerTestSupport
import Testing

/// Every command of the protocol through the client's typed calls, against a real daemon.
@Suite("ScavengerClient: every command round-trips", .timeLimit(.minutes(10)))
struct RoundTripTests {
    @Test("connection, accounts, pins, chat, reports and moderation")
    func pinsAndModeration() async throws {
        try await Daemon.with { daemon in
            let alice = try daemon.client()
            let bob = try daemon.client()
            let moderator = try daemon.client()
            defer { Task { await alice.close(); await bob.close(); await moderator.close() } }

            #expect(try await alice.ping())
            let hello = try await alice.hello()
            #expect(hello.server == "scavengerd" && hello.protocol == 1 && hello.user == nil)
            let help = try await alice.help()
            let commands = help.map(\.command)
            #expect(commands.contains("NEARBY") && commands.contains("CHECKIN") && commands.contains("PROFILE"))
            // The client's own lists of writes and reads are the daemon's, as its HELP flags them.
            #expect(Set(help.filter { $0.flags == ["write"] }.map(\.command)) == ScavengerClient.writeCommands)
            #expect(Set(help.filter { $0.flags == ["readonly"] }.map(\.command)) == ScavengerClient.readOnlyCommands)
            #expect(help.allSatisfy { $0.flags.isEmpty || $0.flags == ["write"] || $0.flags == ["readonly"] })
            #expect(try await alice.help("post").command == "POST")
            #expect(try await alice.whoami() == nil)

            let session = try await alice.register(username: "alice", email: "alice@example.org", password: "password1")
            #expect(session.user.name == "alice" && session.user.role == .user)
            #expect(await alice.token == session.token)
            #expect(try await alice.whoami()?.name == "alice")
            _ = try await bob.register(username: "bob", email: "bob@example.org", password: "password1")
            _ = try await moderator.register(username: "mod", email: "mod@example.org", password: "password1")
            try daemon.schema.setRole("mod", "moderator")
            // LOGOUT ends the token; LOGIN gives another, AUTH resumes it elsewhere.
            try await moderator.logout()
            #expect(await moderator.token == nil)
            let moderatorSession = try await moderator.login("mod", password: "password1")
            #expect(moderatorSession.user.role == .moderator)
            let elsewhere = try daemon.client()
            #expect(try await elsewhere.auth(token: moderatorSession.token).name == "mod")
            await elsewhere.close()
            let wrong = await #expect(throws: ScavengerError.self) { try await bob.login("bob", password: "wrongpass1") }
            #expect(wrong?.code == .unauthorized)
            _ = try await bob.login("bob", password: "password1")

            // Pins.
            let text = "Free coffee at the \"blue\" kiosk\nuntil 5, 50 % off"
            let pin = try await alice.post(lat: 52.52, lon: 13.405, text: text, ttlSeconds: 3600)
            #expect(pin.text == text && pin.author == "alice" && pin.kind == .text && pin.replies == 0)
            #expect(try await bob.pin(pin.id) == pin)
            let jpeg = Data(PhotoFixtures.jpeg())
            let photoPin = try await alice.postPhoto(lat: 52.5201, lon: 13.4051, photo: jpeg, caption: "a view")
            #expect(photoPin.kind == .photo && photoPin.photo?.mime == "image/jpeg" && photoPin.text == "a view")
            let photo = try await bob.photo(photoPin.id)
            #expect(photo.mime == "image/jpeg" && photo.data.count == photoPin.photo?.bytes)
            let near = try await bob.nearby(lat: 52.52, lon: 13.405, radiusMeters: 500)
            #expect(near.items.map(\.id) == [pin.id, photoPin.id] && near.next == nil)
            #expect(near.items[0].distanceMeters == 0)
            let firstPage = try await bob.nearby(lat: 52.52, lon: 13.405, radiusMeters: 500, limit: 1)
            #expect(firstPage.items.map(\.id) == [pin.id])
            let secondPage = try await bob.nearby(lat: 52.52, lon: 13.405, radiusMeters: 500, limit: 1, cursor: firstPage.next)
            #expect(secondPage.items.map(\.id) == [photoPin.id])
            #expect(try await bob.nearby(lat: 52.52, lon: 13.405, radiusMeters: 500, kind: .photo).items.map(\.id) == [photoPin.id])
            // MAP: both pins in one cell zoomed out; each alone, with its pin, zoomed in.
            let map = try await bob.map(south: 52, west: 13, north: 53, east: 14, zoom: 5)
            #expect(map.total == 2 && map.cells.map(\.count) == [2] && map.cells[0].pin == nil && map.cells[0].box.count == 4)
            let close = try await bob.map(south: 52.519, west: 13.404, north: 52.521, east: 13.406, zoom: 20, kind: .photo, limit: 5)
            #expect(close.total == 1 && close.cells.first?.pin?.id == photoPin.id)
            #expect(try await bob.regions() == [])
            let noRegion = await #expect(throws: ScavengerError.self) { try await bob.region("berlin") }
            #expect(noRegion?.code == .notFound)

            // Chat.
            let reply = try await bob.reply(to: pin.id, text: "on my way")
            #expect(reply.pin == pin.id && reply.author == "bob")
            #expect(try await alice.replies(pin.id).items == [reply])

            // Reports and moderation.
            let report = try await bob.report(pin.id, reason: .spam, note: "ads")
            #expect(report.item == pin.id && report.status == "open")
            let own = await #expect(throws: ScavengerError.self) { try await alice.report(pin.id, reason: .other) }
            #expect(own?.code == .forbidden)
            let queue = try await moderator.moderationQueue(status: .open)
            #expect(queue.map(\.item) == [pin.id] && queue.first?.content.text == text && queue.first?.reasons == ["spam": 1])
            let claimed = try await moderator.claim(pin.id)
            #expect(claimed?.status == "claimed" && claimed?.claimedBy == "mod")
            try await moderator.release(pin.id)
            #expect(try await moderator.claim()?.item == pin.id)
            #expect(try await moderator.claim() == nil)
            let resolved = try await moderator.resolve(pin.id, .dismiss, note: "fine")
            #expect(resolved.status == "resolved" && resolved.resolution == "dismiss")
            try await moderator.ban("bob", seconds: 3600, note: "test")
            let banned = await #expect(throws: ScavengerError.self) { try await bob.post(lat: 1, lon: 1, text: "hi") }
            #expect(banned?.code == .banned)
            try await moderator.unban("bob")
            let log = try await moderator.moderationLog()
            #expect(log.items.map(\.action).starts(with: ["unban", "ban", "dismiss"]))
            let forbidden = await #expect(throws: ScavengerError.self) { try await bob.moderationQueue() }
            #expect(forbidden?.code == .forbidden)

            // Delete; then it is gone.
            try await alice.delete(pin.id)
            let gone = await #expect(throws: ScavengerError.self) { try await bob.pin(pin.id) }
            #expect(gone?.code == .notFound)
            // A raw line with quoting, and QUIT (the next call reconnects and resumes the session).
            let raw = try await alice.send("WHOAMI")
            #expect(raw.contains("\"alice\""))
            try await alice.quit()
            #expect(try await alice.whoami()?.name == "alice")
            #expect(await alice.connectionCount == 2)
        }
    }

    @Test("hunts, check-ins, reviews, leaderboards, ranking, profiles, errors with numbers")
    func hunts() async throws {
        try await Daemon.with { daemon in
            let host = try daemon.client()
            let player = try daemon.client()
            defer { Task { await host.close(); await player.close() } }
            _ = try await host.register(username: "hostess", email: "h@example.org", password: "password1")
            _ = try await player.register(username: "alice", email: "a@example.org", password: "password1")

            let created = try await host.createHunt(name: "Museum island", description: "Three stops", isPublic: true)
            #expect(created.state == .scheduled && created.code?.count == 6 && created.public)
            let first = try await host.addStop(
                hunt: created.id, lat: 52.5169, lon: 13.4019, radiusMeters: 40, points: 10, title: "Lustgarten", clue: "The bowl")
            let second = try await host.addStop(
                hunt: created.id, lat: 52.5196, lon: 13.3985, radiusMeters: 30, points: 20, title: "Bode", proof: .code, code: "BODE-1904")
            let third = try await host.addStop(
                hunt: created.id, lat: 52.52, lon: 13.40, radiusMeters: 30, points: 5, title: "Photo", proof: .photo, hidden: true)
            let spare = try await host.addStop(hunt: created.id, lat: 52.6, lon: 13.5, radiusMeters: 10, points: 1, title: "Spare")
            try await host.removeStop(spare.id)
            #expect(first.n == 1 && second.proof == .code && third.lat != nil)

            let joined = try await player.join(created.code!.lowercased())
            #expect(joined.id == created.id && joined.code == nil && joined.players == 1)
            #expect(try await player.hunts().items.map(\.id) == [created.id])
            #expect(try await player.hunts(mine: true).items.map(\.id) == [created.id])
            // A scheduled hunt's stops are its host's alone: NEAR lists it only once it runs.
            #expect(try await player.hunts(near: (52.5169, 13.4019, 100)).items.isEmpty)
            let early = await #expect(throws: ScavengerError.self) {
                try await player.checkIn(stop: first.id, lat: 52.5169, lon: 13.4019)
            }
            #expect(early?.code == .conflict)

            let started = try await host.startHunt(created.id)
            #expect(try await player.hunts(near: (52.5169, 13.4019, 100)).items.map(\.id) == [created.id])
            #expect(started.state == .running && started.starts != nil)
            let extended = try await host.extend(created.id, seconds: 3600)
            #expect(extended.ends != nil)
            try await host.hint(created.id, text: "Look up")

            let far = await #expect(throws: ScavengerError.self) {
                try await player.checkIn(stop: first.id, lat: 52.5180, lon: 13.4019, accuracyMeters: 8)
            }
            #expect(far?.code == .tooFar && far?.distanceMeters == 122)
            let found = try await player.checkIn(stop: first.id, lat: 52.51693, lon: 13.40192, accuracyMeters: 8)
            #expect(found.checkin.status == .accepted && found.score.points == 10 && found.score.found == 1 && found.score.rank == 1)
            let coded = try await player.checkIn(stop: second.id, lat: 52.5195, lon: 13.3986, code: "BODE-1904")
            #expect(coded.score.points == 30)
            let pending = try await player.checkIn(stop: third.id, lat: 52.52, lon: 13.40, photo: Data(PhotoFixtures.jpeg()))
            #expect(pending.checkin.status == .pending && pending.checkin.photo?.mime == "image/jpeg")
            #expect(try await host.photo(pending.checkin.id).mime == "image/jpeg")
            #expect(try await host.review(created.id).items.map(\.id) == [pending.checkin.id])
            let approved = try await host.approve(pending.checkin.id, bonus: 2)
            #expect(approved.status == .accepted && approved.points == 7)
            let rejected = try await host.reject(coded.checkin.id, note: "no")
            #expect(rejected.status == .rejected)

            let details = try await player.hunt(created.id)
            #expect(details.hunt.id == created.id && details.stops.count == 3 && details.hints.map(\.text) == ["Look up"])
            #expect(details.me?.points == 17 && details.me?.rank == 1)
            let board = try await host.leaderboard(created.id)
            #expect(board.items.map(\.player) == ["alice"] && board.items.first?.points == 17)
            #expect(try await player.leaderboard(created.id, around: true).items.count == 1)
            #expect(try await player.ranking().items.map(\.player) == ["alice"])
            #expect(try await player.ranking(.week, around: true).items.first?.points == 17)
            #expect(try await player.ranking(.lastWeek).items == [])
            let profile = try await host.profile("alice")
            #expect(profile.points == 17 && profile.stopsFound == 2 && profile.huntsPlayed == 1 && profile.rank == 1)
            #expect(try await player.profile().user.name == "alice")
            // Badges (protocol 1.4): her first find's, kept though a later check-in was rejected.
            let badges = try await host.badges(of: "alice")
            #expect(badges.map(\.id).first == "first-find" && badges.allSatisfy { $0.hunt == created.id && !$0.name.isEmpty })
            #expect(try await player.badges() == badges)
            #expect(profile.badges == badges.count)

            // The chat of a hunt, a report of a stop, leaving, ending.
            let message = try await player.reply(to: created.id, text: "where is the bowl?")
            #expect(try await host.replies(created.id).items == [message])
            let other = try daemon.client()
            _ = try await other.register(username: "carol", email: "c@example.org", password: "password1")
            #expect(try await other.report(first.id, reason: .other).item == first.id)
            _ = try await other.join(created.id, as: "caro")
            try await other.leave(created.id)
            await other.close()
            let ended = try await host.endHunt(created.id)
            #expect(ended.state == .ended)
            #expect(try await host.hunt(created.id).winners == [])
        }
    }

    @Test("protocol 1.4's hunt options and a time trial's leaderboard: teams, trial, badge, time_s")
    func trial() async throws {
        try await Daemon.with { daemon in
            let host = try daemon.client()
            let player = try daemon.client()
            defer { Task { await host.close(); await player.close() } }
            _ = try await host.register(username: "hostess", email: "h@example.org", password: "password1")
            _ = try await player.register(username: "alice", email: "a@example.org", password: "password1")
            // TEAMS alone is teams of up to 6; SIZE sets the largest team (2–50).
            #expect(try await host.createHunt(name: "Relay", teams: true).teams == 6)
            let teams = try await host.createHunt(name: "Relay", teamSize: 4)
            #expect(teams.teams == 4 && teams.trial == nil)
            let tooBig = await #expect(throws: ScavengerError.self) { try await host.createHunt(name: "Relay", teamSize: 51) }
            #expect(tooBig?.code == .badArgument)
            let badged = try await host.createHunt(name: "Relay", badge: "Relay runner")
            #expect(badged.teams == nil && badged.trial == nil && badged.badge == "Relay runner")
            let plain = try await host.createHunt(name: "Plain")
            #expect(plain.teams == nil && plain.trial == nil && plain.badge == nil)
            let sprint = try await host.createHunt(name: "Sprint", trialSeconds: 600)
            #expect(sprint.trial == 600 && sprint.teams == nil)
            let stop = try await host.addStop(hunt: sprint.id, lat: 52.5169, lon: 13.4019, radiusMeters: 40, points: 10, title: "Lustgarten")
            _ = try await host.startHunt(sprint.id)
            _ = try await player.join(try #require(sprint.code))
            #expect(try await host.leaderboard(sprint.id).items.map(\.timeSeconds) == [nil])
            _ = try await player.checkIn(stop: stop.id, lat: 52.5169, lon: 13.4019)
            let entry = try #require(try await host.leaderboard(sprint.id).items.first)
            #expect(entry.player == "alice" && entry.found == 1 && entry.timeSeconds == 0)
        }
    }
}
