import ScavengerTestSupport
import Testing
@testable import ScavengerCore

private typealias F = PhotoFixtures

/// Segments a camera or an editor writes, to be removed.
private enum Leaks {
    static let exif = F.jpegSegment(0xE1, F.exifWithGPS)
    static let xmp = F.jpegSegment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta>52.5N</x:xmpmeta>".utf8))
    static let comment = F.jpegSegment(0xFE, Array("taken at 12 Home Street".utf8))
    static let mpf = F.jpegSegment(0xE2, Array("MPF\0II*\0".utf8))
    static let photoshop = F.jpegSegment(0xED, Array("Photoshop 3.0\08BIM".utf8))
    static let jfxxThumbnail = F.jpegSegment(0xE0, Array("JFXX\0\u{10}".utf8) + [0xFF, 0xD8, 0xFF, 0xD9])
    static let ducky = F.jpegSegment(0xEC, Array("Ducky".utf8))
    static let app15 = F.jpegSegment(0xEF, [1, 2, 3])
}

/// Segments needed to show the image right, to be kept.
private enum Needed {
    static let icc = F.jpegSegment(0xE2, Array("ICC_PROFILE\0".utf8) + [1, 1] + Array("profile".utf8))
    static let adobe = F.jpegSegment(0xEE, Array("Adobe".utf8) + [0, 100, 0, 0, 0, 0, 1])
}

/// The minimal EXIF segment written in place of one with this orientation, spelled out.
private func minimalExif(_ orientation: UInt8) -> [UInt8] {
    [0xFF, 0xE1, 0, 34] + Array("Exif\0\0".utf8) + [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1]
        + [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, orientation, 0, 0] + [0, 0, 0, 0]
}

/// Scrubs, and checks that scrubbing the result changes nothing (it walks again, to the end).
private func scrubbed(_ bytes: [UInt8]) throws -> [UInt8] {
    let output = try PhotoScrubber.scrub(bytes)
    #expect(try PhotoScrubber.scrub(output) == output, "scrubbing is not idempotent")
    return output
}

@Suite("Photo metadata: JPEG")
struct JPEGScrubTests {
    @Test("EXIF with GPS, XMP, comments, MPF, IPTC and thumbnails go; JFIF, ICC, Adobe and the image stay byte for byte")
    func dropsMetadata() throws {
        let input = F.jpeg([
            F.jfif, Leaks.exif, Leaks.xmp, Needed.icc, Leaks.mpf, Leaks.photoshop, Leaks.comment, Leaks.jfxxThumbnail,
            Leaks.ducky, Needed.adobe, Leaks.app15,
        ])
        let output = try scrubbed(input)
        // The Exif had orientation 6: only that survives, where the Exif was.
        #expect(output == F.jpeg([F.jfif, minimalExif(6), Needed.icc, Needed.adobe]))
        for leak in ["ScavengerCam", "Model X", "SN-0123456789", "xmpmeta", "Home Street", "Photoshop", "MPF", "JFXX", "Ducky"] {
            #expect(!F.contains(output, leak), "\(leak) survived")
        }
        #expect(F.jpegMarkersBeforeScan(output) == [0xD8, 0xE0, 0xE1, 0xE2, 0xEE, 0xDB, 0xC0, 0xC4, 0xC4, 0xDA])
    }

    @Test("a JPEG with nothing to remove comes back as it was")
    func untouched() throws {
        let input = F.jpeg([F.jfif, Needed.icc, Needed.adobe])
        #expect(try scrubbed(input) == input)
        #expect(try scrubbed(F.jpeg([])) == F.jpeg([]))
    }

    @Test("a progressive JPEG from Pillow: its ten scans, tables between them and restart markers are copied verbatim")
    func progressive() throws {
        let input = F.progressiveJPEG
        let output = try scrubbed(input)
        // SOI + APP0 (20 bytes), then Exif (240) becomes the minimal one; ICC APP2 (84) stays;
        // COM (16) goes; everything from the first DQT on stays.
        let icc = 20 + 240
        let tables = icc + 84 + 16
        #expect(Array(input[icc ..< icc + 4]) == [0xFF, 0xE2, 0, 82])
        #expect(Array(input[tables ..< tables + 2]) == [0xFF, 0xDB])
        #expect(output == Array(input[0 ..< 20]) + minimalExif(6) + Array(input[icc ..< icc + 84]) + Array(input[tables...]))
        #expect(!F.contains(output, "shot at home") && !F.contains(output, "SN-0123456789"))
    }

    @Test("metadata between scans and anything after EOI (MPF images, motion-photo video) go")
    func betweenScansAndAfterEnd() throws {
        let scan = F.jpegSegment(0xDA, [1, 1, 0, 0, 0x3F, 0])
        let data: [UInt8] = [0x3F, 0xFF, 0x00, 0x12, 0xFF, 0xD0, 0x34, 0xFF, 0x01, 0x56]  // stuffed, RST0, TEM
        let head = [0xFF, 0xD8] + F.jfif + F.jpegTables
        let input = head + scan + data + Leaks.comment + Leaks.exif + scan + data + [0xFF, 0xD9]
            + [0xFF, 0xD8] + Leaks.exif + Array("ftypmp42 video of the living room".utf8)
        #expect(try scrubbed(input) == head + scan + data + minimalExif(6) + scan + data + [0xFF, 0xD9])
    }

    @Test("fill bytes and standalone markers between segments stay; a dropped segment's fill bytes stay too")
    func fillAndStandalone() throws {
        let input = [0xFF, 0xD8, 0xFF, 0xFF] + F.jfif + [0xFF, 0xFF, 0xFF] + Leaks.comment + [0xFF, 0x01, 0xFF, 0xD3]
            + F.jpegImage.dropLast(2) + [0xFF, 0xFF, 0xD9]
        #expect(try scrubbed(input) == [0xFF, 0xD8, 0xFF, 0xFF] + F.jfif + [0xFF, 0xFF, 0xFF] + [0xFF, 0x01, 0xFF, 0xD3]
            + F.jpegImage.dropLast(2) + [0xFF, 0xFF, 0xD9])
    }

    static let orientations: [(payload: [UInt8], expected: UInt8?)] = [
        (exif(littleEndian: true, tag: 0x0112, type: 3, count: 1, value: 8), 8),
        (exif(littleEndian: false, tag: 0x0112, type: 3, count: 1, value: 3), 3),
        (exif(littleEndian: true, tag: 0x0112, type: 3, count: 1, value: 1), nil),
        (exif(littleEndian: true, tag: 0x0112, type: 3, count: 1, value: 9), nil),
        (exif(littleEndian: true, tag: 0x0112, type: 4, count: 1, value: 6), nil),
        (exif(littleEndian: true, tag: 0x0112, type: 3, count: 2, value: 6), nil),
        (exif(littleEndian: true, tag: 0x010F, type: 3, count: 1, value: 6), nil),
        (Array(exif(littleEndian: true, tag: 0x0112, type: 3, count: 1, value: 6).dropLast(6)), nil),
        (exif(littleEndian: true, tag: 0x0112, type: 3, count: 1, value: 6, ifdOffset: 0xFFFF_FFF0), nil),
        (exif(littleEndian: true, tag: 0x010F, type: 3, count: 1, value: 6, entries: 0xFFFF), nil),
        (Array("Exif\0\0XX".utf8) + [UInt8](repeating: 0, count: 30), nil),
        (Array("Exif\0\0II".utf8), nil),
    ]

    @Test("the orientation is read from little- and big-endian Exif, and only 2 to 8 is kept", arguments: orientations)
    func orientation(payload: [UInt8], expected: UInt8?) throws {
        let input = F.jpeg([F.jfif, F.jpegSegment(0xE1, payload)])
        let output = try scrubbed(input)
        #expect(output == F.jpeg([F.jfif] + (expected.map { [minimalExif($0)] } ?? [])))
    }

    /// A one-entry Exif payload.
    static func exif(
        littleEndian: Bool, tag: UInt16, type: UInt16, count: UInt32, value: UInt16, ifdOffset: UInt32 = 8, entries: UInt16 = 1
    ) -> [UInt8] {
        func u16(_ v: UInt16) -> [UInt8] { littleEndian ? [UInt8(v & 0xFF), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: UInt32) -> [UInt8] { littleEndian ? u16(UInt16(v & 0xFFFF)) + u16(UInt16(v >> 16)) : u16(UInt16(v >> 16)) + u16(UInt16(v & 0xFFFF)) }
        return Array("Exif\0\0".utf8) + (littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]) + u16(42) + u32(ifdOffset)
            + u16(entries) + u16(tag) + u16(type) + u32(count) + u16(value) + [0, 0] + u32(0)
    }
}

@Suite("Photo metadata: PNG")
struct PNGScrubTests {
    @Test("text, eXIf, tIME and private chunks go; colour, transparency, density, animation and image data stay with their CRCs")
    func dropsMetadata() throws {
        let kept = [
            F.pngChunk("iCCP", Array("icc\0\0".utf8) + [0x78, 0x9C]), F.pngChunk("sRGB", [0]), F.pngChunk("gAMA", [0, 0, 0xB1, 0x8F]),
            F.pngChunk("cHRM", [UInt8](repeating: 1, count: 32)), F.pngChunk("pHYs", [0, 0, 0x0B, 0x13, 0, 0, 0x0B, 0x13, 1]),
            F.pngChunk("tRNS", [0, 0]), F.pngChunk("acTL", [0, 0, 0, 1, 0, 0, 0, 0]),
            F.pngChunk("fcTL", [UInt8](repeating: 0, count: 26)),
        ]
        let leaks = [
            F.pngChunk("tEXt", Array("Comment\0at home".utf8)), F.pngChunk("eXIf", Array(F.exifWithGPS.dropFirst(6))),
            F.pngChunk("zTXt", Array("Author\0\0".utf8) + [0x78, 0x9C]), F.pngChunk("iTXt", Array("XML:com.adobe.xmp\0\0\0\0\0<x/>".utf8)),
            F.pngChunk("tIME", [0x07, 0xE8, 6, 1, 12, 0, 0]), F.pngChunk("prVW", [1, 2, 3]),
        ]
        let input = F.png([kept[0], leaks[0], kept[1], leaks[1], kept[2], kept[3], leaks[2], kept[4], kept[5], kept[6], kept[7],
                           F.pngData, leaks[3], F.pngData, leaks[4], leaks[5]])
        let output = try scrubbed(input)
        #expect(output == F.png(kept + [F.pngData, F.pngData]))
        #expect(!F.contains(output, "ScavengerCam") && !F.contains(output, "at home"))
        // Every chunk's CRC still matches.
        var position = 8
        while position < output.count {
            let length = output[position ..< position + 4].reduce(0) { $0 << 8 | Int($1) }
            let crc = output[position + 8 + length ..< position + 12 + length].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            #expect(F.crc32(Array(output[position + 4 ..< position + 8 + length])) == crc)
            position += 12 + length
        }
        #expect(position == output.count)
    }

    @Test("a PNG with nothing to remove comes back as it was; bytes after IEND go")
    func untouchedAndTrailing() throws {
        #expect(try scrubbed(F.png()) == F.png())
        #expect(try scrubbed(F.png() + Array("appended zip".utf8)) == F.png())
    }
}

@Suite("Photo metadata: GIF")
struct GIFScrubTests {
    @Test("comments and XMP application extensions go; looping, ICC, graphic control and images stay")
    func dropsMetadata() throws {
        let loop = F.gifApplication("NETSCAPE2.0", [1, 0, 0])
        let icc = F.gifApplication("ICCRGBG1012", Array("profile".utf8))
        let xmp = F.gifApplication("XMP DataXMP", Array("<x:xmpmeta>taken at home</x:xmpmeta>".utf8) + [UInt8](repeating: 0x20, count: 300))
        let comment = F.gifComment("camera serial 42")
        let unknown: [UInt8] = [0x21, 0x99, 2, 7, 7, 0]
        let input = F.gif([loop, comment, icc, xmp, F.gifGraphicControl, F.gifImage, unknown, comment, F.gifGraphicControl, F.gifImage])
            + Array("trailing".utf8)
        let output = try scrubbed(input)
        #expect(output == F.gif([loop, icc, F.gifGraphicControl, F.gifImage, F.gifGraphicControl, F.gifImage]))
        #expect(!F.contains(output, "home") && !F.contains(output, "serial"))
        #expect(try scrubbed(F.gif()) == F.gif())
    }

    @Test("a local colour table and GIF87a are walked")
    func localColourTable() throws {
        let image: [UInt8] = [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0x81] + [UInt8](repeating: 9, count: 12) + [2, 2, 0x44, 0x01, 0]
        let input = Array("GIF87a".utf8) + F.gifHeader.dropFirst(6) + image + F.gifComment("x") + [0x3B]
        #expect(try scrubbed(input) == Array("GIF87a".utf8) + F.gifHeader.dropFirst(6) + image + [0x3B])
    }
}

@Suite("Photo metadata: WebP")
struct WebPScrubTests {
    @Test("EXIF, XMP and unknown chunks go; VP8X loses its EXIF and XMP flags; the RIFF size follows")
    func dropsMetadata() throws {
        let icc = F.webpChunk("ICCP", Array("profile".utf8))  // odd: padded
        let exif = F.webpChunk("EXIF", Array(F.exifWithGPS.dropFirst(6)))
        let xmp = F.webpChunk("XMP ", Array("<x:xmpmeta>52.5N 13.4E</x:xmpmeta>".utf8))
        let unknown = F.webpChunk("ZZZZ", [1, 2, 3])
        let input = F.webp([F.webpExtended(flags: 0x20 | 0x10 | 0x08 | 0x04), icc, F.webpLossless, exif, unknown, xmp])
        let output = try scrubbed(input)
        #expect(output == F.webp([F.webpExtended(flags: 0x20 | 0x10), icc, F.webpLossless]))
        let size = output[4 ..< 8].reversed().reduce(0) { $0 << 8 | Int($1) }
        #expect(size == output.count - 8)
        #expect(!F.contains(output, "ScavengerCam") && !F.contains(output, "xmpmeta"))
    }

    @Test("a WebP with nothing to remove comes back as it was; bytes past the RIFF size go")
    func untouched() throws {
        #expect(try scrubbed(F.webp()) == F.webp())
        let extended = F.webp([F.webpExtended(flags: 0x20), F.webpChunk("ICCP", [1, 2]), F.webpLossless])
        #expect(try scrubbed(extended) == extended)
        #expect(try scrubbed(F.webp() + [0, 0, 0, 0]) == F.webp())
    }
}

@Suite("Photo metadata: malformed input")
struct MalformedPhotoTests {
    static let jpegHead = [0xFF, 0xD8] + F.jfif

    static let malformedCases: [(name: String, bytes: [UInt8], format: PhotoFormat?)] = [
        ("JPEG: SOI and nothing", [0xFF, 0xD8, 0xFF], .jpeg),
        ("JPEG: segment length cut off", jpegHead + [0xFF, 0xE1, 0x00], .jpeg),
        ("JPEG: segment length below 2", jpegHead + [0xFF, 0xE1, 0x00, 0x01] + F.jpegImage, .jpeg),
        ("JPEG: segment past the end", jpegHead + [0xFF, 0xE1, 0x40, 0x00, 1, 2, 3], .jpeg),
        ("JPEG: no SOS", jpegHead + F.jpegTables + [0xFF, 0xD9], .jpeg),
        ("JPEG: no EOI", Array(F.jpeg().dropLast(2)), .jpeg),
        ("JPEG: data ends on 0xFF", Array(F.jpeg().dropLast(1)), .jpeg),
        ("JPEG: SOS before SOF", jpegHead + F.jpegScan + [0xFF, 0xD9], .jpeg),
        ("JPEG: a second SOI", jpegHead + [0xFF, 0xD8] + F.jpegImage, .jpeg),
        ("JPEG: bytes between segments", jpegHead + [0x00] + F.jpegImage, .jpeg),
        ("JPEG: 0xFF00 outside a scan", jpegHead + [0xFF, 0x00] + F.jpegImage, .jpeg),
        ("PNG: signature only", F.pngSignature, .png),
        ("PNG: no IEND", F.pngSignature + F.pngHeader + F.pngData, .png),
        ("PNG: IHDR not first", F.pngSignature + F.pngData + F.pngHeader + F.pngEnd, .png),
        ("PNG: no IDAT", F.pngSignature + F.pngHeader + F.pngEnd, .png),
        ("PNG: chunk past the end", F.pngSignature + F.pngHeader + [0, 0, 1, 0] + Array("IDAT".utf8) + [1, 2, 3, 4, 5], .png),
        ("PNG: length above 2^31-1", F.pngSignature + F.pngHeader + [0xFF, 0xFF, 0xFF, 0xFF] + Array("IDAT".utf8) + [0, 0, 0, 0], .png),
        ("PNG: chunk type not letters", F.pngSignature + F.pngHeader + F.pngChunk("ID4T", []) + F.pngData + F.pngEnd, .png),
        ("GIF: header only", Array("GIF89a".utf8), .gif),
        ("GIF: no trailer", Array(F.gif().dropLast()), .gif),
        ("GIF: no image", F.gif([F.gifGraphicControl]), .gif),
        ("GIF: global colour table past the end", Array("GIF89a".utf8) + [1, 0, 1, 0, 0x87, 0, 0, 1, 2, 3], .gif),
        ("GIF: image descriptor cut off", F.gifHeader + [0x2C, 0, 0, 0], .gif),
        ("GIF: sub-block past the end", F.gifHeader + [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 200, 1, 2], .gif),
        ("GIF: unknown block", F.gifHeader + [0x42] + F.gifImage + [0x3B], .gif),
        ("WebP: RIFF size past the end", Array("RIFF".utf8) + [0xFF, 0, 0, 0] + Array("WEBP".utf8) + F.webpLossless, .webp),
        ("WebP: odd RIFF size", Array("RIFF".utf8) + [0x1F, 0, 0, 0] + Array("WEBP".utf8) + F.webpLossless + [0], .webp),
        ("WebP: RIFF size below 4", Array("RIFF".utf8) + [2, 0, 0, 0] + Array("WEBP".utf8), .webp),
        ("WebP: no chunks", F.webp([]), .webp),
        ("WebP: chunk past the RIFF size", F.webp([Array("VP8L".utf8) + [0x40, 0, 0, 0, 1, 2]]), .webp),
        ("WebP: first chunk not an image", F.webp([F.webpChunk("ICCP", [1, 2]), F.webpLossless]), .webp),
        ("WebP: VP8X too short", F.webp([F.webpChunk("VP8X", [0, 0]), F.webpLossless]), .webp),
        ("unknown type", Array("BM not a photo".utf8), nil),
        ("empty", [], nil),
        ]

    @Test("malformed photos throw, naming their type", arguments: malformedCases)
    func malformed(name: String, bytes: [UInt8], format: PhotoFormat?) {
        #expect(throws: PhotoScrubError.self, "\(name)") { try PhotoScrubber.scrub(bytes) }
        do {
            _ = try PhotoScrubber.scrub(bytes)
        } catch {
            #expect(error.format == format)
            #expect(error.description.hasPrefix(format.map { "the photo is not a well-formed \($0.rawValue) (" } ?? "the photo is not a"))
        }
    }

    static let validPhotos: [(name: String, bytes: [UInt8])] = [
        ("JPEG", F.jpeg([F.jfif, Leaks.exif, Needed.icc, Leaks.comment])),
        ("progressive JPEG", F.progressiveJPEG),
        ("PNG", F.png([F.pngChunk("tEXt", Array("k\0v".utf8)), F.pngChunk("sRGB", [0]), F.pngData])),
        ("GIF", F.gif([F.gifApplication("NETSCAPE2.0", [1, 0, 0]), F.gifComment("c"), F.gifGraphicControl, F.gifImage])),
        ("WebP", F.webp([F.webpExtended(flags: 0x2C), F.webpChunk("ICCP", [1]), F.webpLossless, F.webpChunk("EXIF", [1, 2, 3])])),
        ]

    @Test("random mutations of valid photos never crash: they throw, or give a photo no longer than theirs that scrubs to itself", arguments: validPhotos)
    func mutations(name: String, valid: [UInt8]) {
        var random = SplitMix64(seed: 0x5EED ^ UInt64(valid.count))
        var accepted = 0
        for _ in 0 ..< 3000 {
            var bytes = valid
            for _ in 0 ... random.int(in: 0 ... 3) {
                let position = random.int(in: 0 ... bytes.count - 1)
                switch random.int(in: 0 ... 5) {
                case 0: bytes[position] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes[position] ^= 1 << UInt8(random.int(in: 0 ... 7))
                case 2: bytes.removeSubrange(position...)
                case 3: bytes.insert(UInt8(truncatingIfNeeded: random.next()), at: position)
                case 4: bytes.remove(at: position)
                default: bytes[position] = [0x00, 0xFF, 0x7F, 0x80][random.int(in: 0 ... 3)]
                }
                if bytes.isEmpty { bytes = [0xFF] }
            }
            guard let output = try? PhotoScrubber.scrub(bytes) else { continue }
            accepted += 1
            #expect(PhotoFormat(magicBytesOf: output) == PhotoFormat(magicBytesOf: bytes))
            #expect(output.count <= bytes.count)
            #expect((try? PhotoScrubber.scrub(output)) == output, "\(name): not idempotent on \(bytes)")
        }
        #expect(accepted > 0, "\(name): no mutation was accepted")
    }
}
