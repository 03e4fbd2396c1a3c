import Postgres
import ScavengerCore

/// What an address bucket is spent on (one bucket per address and action).
public enum AddressAction: String, Sendable {
    /// `REGISTER` and `FORGOT`: the account requests one address may make, together.
    case accounts
}

extension Database {
    /// Takes a token from `address`'s bucket for `action` at `rate` (the bucket lives in the
    /// database, so every daemon on it draws from the same one): 0 when taken, else the seconds
    /// until one will be there (nothing taken).
    public func takeAddressToken(_ address: String, _ action: AddressAction, rate: RateLimit) async throws(StoreError) -> Double {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT take_address_token(\(address)::text, \(action.rawValue)::text, \(Double(rate.count))::float8, \(rate.perSecond)::float8)
                    AS wait
                """, idempotent: false)
            return try rows[0].double("wait")
        }
    }

    /// Deletes address buckets untouched for `untouchedSeconds` (a new bucket starts full).
    func sweepAddressBuckets(untouchedSeconds: Int) async throws(StoreError) {
        try await mappingErrors {
            try await pool.query("""
                DELETE FROM address_buckets WHERE updated_at < now() - make_interval(secs => \(untouchedSeconds))
                """, idempotent: true)
        }
    }
}
