@testable import ScavengerBoard
import ScavengerStore
import ScavengerTestSupport
import Testing

/// What a client hears for each infrastructure error of the store (``Board/boardError(for:useCase:)``).
@Suite("The store's errors as the board answers them")
struct StoreErrorMappingTests {
    @Test("each store error's code", arguments: [
        (StoreError.unavailable("gone"), "unavailable"),
        (.commitUnconfirmed("cancelled"), "unavailable"),
        // A keyed write whose key another run of the request took, when that run's result could
        // not be read: the client retries and gets it (never a CONFLICT that ends its retries).
        (.conflict(constraint: requestKeyConstraint), "unavailable"),
        (.conflict(constraint: "hunt_players_name"), "conflict"),
        (.sessionRefused, "unauthorized"),
        (.rateLimited(retryAfterSeconds: 3), "rateLimited"),
        (.invalidInput("NUL"), "badArgument"),
        (.unexpected("a bug"), "internalError"),
    ] as [(StoreError, String)])
    func code(error: StoreError, code: String) {
        #expect("\(OfflineBoard.shared.boardError(for: error, useCase: "test").code)" == code)
    }
}
