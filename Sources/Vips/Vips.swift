internal import CVips

/// An image type libvips is allowed to open here.
public enum ImageFormat: Sendable, Equatable {
    case jpeg
    case png
    case webp
    case gif
}

/// What an image's header says, read without decoding its pixels.
public struct ImageHeader: Sendable, Equatable {
    public var width: Int
    public var height: Int
    /// Progressive JPEG or Adam7 PNG: decoded whole, never streamed.
    public var interlaced: Bool
    public var format: ImageFormat

    public init(width: Int, height: Int, interlaced: Bool, format: ImageFormat) {
        self.width = width
        self.height = height
        self.interlaced = interlaced
        self.format = format
    }
}

/// The encoding of a size made from a photo.
public enum ThumbnailEncoding: Sendable, Equatable, CaseIterable {
    case jpeg
    case webp
}

/// libvips refused or failed; `message` is its own text, for logs (not for clients).
public struct VipsError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// libvips for untrusted photos: opened once with no cache, one worker per pipeline, and only
/// the JPEG, PNG, WebP and GIF loaders. Every call is synchronous and may take a while: call it
/// from a thread pool, never an event loop, and bound how many run at once.
public enum Vips {
    private static let started: Bool = scv_init() == 0

    /// Starts libvips (once; later calls do nothing). Call it early, before the first image.
    public static func start() throws(VipsError) {
        guard started else { throw VipsError("libvips did not start: \(takeError())") }
    }

    /// The header of the image in `bytes`: an image no allowed loader takes, or whose header is
    /// broken, throws.
    public static func header(of bytes: [UInt8]) throws(VipsError) -> ImageHeader {
        try start()
        var header = scv_header()
        let status = bytes.withUnsafeBytes { buffer in
            scv_probe(buffer.baseAddress, buffer.count, &header)
        }
        defer { scv_thread_done() }
        guard status == 0 else { throw VipsError(takeError()) }
        let format: ImageFormat
        switch Int(header.format) {
        case Int(SCV_FORMAT_JPEG): format = .jpeg
        case Int(SCV_FORMAT_PNG): format = .png
        case Int(SCV_FORMAT_WEBP): format = .webp
        case Int(SCV_FORMAT_GIF): format = .gif
        default: throw VipsError("unsupported image type")
        }
        return ImageHeader(
            width: Int(header.width), height: Int(header.height), interlaced: header.interlaced != 0, format: format)
    }

    /// The image in `bytes` made to fit `longestEdge` pixels (never enlarged), upright by its EXIF
    /// orientation, in sRGB, encoded as `encoding` with no metadata at all. Check its header
    /// (``header(of:)``) against the size limits first: this decodes the image.
    public static func thumbnail(of bytes: [UInt8], longestEdge: Int, as encoding: ThumbnailEncoding) throws(VipsError) -> [UInt8] {
        try start()
        guard longestEdge > 0, longestEdge <= 16_384 else { throw VipsError("edge out of range") }
        var output: UnsafeMutableRawPointer?
        var length = 0
        // The input stays alive for the whole pipeline: vips does not own it.
        let status = bytes.withUnsafeBytes { buffer in
            scv_thumbnail(buffer.baseAddress, buffer.count, Int32(longestEdge), encoding == .webp ? 1 : 0, &output, &length)
        }
        defer {
            scv_free(output)
            scv_thread_done()
        }
        guard status == 0, let output else { throw VipsError(takeError()) }
        return Array(UnsafeRawBufferPointer(start: output, count: length))
    }

    private static func takeError() -> String {
        var buffer = [CChar](repeating: 0, count: 512)
        buffer.withUnsafeMutableBufferPointer { scv_take_error($0.baseAddress, $0.count) }
        let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return message.isEmpty ? "libvips failed" : message.trimmingCharacters(in: " \n")
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var view = Substring(self)
        while let last = view.last, set.contains(last) { view = view.dropLast() }
        return String(view)
    }
}
