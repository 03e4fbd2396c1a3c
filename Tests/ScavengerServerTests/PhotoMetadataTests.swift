import Base64
import Postgres
import ScavengerTestSupport
import Testing

@Suite("Photos lose their metadata before they are stored, over TCP with PostgreSQL")
struct PhotoMetadataTests {
    /// Pillow's progressive JPEG with EXIF (GPS, camera serial, orientation 6), ICC and a comment,
    /// and what must come back: SOI and JFIF, an EXIF holding only the orientation, the ICC
    /// profile, then the tables and scans untouched.
    static let camera = PhotoFixtures.progressiveJPEG
    static let cleaned: [UInt8] = {
        let minimalExif = [0xFF, 0xE1, 0, 34] + Array("Exif\0\0".utf8) + [0x4D, 0x4D, 0, 42, 0, 0, 0, 8, 0, 1]
            + [0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
        return Array(camera[0 ..< 20]) + minimalExif + Array(camera[260 ..< 344]) + Array(camera[360...])
    }()

    @Test("POSTPHOTO of a JPEG with GPS EXIF: PHOTO returns it without, still a JPEG, and every size is the cleaned one")
    func jpegWithGPS() async throws {
        try await withDatabaseServer { address, environment in
            try await converse(address) { client in
                try await client.register("tourist")
                let pin = try await client.ok("POSTPHOTO 52.52 13.4 \(Base64.encode(Self.camera)) CAPTION \(quoted("from my window"))")["pin"]
                #expect(pin["photo"]["bytes"].int == Self.cleaned.count)
                #expect(Self.cleaned.count < Self.camera.count)
                let id = try pin["id"].string
                let photo = try await client.ok("PHOTO \(id)")
                #expect(try photo["mime"].string == "image/jpeg")
                let returned = try Base64.decode(photo["data"].string)
                #expect(returned == Self.cleaned)
                for leak in ["ScavengerCam", "Model X", "SN-0123456789", "shot at home"] {
                    #expect(!PhotoFixtures.contains(returned, leak), "\(leak) came back")
                }
                // Still a JPEG: SOI, JFIF, the orientation-only EXIF, ICC, tables, a progressive frame, a scan… EOI.
                #expect(PhotoFixtures.jpegMarkersBeforeScan(returned) == [0xD8, 0xE0, 0xE1, 0xE2, 0xDB, 0xDB, 0xC2, 0xC4, 0xC4, 0xDD, 0xDA])
                #expect(try await client.ok("GET \(id)")["pin"]["photo"]["bytes"].int == Self.cleaned.count)
                let stored = try await environment.pool.query("SELECT octet_length(data) FROM photos WHERE pin_id = \(id)")
                #expect(try stored[0].int(0) as Int == Self.cleaned.count)
            }
        }
    }

    @Test("a PNG loses its text and eXIf chunks; a JPEG without orientation loses its EXIF whole")
    func otherPhotos() async throws {
        let png = PhotoFixtures.png([
            PhotoFixtures.pngChunk("tEXt", Array("Location\052.52 13.40".utf8)),
            PhotoFixtures.pngChunk("eXIf", Array(PhotoFixtures.exifWithGPS.dropFirst(6))), PhotoFixtures.pngData,
        ])
        let noOrientation = PhotoFixtures.jpeg([
            PhotoFixtures.jfif,
            PhotoFixtures.jpegSegment(0xE1, Array("http://ns.adobe.com/xap/1.0/\0<exif:GPSLatitude>52,31N".utf8)),
            PhotoFixtures.jpegSegment(0xFE, Array("home".utf8)),
        ])
        try await withDatabaseServer { address, _ in
            try await converse(address) { client in
                try await client.register("tourist")
                for (input, expected) in [(png, PhotoFixtures.png()), (noOrientation, PhotoFixtures.jpeg())] {
                    let pin = try await client.ok("POSTPHOTO 1 1 \(Base64.encode(input))")["pin"]
                    #expect(pin["photo"]["bytes"].int == expected.count)
                    let photo = try await client.ok("PHOTO \(pin["id"].string)")
                    let returned = try Base64.decode(photo["data"].string)
                    #expect(returned == expected)
                }
            }
        }
    }
}
