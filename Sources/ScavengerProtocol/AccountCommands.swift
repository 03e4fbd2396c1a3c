import ScavengerBoard
import ScavengerCore

/// REGISTER, LOGIN, AUTH, LOGOUT, WHOAMI; FORGOT, RESET, VERIFY.
enum AccountCommands {
    struct Registration: Sendable {
        var name: String
        var email: String
        var password: String
    }

    struct Reset: Sendable {
        var name: String
        var code: String
        var password: String
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            "REGISTER", arity: 3 ... 3, syntax: "REGISTER username email password",
            summary: "Creates an account and logs this connection in; answers the user and a session token.",
            parse: { arguments in
                let name = try arguments.required("username").text
                let email = try arguments.required("email").text
                let password = try arguments.required("password").text
                try Arguments.checked { () throws(BoardError) in
                    try RequestChecks().registration(name: name, email: email, password: password)
                }
                return Registration(name: name, email: email, password: password)
            },
            execute: { request, context in
                let signIn = try await context.board.register(
                    name: request.name, email: request.email, password: request.password, on: context.session)
                return CommandOutcome(.ok(["user": .user(signIn.user), "token": .string(signIn.token)]))
            }),
        CommandSpec(
            "LOGIN", arity: 2 ... 2, syntax: "LOGIN name-or-email password",
            summary: "Logs this connection in; answers the user and a new session token.",
            parse: { arguments in
                (try arguments.required("name or email").text, try arguments.required("password").text)
            },
            execute: { request, context in
                let signIn = try await context.board.logIn(request.0, password: request.1, on: context.session)
                return CommandOutcome(.ok(["user": .user(signIn.user), "token": .string(signIn.token)]))
            }),
        CommandSpec(
            "AUTH", arity: 1 ... 1, syntax: "AUTH token",
            summary: "Resumes a session on this connection with a token from REGISTER or LOGIN.",
            parse: { arguments in try arguments.required("token").text },
            execute: { token, context in
                CommandOutcome(.ok(["user": .user(try await context.board.resume(token: token, on: context.session))]))
            }),
        CommandSpec(
            "LOGOUT", arity: 0 ... 0, syntax: "LOGOUT",
            summary: "Ends the session: its token stops working on every connection.",
            parse: { _ in () },
            execute: { _, context in
                try await context.board.logOut(context.session)
                return CommandOutcome(.ok(true))
            }),
        CommandSpec(
            "WHOAMI", arity: 0 ... 0, syntax: "WHOAMI", summary: "The user logged in on this connection, or null.",
            parse: { _ in () },
            execute: { _, context in
                guard let user = try await context.board.currentUser(of: context.session) else {
                    return CommandOutcome(.ok(["user": .null]))
                }
                let verified = try await context.board.emailVerified(of: context.session)
                return CommandOutcome(.ok(["user": .ownUser(user, emailVerified: verified)]))
            }),
        CommandSpec(
            "FORGOT", arity: 1 ... 1, syntax: "FORGOT username-or-email",
            summary: "Mails a password reset code to the account's email, if there is such an account; answers true either way.",
            parse: { arguments in try arguments.required("username or email").text },
            execute: { login, context in
                try await context.board.forgot(login, on: context.session)
                return CommandOutcome(.ok(true))
            }),
        CommandSpec(
            "RESET", arity: 3 ... 3, syntax: "RESET username code new-password",
            summary: "Sets a new password with a code from FORGOT's mail, ends the user's other sessions and logs this connection in.",
            parse: { arguments in
                let name = try arguments.required("username").text
                let code = try arguments.required("code").text
                let password = try arguments.required("new password").text
                try Arguments.checked { () throws(BoardError) in try RequestChecks().newPassword(password) }
                return Reset(name: name, code: code, password: password)
            },
            execute: { request, context in
                let signIn = try await context.board.reset(
                    username: request.name, code: request.code, newPassword: request.password, on: context.session)
                return CommandOutcome(.ok(["token": .string(signIn.token), "user": .ownUser(signIn.user, emailVerified: signIn.emailVerified)]))
            }),
        CommandSpec(
            "VERIFY", arity: 0 ... 1, syntax: "VERIFY [code]",
            summary: "Without a code, mails a verification code to your email; with the code, marks the email verified.",
            parse: { arguments in arguments.next()?.text },
            execute: { code, context in
                guard let code else {
                    try await context.board.requestVerification(on: context.session)
                    return CommandOutcome(.ok(true))
                }
                let user = try await context.board.verifyEmail(code: code, on: context.session)
                return CommandOutcome(.ok(["user": .ownUser(user, emailVerified: true)]))
            }),
    ]
}
