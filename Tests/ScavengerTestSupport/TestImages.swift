/// Images of any size made in the test, byte by byte: a PNG of a colour gradient (stored
/// deflate blocks), an EXIF segment with an orientation and a GPS position, a JPEG that claims
/// other dimensions than it holds (a "lottapixel" bomb).
public enum TestImages {
    /// An RGB PNG of `width` × `height` pixels; its header may claim other dimensions.
    public static func png(width: Int, height: Int, headerWidth: Int? = nil, headerHeight: Int? = nil) -> [UInt8] {
        var raw: [UInt8] = []
        for y in 0 ..< height {
            raw.append(0)
            for x in 0 ..< width {
                raw.append(UInt8(x * 255 / max(width - 1, 1)))
                raw.append(UInt8(y * 255 / max(height - 1, 1)))
                raw.append(128)
            }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        header += bigEndian32(headerWidth ?? width)
        header += bigEndian32(headerHeight ?? height)
        header += [8, 2, 0, 0, 0]
        png += chunk("IHDR", header)
        png += chunk("IDAT", zlibStored(raw))
        png += chunk("IEND", [])
        return png
    }

    public static func bigEndian32(_ value: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
         UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return bigEndian32(data.count) + body + bigEndian32(Int(crc32(body)))
    }

    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0 ..< 8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    public static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let last: UInt8 = offset + count == data.count ? 1 : 0
            out.append(last)
            out += [UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset ..< offset + count]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + bigEndian32(Int(b << 16 | a))
    }

    /// An APP1 Exif segment (big-endian TIFF) with an orientation and a GPS latitude.
    public static func exifSegment(orientation: UInt16) -> [UInt8] {
        func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
        func u32(_ v: Int) -> [UInt8] { bigEndian32(v) }
        // IFD0 at 8: two entries (Orientation, GPS IFD pointer), next IFD 0.
        var tiff: [UInt8] = Array("MM".utf8) + u16(42) + u32(8)
        let ifd0Size = 2 + 2 * 12 + 4
        let gpsOffset = 8 + ifd0Size
        tiff += u16(2)
        tiff += u16(0x0112) + u16(3) + u32(1) + u16(Int(orientation)) + u16(0)
        tiff += u16(0x8825) + u16(4) + u32(1) + u32(gpsOffset)
        tiff += u32(0)
        // GPS IFD: GPSLatitudeRef "N", GPSLatitude 3 rationals (48/1, 51/1, 30/1).
        let gpsSize = 2 + 2 * 12 + 4
        let rationals = gpsOffset + gpsSize
        tiff += u16(2)
        tiff += u16(0x0001) + u16(2) + u32(2) + Array("N".utf8) + [0, 0, 0]
        tiff += u16(0x0002) + u16(5) + u32(3) + u32(rationals)
        tiff += u32(0)
        tiff += u32(48) + u32(1) + u32(51) + u32(1) + u32(30) + u32(1)
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        return [0xFF, 0xE1] + u16(payload.count + 2) + payload
    }

    /// `jpeg` with `segment` right after its SOI marker.
    public static func inserting(_ segment: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
        Array(jpeg[0 ..< 2]) + segment + Array(jpeg[2...])
    }

    /// `jpeg` with its frame header (SOF0/SOF2) claiming `width` × `height`.
    public static func claiming(width: Int, height: Int, jpeg: [UInt8]) -> [UInt8] {
        var bytes = jpeg
        var index = 2
        while index + 9 < bytes.count {
            guard bytes[index] == 0xFF else { break }
            let marker = bytes[index + 1]
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            if marker == 0xC0 || marker == 0xC2 {
                bytes[index + 5] = UInt8(height >> 8)
                bytes[index + 6] = UInt8(height & 0xFF)
                bytes[index + 7] = UInt8(width >> 8)
                bytes[index + 8] = UInt8(width & 0xFF)
                return bytes
            }
            index += 2 + length
        }
        return bytes
    }

    /// Whether `needle` occurs in `bytes`: only to show what a test expects to be gone.
    public static func contains(_ bytes: [UInt8], _ needle: String) -> Bool {
        contains(bytes, Array(needle.utf8))
    }

    /// Whether `pattern` occurs in `bytes`.
    public static func contains(_ bytes: [UInt8], _ pattern: [UInt8]) -> Bool {
        guard bytes.count >= pattern.count else { return false }
        return (0 ... bytes.count - pattern.count).contains { bytes[$0 ..< $0 + pattern.count].elementsEqual(pattern) }
    }
}
