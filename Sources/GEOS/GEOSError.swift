/// A failure reported by GEOS or by this wrapper's input checks.
public struct GEOSError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// The text (WKT, GeoJSON) could not be read.
        case parse
        /// The geometry is structurally or topologically invalid.
        case invalidGeometry(reason: String)
        /// The geometry type is not accepted here (e.g. a Point where a region is needed).
        case unsupportedGeometry
        /// A GEOS operation failed.
        case operationFailed
    }

    /// The category of the failure.
    public let kind: Kind
    /// The operation that failed, e.g. "read WKT".
    public let operation: String
    /// A one-line human-readable message.
    public let message: String

    /// Creates an error; the message is reduced to one line of bounded length.
    public init(_ kind: Kind, operation: String, message: String) {
        self.kind = kind
        self.operation = operation
        self.message = GEOSError.oneLine(message)
    }

    /// "operation: message".
    public var description: String { "\(operation): \(message)" }

    /// Collapses control characters and whitespace runs to single spaces and caps the length.
    static func oneLine(_ text: String, limit: Int = 240) -> String {
        var out = ""
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace || scalar.properties.generalCategory == .control {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace { out.unicodeScalars.append(" ") }
            pendingSpace = false
            out.unicodeScalars.append(scalar)
        }
        if out.count > limit { out = String(out.prefix(limit)) + "…" }
        return out.isEmpty ? "unknown error" : out
    }
}
