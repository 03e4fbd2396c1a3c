import ScavengerCore
import ScavengerStore
import Sodium

/// REGISTER, LOGIN, AUTH, LOGOUT, WHOAMI.
enum AccountCommands {
    struct Registration: Sendable {
        var name: String
        var email: String
        var password: String
    }

    static func validated(_ check: () throws(ValidationError) -> Void) throws(CommandError) {
        do {
            try check()
        } catch {
            throw .badArgument(error.message)
        }
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            "REGISTER", arity: 3 ... 3, syntax: "REGISTER username email password",
            summary: "Creates an account and logs this connection in; answers the user and a session token.",
            parse: { arguments in
                let name = try arguments.required("username").text
                let email = try arguments.required("email").text
                let password = try arguments.required("password").text
                try validated { () throws(ValidationError) in
                    try Validation.username(name)
                    try Validation.email(email)
                    try Validation.password(password)
                }
                return Registration(name: name, email: email, password: password)
            },
            execute: { request, context in
                let database = try context.services.requireDatabase()
                let passwordHash = try await context.services.requireHasher().hash(request.password)
                let token = SecureRandom.token()
                let tokenHash = Digest.sha256(token)
                let account: Account
                do {
                    account = try await database.register(
                        name: request.name, email: request.email, passwordHash: passwordHash, tokenHash: tokenHash,
                        sessionTTLSeconds: context.services.sessionTTLSeconds)
                } catch let error as StoreError {
                    switch RegistrationConflict(error) {
                    case .username: throw CommandError(.conflict, "that username is taken")
                    case .email: throw CommandError(.conflict, "that email is already registered")
                    case nil: throw error
                    }
                }
                context.session.logIn(user: account.user, userID: account.id, tokenHash: tokenHash)
                return CommandOutcome(.ok(["user": .user(account.user), "token": .string(token)]))
            }),
        CommandSpec(
            "LOGIN", arity: 2 ... 2, syntax: "LOGIN name-or-email password",
            summary: "Logs this connection in; answers the user and a new session token.",
            parse: { arguments in
                (try arguments.required("name or email").text, try arguments.required("password").text)
            },
            execute: { request, context in
                let (login, password) = request
                let database = try context.services.requireDatabase()
                let hasher = try context.services.requireHasher()
                let wrong = CommandError(.unauthorized, "wrong name or password")
                guard password.utf8.count <= Validation.maximumPasswordBytes,
                      let credentials = try await database.credentials(login: login)
                else {
                    // Spend the same time as a real check, so unknown names cannot be told apart.
                    await hasher.verifyDummy(password)
                    throw wrong
                }
                guard await hasher.verify(password, against: credentials.passwordHash) else { throw wrong }
                let token = try await context.startSession(credentials.account, database: database)
                return CommandOutcome(.ok(["user": .user(credentials.account.user), "token": .string(token)]))
            }),
        CommandSpec(
            "AUTH", arity: 1 ... 1, syntax: "AUTH token",
            summary: "Resumes a session on this connection with a token from REGISTER or LOGIN.",
            parse: { arguments in try arguments.required("token").text },
            execute: { token, context in
                let database = try context.services.requireDatabase()
                let tokenHash = Digest.sha256(token)
                guard let account = try await database.account(sessionTokenHash: tokenHash) else {
                    throw CommandError(.unauthorized, "unknown, expired or revoked token")
                }
                context.session.logIn(user: account.user, userID: account.id, tokenHash: tokenHash)
                return CommandOutcome(.ok(["user": .user(account.user)]))
            }),
        CommandSpec(
            "LOGOUT", arity: 0 ... 0, syntax: "LOGOUT",
            summary: "Ends the session: its token stops working on every connection.",
            parse: { _ in () },
            execute: { _, context in
                guard let tokenHash = context.session.tokenHash else {
                    throw CommandError(.unauthorized, "not logged in")
                }
                try await context.services.requireDatabase().deleteSession(tokenHash: tokenHash)
                context.session.logOut()
                return CommandOutcome(.ok(true))
            }),
        CommandSpec(
            "WHOAMI", arity: 0 ... 0, syntax: "WHOAMI", summary: "The user logged in on this connection, or null.",
            parse: { _ in () },
            execute: { _, context in
                guard context.session.tokenHash != nil else { return CommandOutcome(.ok(["user": .null])) }
                let account = try? await context.requireAccount()
                return CommandOutcome(.ok(["user": .user(account?.user)]))
            }),
    ]
}
