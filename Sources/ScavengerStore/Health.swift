/// Cheap counts for the daemon's metrics.
extension Database {
    /// Items waiting for a moderator: open, or claimed with the claim run out (as `QUEUE open` counts them).
    public func openModerationItemCount() async throws(StoreError) -> Int {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT count(*) AS waiting FROM moderation_items
                WHERE status = 'open' OR (status = 'claimed' AND claim_expires <= now())
                """)
            return try rows.first?.int("waiting") ?? 0
        }
    }
}
