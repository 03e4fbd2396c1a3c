/// Why a ``PinIndex`` call was refused. Nothing changed.
public enum PinIndexError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a pin id (`p` and 24 of `a-z 2-7`).
    case invalidID(String)
    /// A latitude outside [−90, 90], a longitude outside [−180, 180], or a non-finite value.
    case invalidCoordinates
    /// A query value out of range; the text says which.
    case invalidQuery(String)
    /// The cursor was made by a different query (another centre, radius, region or kind).
    case cursorMismatch

    /// A short message, fit for a client.
    public var description: String {
        switch self {
        case .invalidID: "not a pin id"
        case .invalidCoordinates: "latitude must be in [-90, 90] and longitude in [-180, 180]"
        case let .invalidQuery(message): message
        case .cursorMismatch: "cursor belongs to a different query"
        }
    }
}
