import Postgres
import ScavengerStore
import Testing

@Suite("Store errors")
struct StoreErrorTests {
    @Test("a command the database did not finish in time is UNAVAILABLE, like an unreachable one", arguments: [
        PostgresError.Code.timeout, .queryCanceled, .connectionFailure, .poolClosed,
    ])
    func timeoutsAreUnavailable(code: PostgresError.Code) {
        guard case .unavailable = StoreError(PostgresError(code: code, message: "x")) else {
            Issue.record("\(code) is not unavailable")
            return
        }
    }
}
