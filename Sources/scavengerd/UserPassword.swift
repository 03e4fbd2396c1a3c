import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Postgres
import ScavengerBoard
import ScavengerStore
import Sodium

/// `scavengerd user password NAME`: sets a user's password (REGISTER's rules) and ends their
/// sessions, as RESET does. The password is read from standard input: asked twice without echo
/// when it is a terminal, else its first line (a pipe, a file).
struct SetPassword: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "password",
        abstract: "Set a user's password (read from stdin: asked without echo on a terminal, else its first line); ends their sessions.")

    @OptionGroup var database: DatabaseOptions
    @Argument(help: "The user's name (case-insensitive).") var username: String

    func run() async throws {
        try await reportingFailure {
            let password = try Self.readPassword(for: username)
            let hasher = PasswordHasher(threads: 1)
            do {
                try await RegionCommand.withDatabase(database) { store in
                    do throws(BoardError) {
                        try await OperatorPassword.set(username: username, password: password, store: store, hasher: hasher)
                    } catch {
                        throw CLIError(error.message)
                    }
                }
            } catch {
                await hasher.shutdown()
                throw error
            }
            await hasher.shutdown()
            print("the password of \(username) is set; their sessions have ended")
        }
    }

    /// The password from standard input: from a terminal, typed twice with echo off (the
    /// prompts on stderr); else the first line, without its line end.
    static func readPassword(for username: String) throws -> String {
        guard isatty(STDIN_FILENO) == 1 else {
            guard let line = readLine(strippingNewline: true) else { throw CLIError("no password on standard input") }
            return line.hasSuffix("\r") ? String(line.dropLast()) : line
        }
        let first = try readHidden(prompt: "New password for \(username): ")
        let second = try readHidden(prompt: "Again: ")
        guard first == second else { throw CLIError("the two passwords differ; nothing was changed") }
        return first
    }

    /// One line read from the terminal with echo off; the terminal's settings are restored.
    static func readHidden(prompt: String) throws -> String {
        FileHandle.standardError.write(Data(prompt.utf8))
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { throw CLIError("cannot read the terminal's settings") }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        guard tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent) == 0 else { throw CLIError("cannot turn the terminal's echo off") }
        let line = readLine(strippingNewline: true)
        _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
        FileHandle.standardError.write(Data("\n".utf8))
        guard let line else { throw CLIError("no password typed") }
        return line
    }
}
