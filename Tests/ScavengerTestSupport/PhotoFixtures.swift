import Foundation

/// Small valid images of each type and the pieces to build variants of them, with a walker of
/// JPEG markers of their own (not the scrubber's) to check results by.
public enum PhotoFixtures {
    // MARK: JPEG

    /// A marker segment: 0xFF, the marker, the length (payload + 2), the payload.
    public static func jpegSegment(_ marker: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, marker, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }

    /// JFIF 1.01 APP0, no thumbnail.
    public static let jfif = jpegSegment(0xE0, Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0])

    /// The tables and frame header of an 8×8 grey baseline JPEG: all-ones DQT, SOF0, and DHTs of
    /// one code each.
    public static let jpegTables: [UInt8] =
        jpegSegment(0xDB, [0] + [UInt8](repeating: 1, count: 64))
        + jpegSegment(0xC0, [8, 0, 8, 0, 8, 1, 1, 0x11, 0])
        + jpegSegment(0xC4, [0x00, 1] + [UInt8](repeating: 0, count: 15) + [0])
        + jpegSegment(0xC4, [0x10, 1] + [UInt8](repeating: 0, count: 15) + [0])

    /// Its scan: SOS and one block of mid-grey.
    public static let jpegScan = jpegSegment(0xDA, [1, 1, 0, 0, 0x3F, 0]) + [0x3F]

    /// What follows SOI and the APPn segments: tables, scan, EOI.
    public static let jpegImage = jpegTables + jpegScan + [0xFF, 0xD9]

    /// SOI, `segments`, then ``jpegImage``.
    public static func jpeg(_ segments: [[UInt8]] = [jfif]) -> [UInt8] {
        [0xFF, 0xD8] + segments.joined() + jpegImage
    }

    /// An Exif APP1 payload as Pillow writes it (big-endian TIFF): Make "ScavengerCam", Model
    /// "Model X", Orientation 6, an Exif IFD with BodySerialNumber "SN-0123456789", and a GPS IFD
    /// at 52°31'12.5" N 13°24'3.25" E.
    public static let exifWithGPS = decode("""
        RXhpZgAATU0AKgAAAAgABQEPAAIAAAANAAAASgEQAAIAAAAIAAAAWAESAAMAAAABAAYAAIdpAAQAAAABAAAAYIglAAQA\
        AAABAAAAgAAAAABTY2F2ZW5nZXJDYW0AAE1vZGVsIFgAAAGkMQACAAAADgAAAHIAAAAAU04tMDEyMzQ1Njc4OQAABAAB\
        AAIAAAACTgAAAAACAAUAAAADAAAAtgADAAIAAAACRQAAAAAEAAUAAAADAAAAzgAAAAAAAAA0AAAAAQAAAB8AAAABAAAA\
        GQAAAAIAAAANAAAAAQAAABgAAAABAAAADQAAAAQ=
        """)

    /// A 16×16 colour progressive JPEG from Pillow with restart markers after every block:
    /// JFIF APP0, ``exifWithGPS`` in APP1, a 66-byte (fake) ICC profile in APP2, COM "shot at
    /// home", then two DQT, SOF2, two DHT, DRI and ten scans with tables between them.
    public static let progressiveJPEG = decode("""
        /9j/4AAQSkZJRgABAQAAAQABAAD/4QDuRXhpZgAATU0AKgAAAAgABQEPAAIAAAANAAAASgEQAAIAAAAIAAAAWAESAAMA\
        AAABAAYAAIdpAAQAAAABAAAAYIglAAQAAAABAAAAgAAAAABTY2F2ZW5nZXJDYW0AAE1vZGVsIFgAAAGkMQACAAAADgAA\
        AHIAAAAAU04tMDEyMzQ1Njc4OQAABAABAAIAAAACTgAAAAACAAUAAAADAAAAtgADAAIAAAACRQAAAAAEAAUAAAADAAAA\
        zgAAAAAAAAA0AAAAAQAAAB8AAAABAAAAGQAAAAIAAAANAAAAAQAAABgAAAABAAAADQAAAAT/4gBSSUNDX1BST0ZJTEUA\
        AQFmYWtlLWljYy1wcm9maWxlLWJ5dGVzZmFrZS1pY2MtcHJvZmlsZS1ieXRlc2Zha2UtaWNjLXByb2ZpbGUtYnl0ZXP/\
        /gAOc2hvdCBhdCBob21l/9sAQwADAgIDAgIDAwMDBAMDBAUIBQUEBAUKBwcGCAwKDAwLCgsLDQ4SEA0OEQ4LCxAWEBET\
        FBUVFQwPFxgWFBgSFBUU/9sAQwEDBAQFBAUJBQUJFA0LDRQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQU\
        FBQUFBQUFBQUFBQUFBQU/8IAEQgAEAAQAwEiAAIRAQMRAf/EABUAAQEAAAAAAAAAAAAAAAAAAAYH/8QAFQEBAQAAAAAA\
        AAAAAAAAAAAAAQP/3QAEAAH/2gAMAwEAAhADEAAAAZUzYs6n/8QAFhAAAwAAAAAAAAAAAAAAAAAAAAQF/9oACAEBAAEF\
        AlZR/9BSUf/RUlH/0lZR/8QAGBEAAgMAAAAAAAAAAAAAAAAAAAUGITH/2gAIAQMBAT8Bjb7LP//EABcRAAMBAAAAAAAA\
        AAAAAAAAAAAEBWH/2gAIAQIBAT8Bcsaf/8QAFRABAQAAAAAAAAAAAAAAAAAAADH/2gAIAQEABj8Cj//Qj//Rj//Sj//E\
        ABUQAQEAAAAAAAAAAAAAAAAAAAAx/9oACAEBAAE/IZv/0Iv/0Yv/0pv/2gAMAwEAAgADAAAAEAv/xAAVEQEBAAAAAAAA\
        AAAAAAAAAAAAof/aAAgBAwEBPxCe/8QAFREBAQAAAAAAAAAAAAAAAAAAADH/2gAIAQIBAT8Qsf/EABUQAQEAAAAAAAAA\
        AAAAAAAAAADx/9oACAEBAAE/EJT/0IT/0YT/0pT/2Q==
        """)

    /// The markers of a JPEG's segments from SOI up to its first SOS (standalone markers
    /// included), if it starts with SOI, every length fits, and it ends with EOI; nil otherwise.
    public static func jpegMarkersBeforeScan(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8, bytes[bytes.count - 2] == 0xFF,
              bytes[bytes.count - 1] == 0xD9
        else { return nil }
        var markers: [UInt8] = [0xD8]
        var position = 2
        while position + 1 < bytes.count {
            guard bytes[position] == 0xFF else { return nil }
            let marker = bytes[position + 1]
            if marker == 0xFF { position += 1; continue }
            markers.append(marker)
            if marker == 0x01 || (0xD0 ... 0xD7).contains(marker) { position += 2; continue }
            guard position + 4 <= bytes.count else { return nil }
            let length = Int(bytes[position + 2]) << 8 | Int(bytes[position + 3])
            guard length >= 2, position + 2 + length <= bytes.count else { return nil }
            if marker == 0xDA { return markers }
            position += 2 + length
        }
        return nil
    }

    // MARK: PNG

    /// A chunk: length, type, data, CRC-32 of type and data.
    public static func pngChunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        return bigEndian(UInt32(data.count)) + typeBytes + data + bigEndian(crc32(typeBytes + data))
    }

    public static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// IHDR of a 1×1 8-bit RGBA image.
    public static let pngHeader = pngChunk("IHDR", [0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0])

    /// IDAT of that image: one red pixel, zlib-compressed.
    public static let pngData = pngChunk("IDAT", [0x78, 0xDA, 0x63, 0x64, 0x60, 0xF8, 0x5F, 0x0F, 0x00, 0x02, 0x87, 0x01, 0x80])

    public static let pngEnd = pngChunk("IEND", [])

    /// Signature, IHDR, `chunks` (``pngData`` by default), IEND.
    public static func png(_ chunks: [[UInt8]] = [pngData]) -> [UInt8] {
        pngSignature + pngHeader + chunks.joined() + pngEnd
    }

    /// CRC-32 (ISO-HDLC), as PNG's chunks carry it.
    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0 ..< 8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    // MARK: GIF

    /// GIF89a header, a 1×1 screen and a two-colour global table.
    public static let gifHeader: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF]

    /// An image descriptor and its LZW data: one black pixel.
    public static let gifImage: [UInt8] = [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0]

    /// A graphic control extension.
    public static let gifGraphicControl: [UInt8] = [0x21, 0xF9, 4, 0, 0, 0, 0, 0]

    /// An application extension: an 11-byte identifier block, then `data` in sub-blocks.
    public static func gifApplication(_ identifier: String, _ data: [UInt8]) -> [UInt8] {
        [0x21, 0xFF, 11] + Array(identifier.utf8) + subBlocks(data)
    }

    /// A comment extension.
    public static func gifComment(_ text: String) -> [UInt8] {
        [0x21, 0xFE] + subBlocks(Array(text.utf8))
    }

    /// `data` cut into sub-blocks of at most 255 bytes, then the zero terminator.
    public static func subBlocks(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        while start < data.count {
            let end = min(start + 255, data.count)
            out += [UInt8(end - start)] + data[start ..< end]
            start = end
        }
        return out + [0]
    }

    /// Header, `blocks` (graphic control and image by default), trailer.
    public static func gif(_ blocks: [[UInt8]] = [gifGraphicControl, gifImage]) -> [UInt8] {
        gifHeader + blocks.joined() + [0x3B]
    }

    // MARK: WebP

    /// A chunk: FourCC, little-endian size, data, a zero pad byte when the size is odd.
    public static func webpChunk(_ fourCC: String, _ data: [UInt8]) -> [UInt8] {
        let size = UInt32(data.count)
        return Array(fourCC.utf8) + (0 ..< 4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) } + data
            + (data.count % 2 == 1 ? [0] : [])
    }

    /// A VP8L chunk of a 1×1 lossless image from Pillow (17 bytes: padded).
    public static let webpLossless = webpChunk("VP8L", [
        0x2F, 0, 0, 0, 0, 0x07, 0x50, 0x85, 0x22, 0x57, 0xA1, 0xFF, 0x81, 0x88, 0xE8, 0x7F, 0,
    ])

    /// A VP8X chunk of a 1×1 canvas with these flags.
    public static func webpExtended(flags: UInt8) -> [UInt8] {
        webpChunk("VP8X", [flags, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    }

    /// RIFF header with the right size, WEBP, `chunks`.
    public static func webp(_ chunks: [[UInt8]] = [webpLossless]) -> [UInt8] {
        let body = Array("WEBP".utf8) + chunks.joined()
        let size = UInt32(body.count)
        return Array("RIFF".utf8) + (0 ..< 4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) } + body
    }

    // MARK: Helpers

    /// Whether `needle` occurs anywhere in `bytes`.
    public static func contains(_ bytes: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard needle.count <= bytes.count else { return false }
        return (0 ... bytes.count - needle.count).contains { bytes[$0 ..< $0 + needle.count].elementsEqual(needle) }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        (0 ..< 4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
    }

    static func decode(_ base64: String) -> [UInt8] {
        guard let data = Data(base64Encoded: base64) else { preconditionFailure("a fixture is not base64") }
        return Array(data)
    }
}
