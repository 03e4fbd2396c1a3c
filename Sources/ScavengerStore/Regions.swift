import GEOS
import Postgres
import ScavengerCore
import ScavengerGeography

/// What defining or deleting a region changed.
public struct RegionUpdate: Sendable, Equatable {
    /// Pins that now belong to a different region (or to none) than before.
    public var pinsReassigned: Int
    /// Pins of this region afterwards.
    public var pinsInRegion: Int
}

/// A region as `region list` shows it.
public struct RegionSummary: Sendable, Equatable {
    public var name: String
    public var pins: Int
    public var envelope: Envelope
}

extension Database {
    /// Every defined region.
    public func regions() async throws(StoreError) -> [RegionDefinition] {
        try await mappingErrors {
            try await pool.withConnection(retryOnConnectionFailure: true) { connection in
                try Self.loadRegions(connection)
            }
        }
    }

    /// Regions with their pin counts (pins not yet swept included), by name.
    public func regionSummaries() async throws(StoreError) -> [RegionSummary] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT r.name, r.min_lon, r.min_lat, r.max_lon, r.max_lat,
                       (SELECT count(*) FROM pins p WHERE p.region = r.name AND p.expires_at > now()) AS pins
                FROM regions r ORDER BY r.name
                """)
            let (name, pins) = try (rows.column("name"), rows.column("pins"))
            let envelope = try EnvelopeColumns(rows)
            return try rows.map { row in
                RegionSummary(name: try row.string(name), pins: try row.int(pins), envelope: try envelope.envelope(row))
            }
        }
    }

    /// Defines or replaces a region and reassigns every pin it touches, existing ones included,
    /// in one transaction; running daemons learn of it through the change log.
    public func setRegion(_ region: RegionDefinition) async throws(StoreError) -> RegionUpdate {
        // Numbered soon after the commit (or a failure that may have committed): see LogNumbering.
        defer { feedNumbering.number() }
        return try await mappingErrors {
            try await pool.transaction { connection in
                try Self.lockRegions(connection)
                try connection.query("""
                    INSERT INTO regions (name, geojson, min_lat, min_lon, max_lat, max_lon, area)
                    VALUES (\(region.name), \(region.geoJSON), \(region.envelope.minY), \(region.envelope.minX),
                            \(region.envelope.maxY), \(region.envelope.maxX), \(region.area))
                    ON CONFLICT (name) DO UPDATE SET
                        geojson = excluded.geojson, min_lat = excluded.min_lat, min_lon = excluded.min_lon,
                        max_lat = excluded.max_lat, max_lon = excluded.max_lon, area = excluded.area, updated_at = now()
                    """)
                let reassigned = try Self.reassign(connection, name: region.name, box: region.envelope)
                let members = try connection.query("SELECT count(*) AS pins FROM pins WHERE region = \(region.name)")
                return RegionUpdate(pinsReassigned: reassigned, pinsInRegion: try members[0].int("pins"))
            }
        }
    }

    /// Deletes a region; its pins move to another region that contains them, or to none.
    /// Nil when there is no such region.
    public func deleteRegion(named name: String) async throws(StoreError) -> RegionUpdate? {
        // Numbered soon after the commit (or a failure that may have committed): see LogNumbering.
        defer { feedNumbering.number() }
        return try await mappingErrors {
            try await pool.transaction { connection -> RegionUpdate? in
                try Self.lockRegions(connection)
                let members = try connection.query("SELECT id, lat, lon FROM pins WHERE region = \(name) FOR UPDATE")
                let deleted = try connection.query("DELETE FROM regions WHERE name = \(name)")
                guard deleted.affectedRows > 0 else { return nil }
                let index = try RegionIndex(try Self.loadRegions(connection))
                var moves: [String: [String]] = [:]
                let (id, lat, lon) = try (members.column("id"), members.column("lat"), members.column("lon"))
                for row in members {
                    if let target = index.region(lat: try row.double(lat), lon: try row.double(lon)) {
                        moves[target, default: []].append(try row.string(id))
                    }
                }
                for (target, ids) in moves {
                    try Self.assign(connection, ids: ids, to: target)
                }
                return RegionUpdate(pinsReassigned: members.count, pinsInRegion: 0)
            }
        }
    }

    /// One region-changing command at a time, across processes.
    static func lockRegions(_ connection: PostgresConnection) throws {
        try connection.query("SELECT pg_advisory_xact_lock(hashtext('scavenger.regions'))")
    }

    static func loadRegions(_ connection: PostgresConnection) throws -> [RegionDefinition] {
        let rows = try connection.query("""
            SELECT name, geojson, min_lon, min_lat, max_lon, max_lat, area FROM regions ORDER BY name
            """)
        let (name, geoJSON, area) = try (rows.column("name"), rows.column("geojson"), rows.column("area"))
        let envelope = try EnvelopeColumns(rows)
        return try rows.map { row in
            RegionDefinition(
                name: try row.string(name), geoJSON: try row.string(geoJSON), envelope: try envelope.envelope(row),
                area: try row.double(area))
        }
    }

    /// A region's box, as `regions` stores it (`min_lon`, `min_lat`, `max_lon`, `max_lat`),
    /// found in one result.
    struct EnvelopeColumns {
        let minLon, minLat, maxLon, maxLat: PostgresColumn

        init(_ rows: PostgresRows) throws(PostgresError) {
            minLon = try rows.column("min_lon")
            minLat = try rows.column("min_lat")
            maxLon = try rows.column("max_lon")
            maxLat = try rows.column("max_lat")
        }

        func envelope(_ row: PostgresRow) throws(PostgresError) -> Envelope {
            Envelope(minX: try row.double(minLon), minY: try row.double(minLat), maxX: try row.double(maxLon), maxY: try row.double(maxLat))
        }
    }

    /// Recomputes the region of every pin inside `box` or currently in region `name`, with all
    /// regions as they now are; returns how many changed.
    static func reassign(_ connection: PostgresConnection, name: String, box: Envelope) throws -> Int {
        let index = try RegionIndex(try loadRegions(connection))
        let candidates = try connection.query("""
            SELECT id, lat, lon, region FROM pins
            WHERE region = \(name)
               OR (lat BETWEEN \(box.minY) AND \(box.maxY) AND lon BETWEEN \(box.minX) AND \(box.maxX))
            FOR UPDATE
            """)
        var moves: [String?: [String]] = [:]
        let (id, lat, lon, region) = try (
            candidates.column("id"), candidates.column("lat"), candidates.column("lon"), candidates.column("region"))
        for row in candidates {
            let current: String? = try row.string(region)
            let target = index.region(lat: try row.double(lat), lon: try row.double(lon))
            if target != current {
                moves[target, default: []].append(try row.string(id))
            }
        }
        for (target, ids) in moves {
            try assign(connection, ids: ids, to: target)
        }
        return moves.values.reduce(0) { $0 + $1.count }
    }

    static func assign(_ connection: PostgresConnection, ids: [String], to region: String?) throws {
        // Ids are [a-z2-7] only, so the array literal needs no quoting.
        for batch in stride(from: 0, to: ids.count, by: 5000) {
            let slice = ids[batch ..< min(batch + 5000, ids.count)]
            let literal = "{" + slice.joined(separator: ",") + "}"
            try connection.query("UPDATE pins SET region = \(region) WHERE id = ANY(\(literal)::text[])")
        }
    }
}
