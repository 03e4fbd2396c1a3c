/// Why the game's rules refuse a request: the refusal's kind (the contract's error code) and a
/// message for people. The rules of ``GameRules`` throw it; the board shows it as its own error.
public struct GameRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which of the contract's codes the refusal is.
    public enum Kind: Sendable, Equatable {
        /// The hunt's state or its players' do not allow it (`CONFLICT`).
        case conflict
        /// The caller may not do this (`FORBIDDEN`).
        case forbidden
        /// The request does not fit the hunt (`BAD_ARGUMENT`).
        case badArgument
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
