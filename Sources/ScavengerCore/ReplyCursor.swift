/// Where a REPLIES page starts: after this reply, in the chat under this pin.
public struct ReplyCursor: Sendable, Equatable {
    public var created: Timestamp
    public var id: String
    /// ``pinTag(_:)`` of the pin whose chat it pages through: a cursor is good for that pin only.
    public var pinTag: UInt64

    /// The cursor after reply `id`, made at `created`, under pin `pinID`.
    public init(pinID: String, created: Timestamp, id: String) {
        self.init(created: created, id: id, pinTag: Self.pinTag(pinID))
    }

    /// A cursor from its parts.
    public init(created: Timestamp, id: String, pinTag: UInt64) {
        self.created = created
        self.id = id
        self.pinTag = pinTag
    }

    /// A short fingerprint of a pin id (FNV-1a, 64 bits).
    public static func pinTag(_ pinID: String) -> UInt64 {
        FNV1a.hash(pinID.utf8)
    }

    /// Whether this cursor was made for the chat under `pinID`.
    public func belongs(toPin pinID: String) -> Bool {
        pinTag == Self.pinTag(pinID)
    }

    /// The opaque text clients pass back: `<pin tag, 16 hex digits>_<microseconds>_<reply id>`.
    public var encoded: String {
        CursorCodec.hex(pinTag) + "_\(created.microseconds)_\(id)"
    }

    /// Parses what ``encoded`` produced; nil for anything else, a time no reply can have
    /// included (``Timestamp/storableMicroseconds``). Cursors of the older form
    /// (`<microseconds>_<reply id>`, not bound to a pin) are refused.
    public init?(encoded: String) {
        guard let parts = CursorCodec.fields(encoded, separator: "_", count: 3), let tag = CursorCodec.hex(parts[0]),
              let micros = CursorCodec.decimal(parts[1]), Timestamp(microseconds: micros).isStorable,
              Identifier.isReply(String(parts[2]))
        else { return nil }
        self.init(created: Timestamp(microseconds: micros), id: String(parts[2]), pinTag: tag)
    }
}
