import ScavengerBoard
import ScavengerCore
import Testing

@Suite("Failed-login back-off")
struct LoginThrottleTests {
    let start = ContinuousClock.now

    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    /// Fails one login from `address` at `account` at time `t`; the refusal's wait if refused.
    @discardableResult
    func fail(_ throttle: LoginThrottle, _ address: String?, _ account: Int?, at t: Double) -> Int? {
        do {
            let attempt = try throttle.begin(address: address, account: account, now: at(t))
            throttle.finish(attempt, succeeded: false, now: at(t))
            return nil
        } catch {
            #expect(error.code == .rateLimited)
            return error.retryAfterSeconds
        }
    }

    @Test func addressBacksOffDoublingUpToTheMaximum() {
        let throttle = LoginThrottle(rules: LoginThrottleRules(addressFreeFailures: 3, accountFreeFailures: 100, maximumBackoffSeconds: 4))
        for _ in 0 ..< 3 { #expect(fail(throttle, "a", nil, at: 0) == nil) }
        #expect(fail(throttle, "a", nil, at: 0.5) == 1)  // locked 1 s after the third failure
        #expect(fail(throttle, "a", nil, at: 1.0) == nil)  // fourth failure: 2 s
        #expect(fail(throttle, "a", nil, at: 2.5) == 1)
        #expect(fail(throttle, "a", nil, at: 3.0) == nil)  // fifth: 4 s
        #expect(fail(throttle, "a", nil, at: 4.0) == 3)
        #expect(fail(throttle, "a", nil, at: 7.0) == nil)  // sixth: 8 s, capped at 4
        #expect(fail(throttle, "a", nil, at: 10.9) == 1)
        #expect(fail(throttle, "a", nil, at: 11.0) == nil)
        // Other addresses are not affected; the address check alone says the same.
        #expect(fail(throttle, "b", nil, at: 11.0) == nil)
        #expect(throws: BoardError.self) { try throttle.checkAddress("a", now: at(11.5)) }
        #expect(throws: Never.self) { try throttle.checkAddress("b", now: at(11.5)) }
    }

    @Test func guessesSentAtOnceCannotOutrunTheCount() throws {
        let throttle = LoginThrottle(rules: LoginThrottleRules(addressFreeFailures: 2, accountFreeFailures: 100))
        let first = try throttle.begin(address: "a", account: nil, now: at(0))
        let second = try throttle.begin(address: "a", account: nil, now: at(0))
        #expect(throws: BoardError.self) { try throttle.begin(address: "a", account: nil, now: at(0)) }
        throttle.finish(first, succeeded: true, now: at(0))
        throttle.finish(second, succeeded: nil, now: at(0))  // never checked: not counted
        #expect(fail(throttle, "a", nil, at: 0) == nil)
    }

    @Test func aLockedAccountStillLetsACleanAddressTry() throws {
        let throttle = LoginThrottle(rules: LoginThrottleRules(addressFreeFailures: 100, accountFreeFailures: 2))
        #expect(fail(throttle, "attacker", 7, at: 0) == nil)
        #expect(fail(throttle, "attacker", 7, at: 0) == nil)
        #expect(fail(throttle, "attacker", 7, at: 0.1) == 1)  // account 7 locked for failing addresses
        #expect(fail(throttle, "attacker", 8, at: 0.1) == nil)  // another account is not
        #expect(throttle.isClean("owner"))
        let owner = try throttle.begin(address: "owner", account: 7, now: at(0.2))
        #expect(owner.addressWasClean)
        throttle.finish(owner, succeeded: true, now: at(0.2))
        // The success cleared the account, not the attacker's address record.
        #expect(fail(throttle, "attacker", 7, at: 0.3) == nil)
        #expect(!throttle.isClean("attacker"))
        // A fresh address that fails while the account is locked becomes a failing one.
        #expect(fail(throttle, "attacker", 7, at: 0.4) == nil)
        #expect(fail(throttle, "attacker", 7, at: 0.5) != nil)
        #expect(fail(throttle, "fresh", 7, at: 0.5) == nil)
        #expect(fail(throttle, "fresh", 7, at: 0.6) != nil)
    }

    @Test func failuresAreForgotten() {
        let throttle = LoginThrottle(rules: LoginThrottleRules(addressFreeFailures: 1, accountFreeFailures: 1, maximumBackoffSeconds: 900, forgetAfterSeconds: 60))
        #expect(fail(throttle, "a", 1, at: 0) == nil)
        #expect(fail(throttle, "a", 1, at: 0.5) == 1)
        #expect(fail(throttle, "a", 1, at: 1) == nil)
        #expect(fail(throttle, "a", 1, at: 1.5) == 2)
        // An hour later the address starts afresh.
        #expect(fail(throttle, "a", 1, at: 3600) == nil)
        #expect(fail(throttle, "a", 1, at: 3600.5) == 1)
    }

    @Test func theTablesAreBounded() {
        let throttle = LoginThrottle(rules: LoginThrottleRules(addressFreeFailures: 5, accountFreeFailures: 5, maximumTracked: 100))
        for index in 0 ..< 1000 { fail(throttle, "address-\(index)", index, at: Double(index) / 1000) }
        #expect(throttle.tracked.addresses <= 100)
        #expect(throttle.tracked.accounts <= 100)
    }
}
