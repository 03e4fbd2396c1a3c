import Foundation
import NIOCore
import ScavengerBoard
import ScavengerHTTP
import ScavengerTestSupport
import Testing

// The time limit only guards against a hang, and it counts the wait for a TestEnvironment.
@Suite("GeoJSON on the HTTP port: /map.geojson and /pins/ID.geojson", .timeLimit(.minutes(10)))
struct MapGeoJSONTests {
    static func json(_ body: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }

    @Test("a FeatureCollection of cells in [lon, lat] order with ETag, 304, CORS; one pin as a Feature; 400 and 404")
    func geoJSON() async throws {
        try await TestEnvironment.make(prefix: "http").use { environment in
            try await withHTTPServer(board: environment.board, configure: { $0.allowedOrigins = ["https://maps.example"] }) { http, tcp, _ in
                let token = try #require(WebSocketConversation.field(
                    "token", in: try await tcpCall(tcp, "REGISTER carol carol@example.org password1")))
                let posted = try await tcpCall(tcp, "AUTH \(token)\nPOST 48.8566 2.3522 \"a pin\"\nPOST 48.86 2.36 another", replies: 3)
                // The last pin's id ("another", at 48.86 2.36).
                let id = try #require(WebSocketConversation.field("id", in: posted))

                let origin = "Origin: https://maps.example"
                let response = try await httpRequest(http, "GET", "/map.geojson?bbox=2.35,48.855,2.362,48.861&zoom=18", headers: [origin])
                #expect(response.status == 200)
                #expect(header("content-type", in: response.head) == "application/geo+json")
                #expect(header("access-control-allow-origin", in: response.head) == "https://maps.example")
                let collection = try Self.json(response.body)
                #expect(collection["type"] as? String == "FeatureCollection")
                let features = try #require(collection["features"] as? [[String: Any]])
                #expect(features.count == 2)
                let single = try #require(features.first { (($0["properties"] as? [String: Any])?["id"] as? String) == id })
                let geometry = try #require(single["geometry"] as? [String: Any])
                #expect(geometry["type"] as? String == "Point")
                #expect(geometry["coordinates"] as? [Double] == [2.36, 48.86])
                let properties = try #require(single["properties"] as? [String: Any])
                #expect(properties["count"] as? Int == 1 && properties["kind"] as? String == "text")
                #expect(properties["body"] as? String == "another" && properties["at"] is String && properties["photo"] is NSNull)

                let etag = try #require(header("etag", in: response.head))
                let again = try await httpRequest(http, "GET", "/map.geojson?bbox=2.35,48.855,2.362,48.861&zoom=18", headers: ["If-None-Match: \(etag)"])
                #expect(again.status == 304)
                // Zoomed out, both pins are one cell: a count, no pin.
                let zoomedOut = try Self.json(try await httpGet(http, "/map.geojson?bbox=-180,-85,180,85&zoom=2").body)
                let cells = try #require(zoomedOut["features"] as? [[String: Any]])
                #expect(cells.count == 1 && (cells[0]["properties"] as? [String: Any])?["count"] as? Int == 2)
                #expect(zoomedOut["total"] as? Int == 2)
                #expect(try Self.json(try await httpGet(http, "/map.geojson?bbox=-180,-85,180,85&zoom=2&kind=photo").body)["total"] as? Int == 0)

                for bad in ["/map.geojson", "/map.geojson?bbox=1,2,3&zoom=3", "/map.geojson?bbox=0,0,1,1&zoom=23",
                            "/map.geojson?bbox=0,0,1,1", "/map.geojson?bbox=0,91,1,92&zoom=3", "/map.geojson?bbox=0,0,1,1&zoom=3&kind=x",
                            "/map.geojson?bbox=-180,-80,180,80&zoom=14", "/map.geojson?bbox=a,0,1,1&zoom=3"] {
                    let refused = try await httpGet(http, bad)
                    #expect(refused.status == 400, "\(bad): \(refused.body)")
                    #expect(!refused.body.isEmpty)
                }

                let pin = try await httpRequest(http, "GET", "/pins/\(id).geojson")
                #expect(pin.status == 200 && header("content-type", in: pin.head) == "application/geo+json")
                let feature = try Self.json(pin.body)
                #expect(feature["type"] as? String == "Feature" && feature["id"] as? String == id)
                #expect((feature["geometry"] as? [String: Any])?["coordinates"] as? [Double] == [2.36, 48.86])
                #expect(try await httpGet(http, "/pins/\(id)").status == 404)
                #expect(try await httpGet(http, "/pins/pnope.geojson").status == 404)
                _ = try await tcpCall(tcp, "AUTH \(token)\nDELETE \(id)", replies: 2)
                #expect(try await httpGet(http, "/pins/\(id).geojson").status == 404)
            }
        }
    }
}
