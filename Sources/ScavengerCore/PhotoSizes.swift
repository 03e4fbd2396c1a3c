/// What a photo's header says of its pixels, read before anything is decoded.
public struct PhotoDimensions: Sendable, Equatable {
    public var width: Int
    public var height: Int
    /// Progressive JPEG or Adam7 PNG: decoded whole in memory, never streamed.
    public var interlaced: Bool

    public init(width: Int, height: Int, interlaced: Bool) {
        self.width = width
        self.height = height
        self.interlaced = interlaced
    }
}

/// How many pixels a photo may have, so a small file cannot claim a huge image (a
/// decompression bomb): a side, the whole, and the whole of an interlaced one.
public struct PhotoPixelLimits: Sendable, Equatable {
    /// Longest side; default 16,384.
    public var maximumSide: Int
    /// Width × height; default 40 MP.
    public var maximumPixels: Int
    /// Width × height of a progressive or interlaced photo; default 10 MP.
    public var maximumInterlacedPixels: Int

    public init(maximumSide: Int = 16_384, maximumPixels: Int = 40_000_000, maximumInterlacedPixels: Int = 10_000_000) {
        self.maximumSide = maximumSide
        self.maximumPixels = maximumPixels
        self.maximumInterlacedPixels = maximumInterlacedPixels
    }

    /// Why a photo of these dimensions is refused; nil when it is within the limits.
    public func refusal(of photo: PhotoDimensions) -> String? {
        let size = "\(photo.width) × \(photo.height) pixels"
        guard photo.width > 0, photo.height > 0 else { return "photo has no pixels" }
        if photo.width > maximumSide || photo.height > maximumSide {
            return "photo is \(size); at most \(maximumSide) a side"
        }
        let pixels = photo.width * photo.height
        if pixels > maximumPixels {
            return "photo is \(size); at most \(maximumPixels) pixels"
        }
        if photo.interlaced, pixels > maximumInterlacedPixels {
            return "photo is \(size) and progressive or interlaced; at most \(maximumInterlacedPixels) pixels then"
        }
        return nil
    }
}

/// The sizes made of each photo, besides the original.
public enum PhotoSize: String, Sendable, CaseIterable {
    /// Longest side 256 px.
    case thumb
    /// Longest side 1,280 px.
    case display

    /// The longest side in pixels.
    public var longestEdge: Int {
        switch self {
        case .thumb: 256
        case .display: 1_280
        }
    }
}

/// Where the HTTP port serves a photo: `/photos/ID`, `/photos/ID?size=thumb`.
public enum PhotoPaths {
    /// The original's path.
    public static func original(_ id: String) -> String { "/photos/\(id)" }
    /// The thumbnail's path.
    public static func thumb(_ id: String) -> String { "/photos/\(id)?size=thumb" }
}
