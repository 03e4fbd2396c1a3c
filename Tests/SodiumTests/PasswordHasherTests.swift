import Sodium
import Testing

/// Runs `body` with a started hasher and always shuts it down.
private func withHasher<R>(
    _ parameters: PasswordHashing = .minimum,
    threads: Int = 2,
    _ body: (PasswordHasher) async throws -> R
) async throws -> R {
    let hasher = PasswordHasher(parameters: parameters, threads: threads)
    do {
        let result = try await body(hasher)
        await hasher.shutdown()
        return result
    } catch {
        await hasher.shutdown()
        throw error
    }
}

@Suite("PasswordHasher")
struct PasswordHasherTests {
    @Test func hashThenVerify() async throws {
        try await withHasher { hasher in
            let hash = try await hasher.hash("correct horse battery staple")
            #expect(await hasher.verify("correct horse battery staple", against: hash))
        }
    }

    @Test func wrongPasswordIsRejected() async throws {
        try await withHasher { hasher in
            let hash = try await hasher.hash("hunter2")
            #expect(await hasher.verify("hunter3", against: hash) == false)
            #expect(await hasher.verify("Hunter2", against: hash) == false)
            #expect(await hasher.verify("", against: hash) == false)
            #expect(await hasher.verify("hunter2 ", against: hash) == false)
        }
    }

    @Test func hashesAreSalted() async throws {
        try await withHasher { hasher in
            let first = try await hasher.hash("same password")
            let second = try await hasher.hash("same password")
            #expect(first != second)
            #expect(await hasher.verify("same password", against: first))
            #expect(await hasher.verify("same password", against: second))
        }
    }

    @Test func hashFormat() async throws {
        try await withHasher { hasher in
            let password = "Sup3rS3cretPassw0rd"
            let hash = try await hasher.hash(password)
            #expect(hash.hasPrefix("$argon2id$"))
            #expect(hash.hasPrefix("$argon2id$v=19$m=8,t=1,p=1$"))  // .minimum: 8 KiB, 1 pass
            #expect(!hash.contains(password))
            #expect(!hash.contains("\0"))
        }
    }

    @Test(arguments: [
        "",
        "garbage",
        "$argon2id$",
        "$argon2id$v=19$m=8,t=1,p=1$",
        "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$",
        "$argon2id$v=19$m=-8,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$argon2id$v=19$m=8,t=0,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$2b$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW",
        "$argon2id$\0v=19",
        String(repeating: "$argon2id$v=19$", count: 40),
        "🔐🔐🔐",
    ])
    func malformedHashVerifiesFalse(_ hash: String) async throws {
        try await withHasher { hasher in
            #expect(await hasher.verify("password", against: hash) == false)
            #expect(await hasher.verify("", against: hash) == false)
            #expect(PasswordHasher.verifySync("password", against: hash) == false)
            #expect(hasher.needsRehash(hash))
        }
    }

    @Test func truncatedRealHashVerifiesFalse() async throws {
        let hash = try PasswordHasher.hashSync("password", parameters: .minimum)
        #expect(PasswordHasher.verifySync("password", against: hash))
        for length in 0..<hash.count {
            let truncated = String(hash.prefix(length))
            #expect(PasswordHasher.verifySync("password", against: truncated) == false, "prefix \(length)")
        }
        // Trailing junk and a NUL-smuggled suffix are not accepted either.
        #expect(PasswordHasher.verifySync("password", against: hash + "A") == false)
        #expect(PasswordHasher.verifySync("password", against: hash + "\0junk") == false)
    }

    @Test(arguments: [
        "pässwörd",
        "Ünïcödé ñ 日本語のパスワード",
        "密码🔐🦀👩‍👩‍👧‍👦",
        "a\0b",
        "\0",
        "\0\0\0",
        "",
        "tab\tnewline\nquote\"backslash\\",
        String(repeating: "long", count: 1000),
    ])
    func unusualPasswordsRoundTrip(_ password: String) async throws {
        try await withHasher { hasher in
            let hash = try await hasher.hash(password)
            #expect(await hasher.verify(password, against: hash))
            #expect(await hasher.verify(password + "x", against: hash) == false)
        }
    }

    @Test func embeddedNulIsSignificant() throws {
        let withNul = try PasswordHasher.hashSync("a\0b", parameters: .minimum)
        #expect(PasswordHasher.verifySync("a\0b", against: withNul))
        #expect(PasswordHasher.verifySync("a", against: withNul) == false)
        #expect(PasswordHasher.verifySync("a\0", against: withNul) == false)
        #expect(PasswordHasher.verifySync("ab", against: withNul) == false)

        let plain = try PasswordHasher.hashSync("a", parameters: .minimum)
        #expect(PasswordHasher.verifySync("a", against: plain))
        #expect(PasswordHasher.verifySync("a\0b", against: plain) == false)
        #expect(PasswordHasher.verifySync("a\0", against: plain) == false)
    }

    @Test func unicodeIsComparedByExactBytes() throws {
        // Precomposed vs decomposed "é": equal as Swift Strings, different UTF-8 bytes.
        let precomposed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let hash = try PasswordHasher.hashSync(precomposed, parameters: .minimum)
        #expect(PasswordHasher.verifySync(precomposed, against: hash))
        #expect(PasswordHasher.verifySync(decomposed, against: hash) == false)
    }

    @Test func interactivePresetWorks() async throws {
        // The only test paying for real parameters: one interactive hash (plus the dummy hash
        // the hasher precomputes in the background).
        try await withHasher(.interactive) { hasher in
            let hash = try await hasher.hash("real preset")
            let ops = PasswordHashing.interactive.opsLimit
            let kib = PasswordHashing.interactive.memLimit / 1024
            #expect(hash.hasPrefix("$argon2id$v=19$m=\(kib),t=\(ops),p=1$"))
            #expect(await hasher.verify("real preset", against: hash))
            #expect(await hasher.verify("wrong", against: hash) == false)
            #expect(hasher.needsRehash(hash) == false)

            let weak = try PasswordHasher.hashSync("real preset", parameters: .minimum)
            #expect(hasher.needsRehash(weak))
            // A weaker hash still verifies, so a login can upgrade it.
            #expect(await hasher.verify("real preset", against: weak))
        }
    }

    @Test func needsRehashComparesParameters() async throws {
        let stronger = try PasswordHashing(opsLimit: 2, memLimit: PasswordHashing.minimum.memLimit * 2)
        let other = try PasswordHasher.hashSync("pw", parameters: stronger)
        let own = try PasswordHasher.hashSync("pw", parameters: .minimum)
        try await withHasher(.minimum) { hasher in
            #expect(hasher.needsRehash(own) == false)
            #expect(hasher.needsRehash(other))
            #expect(hasher.needsRehash("garbage"))
        }
        #expect(PasswordHasher.needsRehash(other, parameters: stronger) == false)
        #expect(PasswordHasher.needsRehash(own, parameters: stronger))
        // argon2i hashes are not argon2id, whatever their parameters.
        let argon2i = "$argon2i$v=19$m=8,t=1,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
        #expect(PasswordHasher.needsRehash(argon2i, parameters: .minimum))
    }

    @Test func concurrentHashingFromEightTasks() async throws {
        try await withHasher(.minimum, threads: 2) { hasher in
            let results = try await withThrowingTaskGroup(of: (Int, String, Bool).self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let hash = try await hasher.hash("password-\(index)")
                        let ok = await hasher.verify("password-\(index)", against: hash)
                        return (index, hash, ok)
                    }
                }
                var collected: [(Int, String, Bool)] = []
                for try await result in group { collected.append(result) }
                return collected
            }
            #expect(results.count == 8)
            #expect(results.allSatisfy { $0.2 })
            #expect(Set(results.map(\.1)).count == 8)
            for (index, hash, _) in results {
                let other = (index + 1) % 8
                #expect(await hasher.verify("password-\(other)", against: hash) == false)
            }
        }
    }

    @Test func verifyDummyCompletes() async throws {
        try await withHasher { hasher in
            await hasher.verifyDummy("whatever")
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<4 {
                    group.addTask { await hasher.verifyDummy("user-\(index)") }
                }
            }
            // The hasher is still fully usable afterwards.
            let hash = try await hasher.hash("after dummy")
            #expect(await hasher.verify("after dummy", against: hash))
        }
    }

    @Test func cancelledTaskGetsCancelledError() async throws {
        try await withHasher { hasher in
            let task = Task {
                while !Task.isCancelled { await Task.yield() }
                return try await hasher.hash("never hashed")
            }
            task.cancel()
            await #expect(throws: PasswordHashingError.cancelled) {
                try await task.value
            }
            // The hasher is unaffected.
            let hash = try await hasher.hash("pw")
            #expect(await hasher.verify("pw", against: hash))
        }
    }

    @Test func shutDownHasherFailsCleanly() async throws {
        let hasher = PasswordHasher(parameters: .minimum, threads: 1)
        let hash = try await hasher.hash("pw")
        await hasher.shutdown()
        await #expect(throws: PasswordHashingError.shutDown) {
            try await hasher.hash("pw")
        }
        #expect(await hasher.verify("pw", against: hash) == false)
        await hasher.verifyDummy("pw")
        await hasher.shutdown()  // idempotent
        // Still valid outside the hasher.
        #expect(PasswordHasher.verifySync("pw", against: hash))
    }
}

@Suite("PasswordHashing")
struct PasswordHashingTests {
    @Test func presetsMatchLibsodium() {
        // libsodium 1.0.18 constants (crypto_pwhash_*_INTERACTIVE / _MODERATE / _MIN).
        #expect(PasswordHashing.interactive.opsLimit == 2)
        #expect(PasswordHashing.interactive.memLimit == 67_108_864)
        #expect(PasswordHashing.moderate.opsLimit == 3)
        #expect(PasswordHashing.moderate.memLimit == 268_435_456)
        #expect(PasswordHashing.minimum.opsLimit == 1)
        #expect(PasswordHashing.minimum.memLimit == 8192)
        #expect(PasswordHashing.opsLimitRange.contains(PasswordHashing.interactive.opsLimit))
        #expect(PasswordHashing.memLimitRange.contains(PasswordHashing.moderate.memLimit))
    }

    struct Limits: Sendable, CustomTestStringConvertible {
        let ops: Int
        let mem: Int
        let valid: Bool
        var testDescription: String { "ops=\(ops) mem=\(mem) valid=\(valid)" }
    }

    @Test(arguments: [
        Limits(ops: 1, mem: 8192, valid: true),
        Limits(ops: 2, mem: 67_108_864, valid: true),
        Limits(ops: 0, mem: 8192, valid: false),
        Limits(ops: -1, mem: 8192, valid: false),
        Limits(ops: 1, mem: 8191, valid: false),
        Limits(ops: 1, mem: 0, valid: false),
        Limits(ops: 1, mem: -1, valid: false),
        Limits(ops: PasswordHashing.opsLimitRange.upperBound + 1, mem: 8192, valid: false),
        Limits(ops: 1, mem: PasswordHashing.memLimitRange.upperBound + 1, valid: false),
        Limits(ops: Int.max, mem: Int.max, valid: false),
    ])
    func limitsAreValidated(_ limits: Limits) {
        if limits.valid {
            #expect(throws: Never.self) { try PasswordHashing(opsLimit: limits.ops, memLimit: limits.mem) }
        } else {
            #expect(throws: PasswordHashingError.invalidParameters) {
                try PasswordHashing(opsLimit: limits.ops, memLimit: limits.mem)
            }
        }
    }
}
