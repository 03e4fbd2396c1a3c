/// The image types a photo may be, told apart by their first bytes.
public enum PhotoFormat: String, Sendable, CaseIterable {
    case jpeg = "JPEG"
    case png = "PNG"
    case gif = "GIF"
    case webp = "WebP"

    /// The type whose magic bytes `data` starts with; nil for anything else.
    public init?(magicBytesOf data: [UInt8]) {
        if data.has(PhotoMarks.jpegStart, at: 0) {
            self = .jpeg
        } else if data.has(PhotoMarks.pngSignature, at: 0) {
            self = .png
        } else if data.has(PhotoMarks.gif87a, at: 0) || data.has(PhotoMarks.gif89a, at: 0) {
            self = .gif
        } else if data.has(PhotoMarks.riff, at: 0), data.has(PhotoMarks.webp, at: 8) {
            self = .webp
        } else {
            return nil
        }
    }

    /// The MIME type, e.g. `image/jpeg`.
    public var mime: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .gif: "image/gif"
        case .webp: "image/webp"
        }
    }
}

/// A photo that is not a well-formed file of the type its magic bytes claim.
public struct PhotoScrubError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The claimed type; nil when the magic bytes match none.
    public var format: PhotoFormat?
    /// What is wrong, for people (no bytes of the photo are quoted).
    public var reason: String

    public init(_ format: PhotoFormat?, _ reason: String) {
        self.format = format
        self.reason = reason
    }

    public var description: String {
        guard let format else { return "the photo is not a JPEG, PNG, GIF or WebP image" }
        return "the photo is not a well-formed \(format.rawValue) (\(reason))"
    }
}

/// Removes what a photo says about where, when and with what it was taken (EXIF with its GPS
/// position and camera serial, XMP, IPTC, comments, text chunks, thumbnails and embedded second
/// images), keeping what is needed to show it: pixels, colour profiles and animation.
///
/// The file's structure is walked, never searched, and copied piece by piece: the result is the
/// input minus the removed parts (for WebP, with the RIFF size and VP8X flags updated), still a
/// file of the same type. Anything that cannot be walked to its end throws. Nothing after the
/// end of the image (JPEG EOI, PNG IEND, GIF trailer, the RIFF size) is kept.
///
/// Orientation: a JPEG's EXIF orientation (2–8) survives as a new, minimal EXIF segment holding
/// that one tag, so portrait phone photos are not shown sideways; PNG `eXIf` and WebP `EXIF` go
/// whole, orientation included (browsers mostly ignore it there). The output is never longer
/// than the input.
public enum PhotoScrubber {
    /// The photo without its metadata; the input itself when there is nothing to remove.
    public static func scrub(_ bytes: [UInt8]) throws(PhotoScrubError) -> [UInt8] {
        switch PhotoFormat(magicBytesOf: bytes) {
        case .jpeg: try scrubJPEG(bytes)
        case .png: try scrubPNG(bytes)
        case .gif: try scrubGIF(bytes)
        case .webp: try scrubWebP(bytes)
        case nil: throw PhotoScrubError(nil, "unknown type")
        }
    }
}

// MARK: - JPEG

extension PhotoScrubber {
    /// Walks the marker segments from SOI to EOI, the entropy-coded data of every scan included
    /// (a progressive JPEG has tables and even APPn segments between its scans). Drops APP1 (EXIF,
    /// XMP), APP2 but ICC profiles (MPF, FlashPix), APP3–APP15 but Adobe APP14 (it says how
    /// CMYK/YCCK colours are stored), APP0 other than JFIF (JFXX thumbnails), COM, and whatever
    /// follows EOI (the second images of MPF, motion-photo videos).
    static func scrubJPEG(_ bytes: [UInt8]) throws(PhotoScrubError) -> [UInt8] {
        func malformed(_ reason: String) -> PhotoScrubError { PhotoScrubError(.jpeg, reason) }
        guard bytes.count >= 2, bytes[0] == 0xFF, bytes[1] == 0xD8 else { throw malformed("no SOI marker") }
        var layout = ScrubLayout()
        layout.keep(0 ..< 2)
        var position = 2
        var sawFrame = false, sawScan = false, inScan = false, wroteOrientation = false
        while true {
            if inScan {
                // Entropy-coded data: 0xFF is followed by 0x00 (a stuffed byte), RSTn, TEM or fill
                // (0xFF); anything else ends the scan.
                var cursor = position
                scanning: while true {
                    guard let mark = bytes[cursor...].firstIndex(of: 0xFF), mark + 1 < bytes.count else {
                        throw malformed("the image data ends without EOI")
                    }
                    switch bytes[mark + 1] {
                    case 0x00, 0x01, 0xD0 ... 0xD7: cursor = mark + 2
                    case 0xFF: cursor = mark + 1
                    default:
                        layout.keep(position ..< mark)
                        position = mark
                        break scanning
                    }
                }
                inScan = false
            }
            guard position < bytes.count, bytes[position] == 0xFF else {
                throw malformed(position < bytes.count ? "no marker at byte \(position)" : "it ends without EOI")
            }
            var start = position
            while start + 1 < bytes.count, bytes[start + 1] == 0xFF { start += 1 }
            layout.keep(position ..< start)  // fill bytes
            guard start + 1 < bytes.count else { throw malformed("it ends without EOI") }
            let marker = bytes[start + 1]
            switch marker {
            case 0xD9:
                guard sawScan else { throw malformed("EOI before any scan (SOS)") }
                layout.keep(start ..< start + 2)
                return layout.assemble(from: bytes)
            case 0xD8: throw malformed("a second SOI marker")
            case 0x00: throw malformed("a stuffed 0xFF00 outside image data")
            case 0x01, 0xD0 ... 0xD7:
                layout.keep(start ..< start + 2)
                position = start + 2
                continue
            default: break
            }
            guard start + 4 <= bytes.count else { throw malformed("a segment length is cut off") }
            let length = bytes.bigEndian16(at: start + 2)
            guard length >= 2 else { throw malformed("a segment length below 2") }
            let end = start + 2 + length
            guard end <= bytes.count else { throw malformed("a segment runs past the end") }
            let payload = start + 4 ..< end
            switch jpegSegmentFate(marker: marker, payload: payload, in: bytes) {
            case .keep:
                layout.keep(start ..< end)
            case .drop:
                break
            case .orientation(let value):
                // In the place of the first Exif, if it is no shorter: output never outgrows input.
                let minimal = minimalExif(orientation: value)
                if !wroteOrientation, minimal.count <= end - start {
                    layout.insert(minimal)
                    wroteOrientation = true
                }
            }
            position = end
            switch marker {
            case 0xC0 ... 0xC3, 0xC5 ... 0xC7, 0xC9 ... 0xCB, 0xCD ... 0xCF:
                sawFrame = true
            case 0xDA:
                guard sawFrame else { throw malformed("a scan (SOS) before the frame header (SOFn)") }
                sawScan = true
                inScan = true
            default: break
            }
        }
    }

    enum SegmentFate: Equatable {
        case keep
        case drop
        /// Drop, but put a minimal EXIF segment with this orientation in its place.
        case orientation(UInt8)
    }

    static func jpegSegmentFate(marker: UInt8, payload: Range<Int>, in bytes: [UInt8]) -> SegmentFate {
        switch marker {
        case 0xE0: bytes.has(PhotoMarks.jfif, at: payload.lowerBound, before: payload.upperBound) ? .keep : .drop
        case 0xE1: exifOrientation(payload, in: bytes).map(SegmentFate.orientation) ?? .drop
        case 0xE2: bytes.has(PhotoMarks.iccProfile, at: payload.lowerBound, before: payload.upperBound) ? .keep : .drop
        case 0xEE: bytes.has(PhotoMarks.adobe, at: payload.lowerBound, before: payload.upperBound) ? .keep : .drop
        case 0xE3 ... 0xED, 0xEF, 0xFE: .drop
        default: .keep
        }
    }

    /// The orientation tag (0x0112) of an Exif APP1's first IFD when it is 2–8; nil when it is
    /// 1 (as stored), absent, or anything in the way is malformed.
    static func exifOrientation(_ payload: Range<Int>, in bytes: [UInt8]) -> UInt8? {
        guard bytes.has(PhotoMarks.exif, at: payload.lowerBound, before: payload.upperBound) else { return nil }
        let tiff = payload.lowerBound + PhotoMarks.exif.count
        let end = payload.upperBound
        guard tiff + 8 <= end else { return nil }
        let littleEndian: Bool
        switch (bytes[tiff], bytes[tiff + 1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func read16(_ offset: Int) -> Int {
            littleEndian ? bytes.littleEndian16(at: offset) : bytes.bigEndian16(at: offset)
        }
        func read32(_ offset: Int) -> Int {
            littleEndian ? bytes.littleEndian32(at: offset) : bytes.bigEndian32(at: offset)
        }
        guard read16(tiff + 2) == 42 else { return nil }
        let ifd = read32(tiff + 4)
        guard ifd <= end - tiff - 2 else { return nil }
        let entries = read16(tiff + ifd)
        for index in 0 ..< entries {
            let entry = tiff + ifd + 2 + 12 * index
            guard entry + 12 <= end else { return nil }
            guard read16(entry) == 0x0112 else { continue }
            guard read16(entry + 2) == 3, read32(entry + 4) == 1 else { return nil }
            let value = read16(entry + 8)
            return (2 ... 8).contains(value) ? UInt8(value) : nil
        }
        return nil
    }

    /// An APP1 segment whose EXIF holds one tag: the orientation.
    static func minimalExif(orientation: UInt8) -> [UInt8] {
        [0xFF, 0xE1, 0x00, 0x22] + PhotoMarks.exif
            + [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08]  // big-endian TIFF, IFD0 at 8
            + [0x00, 0x01]  // one entry
            + [0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, orientation, 0x00, 0x00]
            + [0x00, 0x00, 0x00, 0x00]  // no next IFD
    }
}

// MARK: - PNG

extension PhotoScrubber {
    /// Ancillary chunks kept: colour (iCCP, sRGB, gAMA, cHRM, cICP, mDCV, cLLI, sBIT),
    /// transparency and background (tRNS, bKGD), pixel aspect (pHYs) and APNG animation (acTL,
    /// fcTL, fdAT). Every other ancillary chunk goes: tEXt, zTXt, iTXt, eXIf, tIME and unknown
    /// private ones. Critical chunks (IHDR, PLTE, IDAT, IEND) all stay.
    static let keptPNGAncillaryChunks: Set<[UInt8]> = Set([
        "iCCP", "sRGB", "gAMA", "cHRM", "cICP", "mDCV", "cLLI", "sBIT", "tRNS", "bKGD", "pHYs",
        "acTL", "fcTL", "fdAT",
    ].map { Array($0.utf8) })

    /// Walks the chunks from IHDR to IEND, copying kept chunks whole (CRCs as they were).
    static func scrubPNG(_ bytes: [UInt8]) throws(PhotoScrubError) -> [UInt8] {
        func malformed(_ reason: String) -> PhotoScrubError { PhotoScrubError(.png, reason) }
        guard bytes.has(PhotoMarks.pngSignature, at: 0) else { throw malformed("no PNG signature") }
        var layout = ScrubLayout()
        layout.keep(0 ..< 8)
        var position = 8
        var sawData = false
        while true {
            guard position + 12 <= bytes.count else { throw malformed("it ends without IEND") }
            let length = bytes.bigEndian32(at: position)
            guard length <= Int(Int32.max) else { throw malformed("a chunk length above 2^31-1") }
            let type = Array(bytes[position + 4 ..< position + 8])
            guard type.allSatisfy(\.isASCIILetter) else { throw malformed("a chunk type that is not four letters") }
            let end = position + 12 + length
            guard end <= bytes.count else { throw malformed("a chunk runs past the end") }
            let isHeader = type == PhotoMarks.ihdr
            guard isHeader == (position == 8) else { throw malformed("IHDR is not the first chunk") }
            let critical = type[0] & 0x20 == 0
            if critical || keptPNGAncillaryChunks.contains(type) {
                layout.keep(position ..< end)
            }
            if type == PhotoMarks.idat { sawData = true }
            position = end
            if type == PhotoMarks.iend {
                guard sawData else { throw malformed("no IDAT chunk") }
                return layout.assemble(from: bytes)
            }
        }
    }
}

// MARK: - GIF

extension PhotoScrubber {
    /// Walks the blocks from the header to the trailer (0x3B). Keeps images, graphic control and
    /// plain-text extensions, and application extensions for looping (NETSCAPE2.0, ANIMEXTS1.0)
    /// and colour (ICCRGBG1012); drops comments, other application extensions (XMP among them)
    /// and unknown extensions.
    static func scrubGIF(_ bytes: [UInt8]) throws(PhotoScrubError) -> [UInt8] {
        func malformed(_ reason: String) -> PhotoScrubError { PhotoScrubError(.gif, reason) }
        /// The end of a run of sub-blocks starting at `start` (after its zero terminator).
        func subBlocksEnd(from start: Int) throws(PhotoScrubError) -> Int {
            var cursor = start
            while true {
                guard cursor < bytes.count else { throw malformed("a block runs past the end") }
                let size = Int(bytes[cursor])
                cursor += 1 + size
                if size == 0 { return cursor }
            }
        }
        guard bytes.count >= 13, bytes.has(PhotoMarks.gif87a, at: 0) || bytes.has(PhotoMarks.gif89a, at: 0) else {
            throw malformed("no GIF header")
        }
        var position = 13 + colorTableSize(flags: bytes[10])
        guard position <= bytes.count else { throw malformed("the global colour table runs past the end") }
        var layout = ScrubLayout()
        layout.keep(0 ..< position)
        var sawImage = false
        while true {
            guard position < bytes.count else { throw malformed("it ends without a trailer") }
            switch bytes[position] {
            case 0x3B:
                guard sawImage else { throw malformed("no image") }
                layout.keep(position ..< position + 1)
                return layout.assemble(from: bytes)
            case 0x2C:
                guard position + 10 < bytes.count else { throw malformed("an image descriptor runs past the end") }
                // Descriptor (10), local colour table, LZW minimum code size (1), data sub-blocks.
                let data = position + 10 + colorTableSize(flags: bytes[position + 9]) + 1
                let end = try subBlocksEnd(from: data)
                layout.keep(position ..< end)
                position = end
                sawImage = true
            case 0x21:
                guard position + 1 < bytes.count else { throw malformed("an extension runs past the end") }
                let label = bytes[position + 1]
                let end = try subBlocksEnd(from: position + 2)
                let keep = switch label {
                case 0xF9, 0x01: true
                case 0xFF:
                    bytes.has(PhotoMarks.netscapeLoop, at: position + 2, before: end)
                        || bytes.has(PhotoMarks.animExtsLoop, at: position + 2, before: end)
                        || bytes.has(PhotoMarks.gifICC, at: position + 2, before: end)
                default: false
                }
                if keep { layout.keep(position ..< end) }
                position = end
            default:
                throw malformed("an unknown block at byte \(position)")
            }
        }
    }

    /// The bytes of a colour table whose presence and size a packed-fields byte gives.
    static func colorTableSize(flags: UInt8) -> Int {
        flags & 0x80 == 0 ? 0 : 3 << (Int(flags & 0x07) + 1)
    }
}

// MARK: - WebP

extension PhotoScrubber {
    /// Chunks kept: the image (VP8, VP8L, VP8X, ALPH), animation (ANIM, ANMF) and the colour
    /// profile (ICCP). EXIF, XMP and unknown chunks go.
    static let keptWebPChunks: Set<[UInt8]> = Set(["VP8 ", "VP8L", "VP8X", "ALPH", "ANIM", "ANMF", "ICCP"].map { Array($0.utf8) })

    /// Walks the RIFF chunks (padded to even sizes), then writes the new RIFF size and clears
    /// the VP8X flags for EXIF (0x08) and XMP (0x04).
    static func scrubWebP(_ bytes: [UInt8]) throws(PhotoScrubError) -> [UInt8] {
        func malformed(_ reason: String) -> PhotoScrubError { PhotoScrubError(.webp, reason) }
        guard bytes.count >= 12, bytes.has(PhotoMarks.riff, at: 0), bytes.has(PhotoMarks.webp, at: 8) else {
            throw malformed("no RIFF WEBP header")
        }
        let riffSize = bytes.littleEndian32(at: 4)
        guard riffSize >= 4, riffSize % 2 == 0, riffSize <= bytes.count - 8 else { throw malformed("a bad RIFF size") }
        let riffEnd = 8 + riffSize
        var layout = ScrubLayout()
        layout.keep(0 ..< 12)
        var position = 12
        var extended = false
        while position < riffEnd {
            guard position + 8 <= riffEnd else { throw malformed("a chunk header runs past the RIFF size") }
            let type = Array(bytes[position ..< position + 4])
            let size = bytes.littleEndian32(at: position + 4)
            guard size <= riffEnd - position - 8 - size % 2 else { throw malformed("a chunk runs past the RIFF size") }
            let end = position + 8 + size + size % 2
            if position == 12 {
                switch type {
                case PhotoMarks.vp8x:
                    guard size >= 10 else { throw malformed("a VP8X chunk shorter than 10 bytes") }
                    extended = true
                case PhotoMarks.vp8, PhotoMarks.vp8l: break
                default: throw malformed("the first chunk is not VP8, VP8L or VP8X")
                }
            }
            if keptWebPChunks.contains(type) { layout.keep(position ..< end) }
            position = end
        }
        guard position > 12 else { throw malformed("no image chunk") }
        var output = layout.assemble(from: bytes)
        output.setLittleEndian32(output.count - 8, at: 4)
        if extended {
            output.setByte(output[20] & ~0x0C, at: 20)
        }
        return output
    }
}

// MARK: - Pieces

/// The output as pieces: ranges of the input, in order, and a few new bytes.
struct ScrubLayout {
    enum Piece {
        case input(Range<Int>)
        case new([UInt8])
    }

    private(set) var pieces: [Piece] = []

    /// Keeps a range of the input, merged with the previous piece when they touch.
    mutating func keep(_ range: Range<Int>) {
        guard !range.isEmpty else { return }
        if case .input(let last)? = pieces.last, last.upperBound == range.lowerBound {
            pieces[pieces.count - 1] = .input(last.lowerBound ..< range.upperBound)
        } else {
            pieces.append(.input(range))
        }
    }

    mutating func insert(_ bytes: [UInt8]) {
        pieces.append(.new(bytes))
    }

    /// The output, allocated once; the input itself when it is kept whole.
    func assemble(from input: [UInt8]) -> [UInt8] {
        if pieces.count == 1, case .input(let range) = pieces[0], range == input.indices { return input }
        var count = 0
        for piece in pieces {
            switch piece {
            case .input(let range): count += range.count
            case .new(let bytes): count += bytes.count
            }
        }
        var output: [UInt8] = []
        output.reserveCapacity(count)
        for piece in pieces {
            switch piece {
            case .input(let range): output.append(contentsOf: input[range])
            case .new(let bytes): output.append(contentsOf: bytes)
            }
        }
        return output
    }
}

/// Signatures and names the walkers look for.
enum PhotoMarks {
    static let jpegStart: [UInt8] = [0xFF, 0xD8, 0xFF]
    static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    static let gif87a = Array("GIF87a".utf8)
    static let gif89a = Array("GIF89a".utf8)
    static let riff = Array("RIFF".utf8)
    static let webp = Array("WEBP".utf8)
    static let jfif = Array("JFIF\0".utf8)
    static let exif = Array("Exif\0\0".utf8)
    static let iccProfile = Array("ICC_PROFILE\0".utf8)
    static let adobe = Array("Adobe".utf8)
    static let ihdr = Array("IHDR".utf8)
    static let idat = Array("IDAT".utf8)
    static let iend = Array("IEND".utf8)
    /// Application extension blocks: the size byte (11), then identifier and authentication code.
    static let netscapeLoop = [0x0B] + Array("NETSCAPE2.0".utf8)
    static let animExtsLoop = [0x0B] + Array("ANIMEXTS1.0".utf8)
    static let gifICC = [0x0B] + Array("ICCRGBG1012".utf8)
    static let vp8 = Array("VP8 ".utf8)
    static let vp8l = Array("VP8L".utf8)
    static let vp8x = Array("VP8X".utf8)
}

extension UInt8 {
    var isASCIILetter: Bool { (0x41 ... 0x5A).contains(self) || (0x61 ... 0x7A).contains(self) }
}

extension [UInt8] {
    /// Whether `prefix` is at `offset`, wholly before `end` (the array's end by default).
    func has(_ prefix: [UInt8], at offset: Int, before end: Int? = nil) -> Bool {
        let end = Swift.min(end ?? count, count)
        guard offset >= 0, prefix.count <= end - offset else { return false }
        for index in prefix.indices where self[offset + index] != prefix[index] { return false }
        return true
    }

    func bigEndian16(at offset: Int) -> Int { Int(self[offset]) << 8 | Int(self[offset + 1]) }
    func littleEndian16(at offset: Int) -> Int { Int(self[offset]) | Int(self[offset + 1]) << 8 }
    func bigEndian32(at offset: Int) -> Int { bigEndian16(at: offset) << 16 | bigEndian16(at: offset + 2) }
    func littleEndian32(at offset: Int) -> Int { littleEndian16(at: offset) | littleEndian16(at: offset + 2) << 16 }

    /// Writes a byte only when it differs, so an array shared with the input is copied only if it must be.
    mutating func setByte(_ value: UInt8, at offset: Int) {
        if self[offset] != value { self[offset] = value }
    }

    mutating func setLittleEndian32(_ value: Int, at offset: Int) {
        for index in 0 ..< 4 { setByte(UInt8(truncatingIfNeeded: value >> (8 * index)), at: offset + index) }
    }
}
