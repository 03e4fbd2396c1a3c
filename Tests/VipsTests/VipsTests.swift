import ScavengerTestSupport
import Testing
import Vips

@Suite("Vips")
struct VipsTests {
    let png = TestImages.png(width: 64, height: 32)

    @Test("reads a PNG's header, and a JPEG's made from it")
    func headers() throws {
        let header = try Vips.header(of: png)
        #expect(header == ImageHeader(width: 64, height: 32, interlaced: false, format: .png))
        let jpeg = try Vips.thumbnail(of: png, longestEdge: 64, as: .jpeg)
        #expect(Array(jpeg.prefix(2)) == [0xFF, 0xD8])
        #expect(try Vips.header(of: jpeg) == ImageHeader(width: 64, height: 32, interlaced: false, format: .jpeg))
    }

    @Test("a thumbnail fits the longest edge, keeps the aspect and is never enlarged")
    func thumbnailSizes() throws {
        let small = try Vips.thumbnail(of: png, longestEdge: 16, as: .jpeg)
        let header = try Vips.header(of: small)
        #expect((header.width, header.height) == (16, 8))
        let same = try Vips.header(of: Vips.thumbnail(of: png, longestEdge: 1_280, as: .jpeg))
        #expect((same.width, same.height) == (64, 32))
    }

    @Test("WebP out, and WebP in")
    func webp() throws {
        let webp = try Vips.thumbnail(of: png, longestEdge: 32, as: .webp)
        #expect(Array(webp.prefix(4)) == Array("RIFF".utf8))
        let header = try Vips.header(of: webp)
        #expect(header.format == .webp)
        #expect((header.width, header.height) == (32, 16))
        let again = try Vips.header(of: Vips.thumbnail(of: webp, longestEdge: 16, as: .jpeg))
        #expect((again.width, again.height) == (16, 8))
    }

    @Test("an EXIF orientation is applied; the GPS position is in no output, and a JPEG has no EXIF at all")
    func exifRotatedAndStripped() throws {
        let jpeg = try Vips.thumbnail(of: png, longestEdge: 64, as: .jpeg)
        let tagged = TestImages.inserting(TestImages.exifSegment(orientation: 6), into: jpeg)
        #expect(TestImages.contains(tagged, "Exif"))
        #expect(try Vips.header(of: tagged).width == 32)
        // Orientation 6: shown turned a quarter, so 64 × 32 stored is 32 × 64 shown.
        for encoding in ThumbnailEncoding.allCases {
            let out = try Vips.thumbnail(of: tagged, longestEdge: 64, as: encoding)
            let header = try Vips.header(of: out)
            #expect((header.width, header.height) == (32, 64), "\(encoding)")
            // No GPS IFD pointer (tag 0x8825) in either byte order, nothing of the input's EXIF.
            #expect(!TestImages.contains(out, [0x25, 0x88, 0x04, 0x00]) && !TestImages.contains(out, [0x88, 0x25, 0x00, 0x04]), "\(encoding)")
            #expect(!TestImages.contains(out, "MM\0*"), "\(encoding)")
        }
        // 8.14.1's WebP saver still writes a minimal EXIF it rebuilds (resolution, orientation 1):
        // the board walks it out (PhotoSizeMaker); the JPEG saver's `strip` works.
        #expect(!TestImages.contains(try Vips.thumbnail(of: tagged, longestEdge: 64, as: .jpeg), "Exif"))
    }

    @Test("a lottapixel JPEG (a tiny file claiming 64,250² pixels) shows its claimed size without decoding")
    func lottapixel() throws {
        let jpeg = try Vips.thumbnail(of: png, longestEdge: 64, as: .jpeg)
        let bomb = TestImages.claiming(width: 64_250, height: 64_250, jpeg: jpeg)
        #expect(bomb.count < 10_000)
        let header = try Vips.header(of: bomb)
        #expect((header.width, header.height) == (64_250, 64_250))
        let pngBomb = TestImages.png(width: 4, height: 4, headerWidth: 100_000, headerHeight: 100_000)
        let pngHeader = try Vips.header(of: pngBomb)
        #expect((pngHeader.width, pngHeader.height) == (100_000, 100_000))
    }

    @Test("a truncated JPEG makes no thumbnail; what no allowed loader takes has no header")
    func refusals() throws {
        let jpeg = try Vips.thumbnail(of: TestImages.png(width: 256, height: 256), longestEdge: 256, as: .jpeg)
        let truncated = Array(jpeg.prefix(jpeg.count / 2))
        #expect(throws: VipsError.self) { try Vips.thumbnail(of: truncated, longestEdge: 64, as: .jpeg) }
        #expect(throws: VipsError.self) { try Vips.header(of: Array("not an image at all".utf8)) }
        // A TIFF and an SVG: loaders that exist but are not allowed.
        #expect(throws: VipsError.self) { try Vips.header(of: Array("MM\0*\0\0\0\u{8}".utf8) + [UInt8](repeating: 0, count: 64)) }
        #expect(throws: VipsError.self) {
            try Vips.header(of: Array("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"></svg>".utf8))
        }
        #expect(throws: VipsError.self) { try Vips.header(of: []) }
    }
}
