import ScavengerCore
import ScavengerStore
import Sodium

/// Registers "alice" straight in the store, as another process would.
public func registerAlice(in store: Database) async throws -> Account {
    try await store.register(
        name: "alice", email: "alice@example.org", passwordHash: "x", tokenHash: Digest.sha256("t"), sessionTTLSeconds: 60)
}

/// A text pin by alice (`authorID`), living 60 s, in the cell of its place.
public func textPin(_ text: String, by authorID: Int, lat: Double = 0, lon: Double = 0) -> NewPin {
    NewPin(
        authorID: authorID, authorName: "alice", lat: lat, lon: lon, text: text, ttlSeconds: 60, photo: nil,
        cell: Int64(Grid.cell(lat: lat, lon: lon, level: 0).rawValue), region: nil)
}
