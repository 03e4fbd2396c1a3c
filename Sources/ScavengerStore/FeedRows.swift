import Postgres
import ScavengerCore

extension Database {
    /// A page of live pins in id order after `afterID`, for loading the feed in bounded batches.
    public func livePins(after afterID: String?, limit: Int) async throws(StoreError) -> [IndexedPin] {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.pinColumns) FROM pins p JOIN users u ON u.id = p.author_id
                WHERE p.expires_at > now() AND p.id > \(afterID ?? "")
                ORDER BY p.id LIMIT \(limit)
                """)
            let columns = try PinColumns(rows)
            return try rows.map(columns.pin)
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
            let (id, lat, lon) = try (rows.column("id"), rows.column("lat"), rows.column("lon"))
            return try rows.map { (id: try $0.string(id) as String, lat: try $0.double(lat) as Double, lon: try $0.double(lon) as Double) }
        }
    }
}
