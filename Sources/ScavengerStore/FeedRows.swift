import Postgres
import ScavengerCore

extension Database {
    /// The pins table's size now: its pages, about how many rows (PostgreSQL's own estimate,
    /// scaled to the pages it has now; nil before the table was ever analyzed), and the file that
    /// holds it. The start-up load reads the table in ranges of pages (``livePins(pages:)``), in
    /// the order PostgreSQL stores it, instead of fetching rows one by one through the id index;
    /// a rewrite of the table (`VACUUM FULL`, `CLUSTER`) moves every row and changes the file.
    public func pinTableSize() async throws(StoreError) -> (pages: Int, estimatedRows: Int?, file: Int) {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT s.pages, pg_relation_filenode(c.oid)::bigint AS file,
                       CASE WHEN c.relpages > 0 AND c.reltuples >= 0
                            THEN (c.reltuples / c.relpages * s.pages)::bigint END AS estimated_rows
                FROM pg_class c,
                     LATERAL (SELECT (pg_relation_size(c.oid) / current_setting('block_size')::bigint)::bigint AS pages) s
                WHERE c.oid = 'pins'::regclass
                """)
            guard let row = rows.first else { return (0, nil, 0) }
            return (try row.int("pages") as Int, try row.int("estimated_rows") as Int?, try row.int("file") as Int)
        }
    }

    /// The live pins stored in `pages` of the pins table, in no particular order: a bounded
    /// batch of the start-up load. Not a snapshot across batches: a pin written while the load
    /// goes on may be read twice or not at all, so the load reads the change log's place first
    /// and applies every change after it (each with the pin as it is then); a rewrite of the
    /// table meanwhile moves rows without a change, so the load checks its file at the end.
    public func livePins(pages: Range<Int>) async throws(StoreError) -> [IndexedPin] {
        guard !pages.isEmpty else { return [] }
        let first = "(\(pages.lowerBound),0)"
        let end = "(\(pages.upperBound),0)"
        return try await mappingErrors {
            let rows = try await pool.query("""
                SELECT \(unescaped: Self.pinColumns) FROM pins p JOIN users u ON u.id = p.author_id
                WHERE p.ctid >= \(first)::tid AND p.ctid < \(end)::tid AND \(unescaped: Self.livePin)
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
