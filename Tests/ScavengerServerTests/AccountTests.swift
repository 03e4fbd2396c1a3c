import Foundation
import Postgres
import ScavengerCore
import Testing

@Suite("Accounts over TCP with PostgreSQL")
struct AccountTests {
    @Test("REGISTER logs in; WHOAMI and HELLO show the user")
    func register() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                #expect(try await client.call("WHOAMI") == #"OK {"user":null}"#)
                let reply = try await client.ok("REGISTER alice alice@example.org password1")
                #expect(try reply["user"]["name"].string == "alice")
                #expect(try reply["user"]["role"].string == "user")
                let token = try reply["token"].string
                #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
                #expect(try await client.call("WHOAMI") == #"OK {"user":{"name":"alice","role":"user","email_verified":false}}"#)
                #expect(try await client.call("HELLO").contains(#""user":{"name":"alice","role":"user"}"#))
            }
        }
    }

    @Test("REGISTER checks each rule and says which failed", arguments: [
        ("REGISTER ab a@example.org password1", "username must be 3 to 32"),
        ("REGISTER \(String(repeating: "a", count: 33)) a@example.org password1", "username must be 3 to 32"),
        ("REGISTER bad!name a@example.org password1", "username may contain only"),
        ("REGISTER good no-at-sign password1", "email must look like"),
        ("REGISTER good a@nodot password1", "email must look like"),
        ("REGISTER good a@example.org short1", "at least 8 characters"),
        ("REGISTER good a@example.org onlyletters", "at least one digit"),
        ("REGISTER good a@example.org 1234567890", "at least one letter"),
        ("REGISTER good a@example.org", "wrong number of arguments"),
    ])
    func registerRules(line: String, message: String) async throws {
        try await withDatabaseServer { address, environment in
            let reply = try await converseReturning(address) { try await $0.call(line) }
            #expect(reply.hasPrefix("ERR BAD_ARGUMENT "))
            #expect(reply.contains(message), "\(reply)")
            let users = try await environment.pool.query("SELECT count(*) FROM users")
            #expect(try users[0].int(0) as Int == 0)
        }
    }

    @Test("names and emails are unique case-insensitively")
    func uniqueness() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("alice")
                #expect(try await client.call("REGISTER ALICE other@example.org password1")
                    == "ERR CONFLICT that username is taken")
                #expect(try await client.call("REGISTER alice2 ALICE@EXAMPLE.ORG password1")
                    == "ERR CONFLICT that email is already registered")
            }
        }
    }

    @Test("concurrent REGISTERs of one name: exactly one OK, the rest CONFLICT")
    func registerRace() async throws {
        try await withDatabaseServer { address, environment in
            let replies = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0 ..< 8 {
                    group.addTask {
                        try await converseReturning(address) { try await $0.call("REGISTER racer racer\(index)@example.org password1") }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(replies.filter { $0.hasPrefix("OK ") }.count == 1)
            #expect(replies.filter { $0 == "ERR CONFLICT that username is taken" }.count == 7)
            let users = try await environment.pool.query("SELECT count(*) FROM users")
            #expect(try users[0].int(0) as Int == 1)
        }
    }

    @Test("LOGIN by name or email, any case; wrong password and unknown user look the same")
    func login() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("alice")
            }
            try await converse(address) { client in
                #expect(try await client.ok("LOGIN alice password1")["user"]["name"].string == "alice")
                #expect(try await client.ok("LOGIN ALICE@example.ORG password1")["user"]["name"].string == "alice")
                let wrongPassword = try await client.call("LOGIN alice password2")
                let unknownUser = try await client.call("LOGIN nobody password1")
                #expect(wrongPassword == "ERR UNAUTHORIZED wrong name or password")
                #expect(unknownUser == wrongPassword)
            }
        }
    }

    @Test("AUTH resumes a session; LOGOUT revokes the token everywhere")
    func authAndLogout() async throws {
        try await withDatabaseServer { address, _ in
            try await converse(address) { (first: Conversation) async throws in
                let token = try await first.register("alice")
                try await converse(address) { (second: Conversation) async throws in
                    #expect(try await second.call("AUTH \(token)") == #"OK {"user":{"name":"alice","role":"user"}}"#)
                    #expect(try await second.call("POST 1 2 hello").hasPrefix("OK "))
                    #expect(try await first.call("LOGOUT") == "OK true")
                    #expect(try await first.call("WHOAMI") == #"OK {"user":null}"#)
                    #expect(try await second.call("POST 1 2 again").hasPrefix("ERR UNAUTHORIZED "))
                    #expect(try await second.call("WHOAMI") == #"OK {"user":null}"#)
                }
                try await converse(address) { (third: Conversation) async throws in
                    #expect(try await third.call("AUTH \(token)").hasPrefix("ERR UNAUTHORIZED "))
                    #expect(try await third.call("AUTH deadbeef").hasPrefix("ERR UNAUTHORIZED "))
                    #expect(try await third.call("LOGOUT").hasPrefix("ERR UNAUTHORIZED "))
                }
            }
        }
    }

    @Test("a role set by the operator takes effect on the next command")
    func roleChange() async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("mod")
                #expect(try await environment.database.setRole(username: "MOD", role: .moderator))
                #expect(try await client.call("WHOAMI") == #"OK {"user":{"name":"mod","role":"moderator","email_verified":false}}"#)
                #expect(try await environment.database.setRole(username: "nobody", role: .admin) == false)
            }
        }
    }

    @Test("no password or token is stored in clear")
    func nothingInClear() async throws {
        try await withDatabaseServer { address, environment in
            let password = "Sup3rSecretPassw0rd"
            let tokens = try await converseReturning(address) { client in
                let registered = try await client.ok("REGISTER alice alice@example.org \(password)")
                let loggedIn = try await client.ok("LOGIN alice \(password)")
                return [try registered["token"].string, try loggedIn["token"].string]
            }
            let dump = try await environment.pool.query("""
                SELECT string_agg(t::text, ' ') FROM (
                    SELECT row_to_json(u)::text AS t FROM users u
                    UNION ALL SELECT row_to_json(s)::text FROM sessions s
                    UNION ALL SELECT encode(token_hash, 'hex') FROM sessions
                    UNION ALL SELECT encode(token_hash, 'escape') FROM sessions
                ) rows
                """)
            let text: String = try dump[0].string(0)
            #expect(!text.contains(password))
            for token in tokens { #expect(!text.lowercased().contains(token)) }
            let hashes = try await environment.pool.query("SELECT password_hash FROM users")
            #expect((try hashes[0].string(0) as String).hasPrefix("$argon2id$"))
        }
    }
}
