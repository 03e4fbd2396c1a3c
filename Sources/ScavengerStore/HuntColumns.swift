import Postgres
import ScavengerCore

// The columns hunt queries select and how their rows are read: hunts, stops, check-ins.
extension Database {
    /// The columns every hunt query selects (from `hunts h JOIN users hu ON hu.id = h.host_id`),
    /// each named for ``HuntColumns``.
    static let huntColumns = """
        h.id AS hunt_id, h.name AS hunt_name, h.description AS hunt_description, h.host_id AS hunt_host_id,
        hu.name AS hunt_host, h.code AS hunt_code, h.ordered AS hunt_ordered, h.public AS hunt_public,
        (extract(epoch FROM h.starts_at) * 1000000)::bigint AS hunt_starts_us,
        (extract(epoch FROM h.ends_at) * 1000000)::bigint AS hunt_ends_us,
        h.duration_s AS hunt_duration_s, h.stop_count AS hunt_stops, h.player_count AS hunt_players,
        (extract(epoch FROM h.created_at) * 1000000)::bigint AS hunt_created_us,
        h.moderation_hidden AS hunt_moderation_hidden, h.removed AS hunt_removed,
        h.team_size AS hunt_team_size, h.trial_s AS hunt_trial_s, h.badge_name AS hunt_badge_name, h.guests AS hunt_guests
        """

    static let huntFrom = "hunts h JOIN users hu ON hu.id = h.host_id"

    /// A hunt's end as the clock sees it: `ends_at`, or a started hunt's start plus its DURATION.
    static let huntEnd = "coalesce(h.ends_at, h.starts_at + h.duration_s * interval '1 second')"
    /// A hunt that has not ended.
    static let huntNotEnded = "(\(huntEnd) IS NULL OR \(huntEnd) > now())"
    /// A hunt that is running.
    static let huntRunning = "(h.starts_at <= now() AND \(huntNotEnded))"

    struct HuntColumns {
        let id, name, description, hostID, host, code, ordered, isPublic, starts, ends, duration, stops, players, created: PostgresColumn
        let moderationHidden, removed, teamSize, trial, badge, guests: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("hunt_id")
            name = try rows.column("hunt_name")
            description = try rows.column("hunt_description")
            hostID = try rows.column("hunt_host_id")
            host = try rows.column("hunt_host")
            code = try rows.column("hunt_code")
            ordered = try rows.column("hunt_ordered")
            isPublic = try rows.column("hunt_public")
            starts = try rows.column("hunt_starts_us")
            ends = try rows.column("hunt_ends_us")
            duration = try rows.column("hunt_duration_s")
            stops = try rows.column("hunt_stops")
            players = try rows.column("hunt_players")
            created = try rows.column("hunt_created_us")
            moderationHidden = try rows.column("hunt_moderation_hidden")
            removed = try rows.column("hunt_removed")
            teamSize = try rows.column("hunt_team_size")
            trial = try rows.column("hunt_trial_s")
            badge = try rows.column("hunt_badge_name")
            guests = try rows.column("hunt_guests")
        }

        func hunt(_ row: PostgresRow) throws -> HuntRecord {
            let codeText: String = try row.string(code)
            guard let joinCode = JoinCode(typed: codeText) else { throw StoreError.unexpected("a stored join code is malformed") }
            let startsUS: Int? = try row.int(starts)
            let endsUS: Int? = try row.int(ends)
            var record = HuntRecord(
                id: try row.string(id), name: try row.string(name), description: try row.string(description),
                hostID: try row.int(hostID), hostName: try row.string(host), code: joinCode, ordered: try row.bool(ordered),
                isPublic: try row.bool(isPublic),
                schedule: HuntSchedule(
                    starts: startsUS.map { Timestamp(microseconds: Int64($0)) }, ends: endsUS.map { Timestamp(microseconds: Int64($0)) },
                    durationSeconds: try row.int(duration)),
                stops: try row.int(stops), players: try row.int(players),
                created: Timestamp(microseconds: Int64(try row.int(created) as Int)), moderationHidden: try row.bool(moderationHidden),
                removed: try row.bool(removed))
            record.teamSize = try row.int(teamSize)
            record.trialSeconds = try row.int(trial)
            record.badgeName = try row.string(badge)
            record.guests = try row.int(guests)
            return record
        }
    }

    static let stopColumns = """
        s.id AS stop_id, s.hunt_id AS stop_hunt, s.n AS stop_n, s.title AS stop_title, s.clue AS stop_clue, s.lat AS stop_lat,
        s.lon AS stop_lon, s.radius_m AS stop_radius, s.points AS stop_points, s.proof AS stop_proof, s.code_hash AS stop_code_hash,
        s.hidden AS stop_hidden, s.found_by AS stop_found_by, s.moderation_hidden AS stop_withheld
        """

    struct StopColumns {
        let id, hunt, n, title, clue, lat, lon, radius, points, proof, codeHash, hidden, foundBy, withheld: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("stop_id")
            hunt = try rows.column("stop_hunt")
            n = try rows.column("stop_n")
            title = try rows.column("stop_title")
            clue = try rows.column("stop_clue")
            lat = try rows.column("stop_lat")
            lon = try rows.column("stop_lon")
            radius = try rows.column("stop_radius")
            points = try rows.column("stop_points")
            proof = try rows.column("stop_proof")
            codeHash = try rows.column("stop_code_hash")
            hidden = try rows.column("stop_hidden")
            foundBy = try rows.column("stop_found_by")
            withheld = try rows.column("stop_withheld")
        }

        func stop(_ row: PostgresRow) throws -> StopRecord {
            let proofName: String = try row.string(proof)
            guard let proof = StopProof(rawValue: proofName) else { throw StoreError.unexpected("unknown proof \(proofName)") }
            return StopRecord(
                stop: HuntStop(
                    id: try row.string(id), hunt: try row.string(hunt), n: try row.int(n), title: try row.string(title),
                    clue: try row.string(clue), lat: try row.double(lat), lon: try row.double(lon), radiusMeters: try row.double(radius),
                    points: try row.int(points), proof: proof, foundBy: try row.int(foundBy), hidden: try row.bool(hidden)),
                codeHash: try row.string(codeHash), withheld: try row.bool(withheld))
        }
    }

    static let checkInColumns = """
        c.id AS checkin_id, c.hunt_id AS checkin_hunt, c.stop_id AS checkin_stop, hp.name AS checkin_player,
        c.status AS checkin_status, c.points AS checkin_points, (extract(epoch FROM c.created_at) * 1000000)::bigint AS checkin_at_us,
        c.distance_m AS checkin_distance, c.photo_mime AS checkin_photo_mime, c.photo_bytes AS checkin_photo_bytes,
        c.photo_width AS checkin_photo_width, c.photo_height AS checkin_photo_height,
        c.user_id AS checkin_user, h.host_id AS checkin_host, s.points AS checkin_stop_points,
        c.travel_from_m AS checkin_travel_m, c.travel_seconds AS checkin_travel_s
        """

    /// Check-ins with their player's name, their hunt's host and their stop's points.
    static let checkInFrom = """
        checkins c JOIN hunt_players hp ON hp.hunt_id = c.hunt_id AND hp.user_id = c.user_id
        JOIN hunts h ON h.id = c.hunt_id JOIN hunt_stops s ON s.id = c.stop_id
        """

    struct CheckInColumns {
        let id, hunt, stop, player, status, points, at, distance, photoMime, photoBytes, user, host, stopPoints: PostgresColumn
        let travelMeters, travelSeconds, photoWidth, photoHeight: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            id = try rows.column("checkin_id")
            hunt = try rows.column("checkin_hunt")
            stop = try rows.column("checkin_stop")
            player = try rows.column("checkin_player")
            status = try rows.column("checkin_status")
            points = try rows.column("checkin_points")
            at = try rows.column("checkin_at_us")
            distance = try rows.column("checkin_distance")
            photoMime = try rows.column("checkin_photo_mime")
            photoBytes = try rows.column("checkin_photo_bytes")
            photoWidth = try rows.column("checkin_photo_width")
            photoHeight = try rows.column("checkin_photo_height")
            user = try rows.column("checkin_user")
            host = try rows.column("checkin_host")
            stopPoints = try rows.column("checkin_stop_points")
            travelMeters = try rows.column("checkin_travel_m")
            travelSeconds = try rows.column("checkin_travel_s")
        }

        static func travel(_ row: PostgresRow, _ meters: PostgresColumn, _ seconds: PostgresColumn) throws -> Travel? {
            guard let from: Double = try row.double(meters), let elapsed: Double = try row.double(seconds) else { return nil }
            return Travel(fromMeters: from, seconds: elapsed)
        }

        func checkIn(_ row: PostgresRow) throws -> CheckInRecord {
            let statusName: String = try row.string(status)
            guard let status = CheckInStatus(rawValue: statusName) else { throw StoreError.unexpected("unknown status \(statusName)") }
            var photo: PhotoInfo?
            if let mime: String = try row.string(photoMime), let bytes: Int = try row.int(photoBytes) {
                photo = PhotoInfo(
                    mime: mime, bytes: bytes, width: try row.int(photoWidth) ?? 0, height: try row.int(photoHeight) ?? 0)
            }
            return CheckInRecord(
                checkIn: CheckIn(
                    id: try row.string(id), hunt: try row.string(hunt), stop: try row.string(stop), player: try row.string(player),
                    status: status, points: try row.int(points), at: Timestamp(microseconds: Int64(try row.int(at) as Int)),
                    distanceMeters: try row.double(distance), photo: photo, travel: try Self.travel(row, travelMeters, travelSeconds)),
                userID: try row.int(user), hostID: try row.int(host), stopPoints: try row.int(stopPoints))
        }
    }
}
