import Postgres
import ScavengerCore

/// Whose photo: a pin's or a check-in's (the id says which).
public enum PhotoOwner: Sendable, Hashable {
    case pin(String)
    case checkIn(String)

    /// The pin's or check-in's id.
    public var id: String {
        switch self {
        case .pin(let id), .checkIn(let id): id
        }
    }
}

/// The encodings the sizes of a photo are kept in.
public enum SizeEncoding: String, Sendable, CaseIterable {
    case jpeg
    case webp

    /// The MIME type.
    public var mime: String { "image/\(rawValue)" }
}

/// A photo's bytes as one request asks for them: a size when it has been made, else the original.
public struct StoredPhotoFile: Sendable {
    public var mime: String
    public var data: [UInt8]
    /// Whether these are the size asked for (false: the original, in its place until made).
    public var isAsked: Bool

    public init(mime: String, data: [UInt8], isAsked: Bool) {
        self.mime = mime
        self.data = data
        self.isAsked = isAsked
    }
}

/// The sizes made from one photo, each in both encodings; with its dimensions as shown.
public struct MadePhotoSizes: Sendable {
    public var width: Int
    public var height: Int
    /// By size and encoding.
    public var files: [PhotoSize: [SizeEncoding: [UInt8]]]

    public init(width: Int, height: Int, files: [PhotoSize: [SizeEncoding: [UInt8]]]) {
        self.width = width
        self.height = height
        self.files = files
    }
}

extension Database {
    /// The column of a size in an encoding (fixed names: never from a request).
    static func sizeColumn(_ size: PhotoSize, _ encoding: SizeEncoding) -> String {
        "\(size.rawValue)_\(encoding.rawValue)"
    }

    /// Whether a photo pin may be seen now: live and not hidden. One primary-key read, so the
    /// answer is the database's, the same on every daemon, the moment a pin is hidden or removed.
    public func isVisiblePhotoPin(id: String) async throws(StoreError) -> Bool {
        try await mappingErrors {
            let rows = try await pool.query("""
                SELECT 1 FROM pins p WHERE p.id = \(id) AND p.kind = 'photo' AND \(unescaped: Self.visiblePin)
                """)
            return !rows.isEmpty
        }
    }

    /// A visible photo pin's original (`size` nil) or size; the original in the size's place
    /// until it is made. Nil when there is no such visible pin.
    public func pinPhotoFile(id: String, size: PhotoSize?, encoding: SizeEncoding) async throws(StoreError) -> StoredPhotoFile? {
        try await photoFile(
            from: "pins p JOIN photos ph ON ph.pin_id = p.id", mime: "p.photo_mime",
            where: "p.id = $1 AND \(Self.visiblePin)", id: id, size: size, encoding: encoding)
    }

    /// A check-in's photo, original or size, as ``pinPhotoFile(id:size:encoding:)``; whether the
    /// viewer may see it is the board's to decide first.
    public func checkInPhotoFile(id: String, size: PhotoSize?, encoding: SizeEncoding) async throws(StoreError) -> StoredPhotoFile? {
        try await photoFile(
            from: "checkins c JOIN checkin_photos ph ON ph.checkin_id = c.id", mime: "c.photo_mime",
            where: "c.id = $1", id: id, size: size, encoding: encoding)
    }

    private func photoFile(
        from: String, mime: String, where condition: String, id: String, size: PhotoSize?, encoding: SizeEncoding
    ) async throws(StoreError) -> StoredPhotoFile? {
        let column = size.map { Self.sizeColumn($0, encoding) }
        let data = column.map { "CASE WHEN ph.sizes = 'made' AND ph.\($0) IS NOT NULL THEN ph.\($0) ELSE ph.data END" } ?? "ph.data"
        let made = column.map { "(ph.sizes = 'made' AND ph.\($0) IS NOT NULL)" } ?? "true"
        return try await mappingErrors {
            let rows = try await pool.query(SQL("""
                SELECT \(mime) AS mime, \(made) AS made, \(data) AS data FROM \(from) WHERE \(condition)
                """, binds: [id.postgresValue]), binaryResults: true)
            guard let row = rows.first, let mimeBytes = try row.bytes("mime"), let bytes = try row.bytes("data"),
                  let madeBytes = try row.bytes("made")
            else { return nil }
            let isAsked = madeBytes.first == 1
            let original = String(decoding: mimeBytes, as: UTF8.self)
            return StoredPhotoFile(mime: size != nil && isAsked ? encoding.mime : original, data: bytes, isAsked: isAsked)
        }
    }

    /// Photos whose sizes are still to be made, oldest pins' first: at most `limit`.
    public func photosWithoutSizes(limit: Int) async throws(StoreError) -> [PhotoOwner] {
        try await mappingErrors {
            let pins = try await pool.query("SELECT pin_id FROM photos WHERE sizes = 'pending' LIMIT \(limit)")
            let checkIns = try await pool.query("SELECT checkin_id FROM checkin_photos WHERE sizes = 'pending' LIMIT \(limit)")
            var owners: [PhotoOwner] = []
            for row in pins { owners.append(.pin(try row.string("pin_id"))) }
            for row in checkIns { owners.append(.checkIn(try row.string("checkin_id"))) }
            return Array(owners.prefix(limit))
        }
    }

    /// The original bytes of a photo whose sizes are still to be made; nil when it is gone or made.
    public func originalWithoutSizes(_ owner: PhotoOwner) async throws(StoreError) -> [UInt8]? {
        try await mappingErrors {
            let rows: PostgresRows
            switch owner {
            case .pin(let id):
                rows = try await pool.query("SELECT data FROM photos WHERE pin_id = \(id) AND sizes = 'pending'", binaryResults: true)
            case .checkIn(let id):
                rows = try await pool.query(
                    "SELECT data FROM checkin_photos WHERE checkin_id = \(id) AND sizes = 'pending'", binaryResults: true)
            }
            return try rows.first.flatMap { try $0.bytes("data") }
        }
    }

    /// Keeps the sizes made from a photo beside it (`made` nil: it cannot be decoded, and its
    /// original stands for every size), and fills in its width and height when the write did not
    /// read them (a photo stored before they were read). Only a photo still pending changes.
    public func keepSizes(_ made: MadePhotoSizes?, of owner: PhotoOwner) async throws(StoreError) {
        let (photos, key, rowsTable) = switch owner {
        case .pin: ("photos", "pin_id", "pins")
        case .checkIn: ("checkin_photos", "checkin_id", "checkins")
        }
        func file(_ size: PhotoSize, _ encoding: SizeEncoding) -> [UInt8]? { made?.files[size]?[encoding] }
        let id = owner.id
        _ = try await mappingErrors {
            try await pool.query(SQL("""
                WITH sized AS (
                    UPDATE \(photos) SET sizes = $2, thumb_jpeg = $3, display_jpeg = $4, thumb_webp = $5, display_webp = $6
                    WHERE \(key) = $1 AND sizes = 'pending'
                    RETURNING \(key)
                )
                UPDATE \(rowsTable) SET photo_width = $7, photo_height = $8
                WHERE id IN (SELECT \(key) FROM sized) AND photo_width IS NULL AND $7::integer IS NOT NULL
                """, binds: [
                    id.postgresValue, (made == nil ? "failed" : "made").postgresValue,
                    file(.thumb, .jpeg).postgresValue, file(.display, .jpeg).postgresValue,
                    file(.thumb, .webp).postgresValue, file(.display, .webp).postgresValue,
                    made?.width.postgresValue ?? .null, made?.height.postgresValue ?? .null,
                ]), idempotent: true)
        }
    }
}
