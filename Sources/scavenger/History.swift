import Foundation

/// The prompt's history file, which never keeps a secret: a line that carries a password, a
/// session token or a code (`login`, `register`, `auth`, `join` by code, `checkin … CODE`,
/// `addstop … CODE`) is neither written nor recalled. A file written by an older version is
/// cleaned of such lines when the prompt opens.
struct History {
    let path: String

    /// Commands whose arguments are a secret in themselves.
    static let secretCommands: Set<String> = ["LOGIN", "REGISTER", "AUTH", "JOIN"]
    /// Options whose value is a secret, in any command.
    static let secretOptions: Set<String> = ["CODE", "PASSWORD", "TOKEN"]

    /// Whether `line` carries a secret.
    static func isSecret(_ line: String) -> Bool {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.uppercased() }
        guard let command = words.first else { return false }
        return secretCommands.contains(command) || words.dropFirst().contains { secretOptions.contains($0) }
    }

    /// Rewrites the file without its secret lines (when it has any), mode 0600.
    func clean() {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let kept = lines.filter { !Self.isSecret(String($0)) }
        if kept.count != lines.count {
            let rewritten = FileManager.default.createFile(
                atPath: path, contents: Data(kept.joined(separator: "\n").utf8), attributes: [.posixPermissions: 0o600])
            // A history that cannot be cleaned is not kept with its secrets: it goes.
            if !rewritten { try? FileManager.default.removeItem(atPath: path) }
        }
        try? FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }
}
