/// A text pin, or a photo with a caption.
public enum PinKind: String, Sendable, CaseIterable, Codable {
    case text
    case photo
}

/// The stored facts about a pin's photo (the bytes live apart).
public struct PhotoInfo: Sendable, Equatable, Codable {
    public var mime: String
    public var bytes: Int
    /// Pixels as shown (read from the header at the write); 0 for a photo stored before sizes
    /// were read, until the background sizes fill them in.
    public var width: Int
    public var height: Int

    public init(mime: String, bytes: Int, width: Int = 0, height: Int = 0) {
        self.mime = mime
        self.bytes = bytes
        self.width = width
        self.height = height
    }

    /// The facts of a photo about to be stored.
    public init(storing photo: Photo) {
        self.init(
            mime: photo.mime, bytes: photo.data.count, width: photo.dimensions?.width ?? 0,
            height: photo.dimensions?.height ?? 0)
    }

    private enum CodingKeys: String, CodingKey { case mime, bytes, width, height }

    /// Replies stored before width and height existed decode with 0 for both.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mime = try container.decode(String.self, forKey: .mime)
        bytes = try container.decode(Int.self, forKey: .bytes)
        width = try container.decodeIfPresent(Int.self, forKey: .width) ?? 0
        height = try container.decodeIfPresent(Int.self, forKey: .height) ?? 0
    }
}

/// A pin as clients see it.
public struct Pin: Sendable, Equatable, Codable {
    public var id: String
    public var lat: Double
    public var lon: Double
    public var kind: PinKind
    /// The message, or a photo's caption (may be empty).
    public var text: String
    public var author: String
    public var created: Timestamp
    public var expires: Timestamp
    public var region: String?
    public var photo: PhotoInfo?
    public var replies: Int

    public init(
        id: String, lat: Double, lon: Double, kind: PinKind, text: String, author: String, created: Timestamp,
        expires: Timestamp, region: String?, photo: PhotoInfo?, replies: Int
    ) {
        self.id = id
        self.lat = lat
        self.lon = lon
        self.kind = kind
        self.text = text
        self.author = author
        self.created = created
        self.expires = expires
        self.region = region
        self.photo = photo
        self.replies = replies
    }
}

/// One message of the chat under a pin.
public struct PinReply: Sendable, Equatable, Codable {
    public var id: String
    public var pin: String
    public var text: String
    public var author: String
    public var created: Timestamp

    public init(id: String, pin: String, text: String, author: String, created: Timestamp) {
        self.id = id
        self.pin = pin
        self.text = text
        self.author = author
        self.created = created
    }
}

/// A photo's bytes with their type.
public struct Photo: Sendable, Equatable {
    public var mime: String
    public var data: [UInt8]
    /// Pixels as read from the header at the write; nil before it was read.
    public var dimensions: PhotoDimensions?

    public init(mime: String, data: [UInt8], dimensions: PhotoDimensions? = nil) {
        self.mime = mime
        self.data = data
        self.dimensions = dimensions
    }

    /// The type by magic bytes: JPEG, PNG, GIF or WebP; nil for anything else.
    public static func mimeType(of data: [UInt8]) -> String? {
        PhotoFormat(magicBytesOf: data)?.mime
    }
}

/// Rules for pins that operators can configure.
public struct PinRules: Sendable {
    /// TTL when a client gives none; default 48 hours.
    public var defaultTTLSeconds: Int
    /// Longest TTL a client may ask for; default 30 days.
    public var maximumTTLSeconds: Int
    /// Largest photo, decoded; default 5 MiB.
    public var maximumPhotoBytes: Int
    /// The most pixels a photo may claim (decompression bombs).
    public var pixelLimits: PhotoPixelLimits

    public init(
        defaultTTLSeconds: Int = 48 * 3600, maximumTTLSeconds: Int = 30 * 24 * 3600, maximumPhotoBytes: Int = 5 * 1024 * 1024,
        pixelLimits: PhotoPixelLimits = PhotoPixelLimits()
    ) {
        self.defaultTTLSeconds = defaultTTLSeconds
        self.maximumTTLSeconds = maximumTTLSeconds
        self.maximumPhotoBytes = maximumPhotoBytes
        self.pixelLimits = pixelLimits
    }
}

/// What a reply shows of a pin: satisfied by ``Pin`` and by `PinRecord` (ScavengerPinIndex),
/// the index's view of a pin that copies nothing, so replies are written by one encoder from
/// either.
public protocol PinFields {
    associatedtype TextUTF8: Collection<UInt8>
    var lat: Double { get }
    var lon: Double { get }
    var kind: PinKind { get }
    /// The message or caption, as UTF-8.
    var textUTF8: TextUTF8 { get }
    var author: String { get }
    var created: Timestamp { get }
    var expires: Timestamp { get }
    var region: String? { get }
    var photo: PhotoInfo? { get }
    var replies: Int { get }
    /// Appends the id's characters (ASCII).
    func appendID(to bytes: inout [UInt8])
}

extension Pin: PinFields {
    public var textUTF8: String.UTF8View { text.utf8 }

    public func appendID(to bytes: inout [UInt8]) {
        bytes.append(contentsOf: id.utf8)
    }
}
