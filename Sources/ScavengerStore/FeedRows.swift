import Postgres
import ScavengerCore

extension Database {
    /// The columns the in-memory feed keeps of a pin, in the order ``indexedPin(_:)`` reads them.
    static let indexedColumns = """
        p.id, p.lat, p.lon, p.kind, p.body, u.name,
        (extract(epoch FROM p.created_at) * 1000000)::bigint,
        (extract(epoch FROM p.expires_at) * 1000000)::bigint,
        p.region, p.photo_mime, p.photo_bytes, p.reply_count, p.hidden
        """

    static func indexedPin(_ row: PostgresRow) throws -> IndexedPin {
        let kindName: String = try row.string(3)
        guard let kind = PinKind(rawValue: kindName) else { throw StoreError.unexpected("unknown pin kind \(kindName)") }
        var photo: PhotoInfo?
        if let mime: String = try row.string(9), let bytes: Int = try row.int(10) {
            photo = PhotoInfo(mime: mime, bytes: bytes)
        }
        return IndexedPin(
            id: try row.string(0), lat: try row.double(1), lon: try row.double(2), kind: kind, text: try row.string(4),
            author: try row.string(5), created: Timestamp(microseconds: Int64(try row.int(6) as Int)),
            expires: Timestamp(microseconds: Int64(try row.int(7) as Int)), region: try row.string(8), photo: photo,
            replies: try row.int(11), hidden: try row.bool(12))
    }

    /// A page of live pins in id order after `afterID`, for loading the feed in bounded batches.
    public func livePins(after afterID: String?, limit: Int) async throws(StoreError) -> [IndexedPin] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.indexedColumns) FROM pins p JOIN users u ON u.id = p.author_id
                WHERE p.expires_at > now() AND p.id > \(afterID ?? "")
                ORDER BY p.id LIMIT \(limit)
                """)
            return try rows.map(Self.indexedPin)
        }
    }

    /// One pin as the feed keeps it, or nil when it is gone or expired.
    public func indexedPin(id: String) async throws(StoreError) -> IndexedPin? {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.indexedColumns) FROM pins p JOIN users u ON u.id = p.author_id
                WHERE p.id = \(id) AND p.expires_at > now()
                """)
            return try rows.first.map(Self.indexedPin)
        }
    }

    /// The region of every live pin inside a box, for refreshing the feed after a region changed.
    public func pinRegions(minLat: Double, minLon: Double, maxLat: Double, maxLon: Double, orRegion name: String)
        async throws(StoreError) -> [(id: String, region: String?)]
    {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT id, region FROM pins
                WHERE expires_at > now()
                  AND (region = \(name) OR (lat BETWEEN \(minLat) AND \(maxLat) AND lon BETWEEN \(minLon) AND \(maxLon)))
                """)
            return try rows.map { (id: try $0.string(0) as String, region: try $0.string(1) as String?) }
        }
    }

    /// Sets the grid cell of pins written before cells existed.
    public func fillMissingCells(_ cells: [(id: String, cell: Int64)]) async throws(StoreError) {
        guard !cells.isEmpty else { return }
        try await mappingErrors {
            for batch in stride(from: 0, to: cells.count, by: 5000) {
                let slice = cells[batch ..< min(batch + 5000, cells.count)]
                let ids = "{" + slice.map(\.id).joined(separator: ",") + "}"
                let values = "{" + slice.map { String($0.cell) }.joined(separator: ",") + "}"
                try await pool.query("""
                    UPDATE pins SET cell = v.cell
                    FROM unnest(\(ids)::text[], \(values)::bigint[]) AS v(id, cell)
                    WHERE pins.id = v.id AND pins.cell IS NULL
                    """, idempotent: false)
            }
        }
    }

    /// Ids of live pins whose cell is not set yet, with their location.
    public func pinsWithoutCell(limit: Int) async throws(StoreError) -> [(id: String, lat: Double, lon: Double)] {
        try await mappingErrors {
            let rows = try await pool.query("SELECT id, lat, lon FROM pins WHERE cell IS NULL LIMIT \(limit)")
            return try rows.map { (id: try $0.string(0) as String, lat: try $0.double(1) as Double, lon: try $0.double(2) as Double) }
        }
    }
}
