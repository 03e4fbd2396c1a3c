import Hummingbird
import HTTPTypes
import NIOCore
import ScavengerBoard
import ScavengerCore
import ScavengerProtocol

/// MAP as GeoJSON (RFC 7946) for map libraries: `GET /map.geojson?bbox=w,s,e,n&zoom=z[&kind=k]`
/// is a FeatureCollection of Point features, one per cell (`count`, and the pin's `id`, `kind`,
/// `body`, `at`, `photo` when the cell holds one), and `GET /pins/ID.geojson` one live pin as a
/// Feature. Coordinates are `[lon, lat]`. Each answer has an `ETag` of its bytes (`304` on a
/// matching `If-None-Match`), `Cache-Control: no-cache`, and cross-origin reads as
/// `--allowed-origins` says.
enum MapGeoJSON {
    static let contentType = "application/geo+json"

    /// Why a query was refused: a one-line message for a `400`.
    struct Refusal: Error, Equatable {
        let message: String
    }

    /// The MAP request a query asks for: `bbox` as west,south,east,north (GeoJSON's order),
    /// `zoom`, an optional `kind` (text or photo) and `limit`.
    static func request(bbox: String?, zoom: String?, kind: String?, limit: String? = nil) -> Result<MapRequest, Refusal> {
        guard let bbox else { return .failure(Refusal(message: "bbox=west,south,east,north is required")) }
        let parts = bbox.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
        guard parts.count == 4, parts.allSatisfy({ $0?.isFinite == true }) else {
            return .failure(Refusal(message: "bbox must be four numbers: west,south,east,north"))
        }
        guard let zoom, let zoomValue = Int(zoom) else { return .failure(Refusal(message: "zoom must be a whole number within [0, 22]")) }
        var request = MapRequest(south: parts[1]!, west: parts[0]!, north: parts[3]!, east: parts[2]!, zoom: zoomValue)
        if let kind {
            guard let value = PinKind(rawValue: kind) else { return .failure(Refusal(message: "kind must be text or photo")) }
            request.kind = value
        }
        if let limit {
            guard let value = Int(limit) else { return .failure(Refusal(message: "limit must be a whole number within [1, 2000]")) }
            request.limit = value
        }
        if let problem = request.problem {
            return .failure(Refusal(message: problem))
        }
        return .success(request)
    }

    /// The FeatureCollection of a MAP answer.
    static func featureCollection(_ answer: MapAnswer<Pin>) -> JSON {
        .object([
            ("type", .string("FeatureCollection")),
            ("features", .array(answer.cells.map { cell in
                let box = cell.tile.box
                var properties: [(String, JSON)] = [("count", .int(cell.count))]
                if let pin = cell.pin { properties += pinProperties(pin) }
                return .object([
                    ("type", .string("Feature")),
                    ("bbox", .array([.double(box.west), .double(box.south), .double(box.east), .double(box.north)])),
                    ("geometry", point(lat: cell.lat, lon: cell.lon)),
                    ("properties", .object(properties)),
                ])
            })),
            ("total", .int(answer.total)),
        ])
    }

    /// One pin as a Feature.
    static func feature(_ pin: Pin) -> JSON {
        .object([
            ("type", .string("Feature")),
            ("id", .string(pin.id)),
            ("geometry", point(lat: pin.lat, lon: pin.lon)),
            ("properties", .object([("count", .int(1))] + pinProperties(pin))),
        ])
    }

    static func point(lat: Double, lon: Double) -> JSON {
        .object([("type", .string("Point")), ("coordinates", .array([.double(lon), .double(lat)]))])
    }

    static func pinProperties(_ pin: Pin) -> [(String, JSON)] {
        [
            ("id", .string(pin.id)), ("kind", .string(pin.kind.rawValue)), ("body", .string(pin.text)),
            ("at", .string(pin.created.rfc3339)),
            ("photo", pin.photo.map { .object([("mime", .string($0.mime)), ("bytes", .int($0.bytes))]) } ?? .null),
        ]
    }

    /// A GeoJSON answer: `200` with its ETag, or `304` when the client holds it.
    static func response(_ json: JSON, to request: Request, allowed: Set<String>?) -> Response {
        var bytes: [UInt8] = []
        json.encode(into: &bytes)
        let tag = StaticAsset.etag(of: bytes)
        var headers: HTTPFields = [.contentType: contentType, .eTag: tag, .cacheControl: "no-cache"]
        CrossOrigin.allow(&headers, origin: request.headers[.origin], allowed: allowed)
        if StaticAsset.matches(request.headers[.ifNoneMatch], tag) {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func refusal(_ status: HTTPResponse.Status, _ message: String, to request: Request, allowed: Set<String>?) -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8", .cacheControl: "no-store"]
        CrossOrigin.allow(&headers, origin: request.headers[.origin], allowed: allowed)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: message + "\n")))
    }

    static func addRoutes<Context: RequestContext>(to router: Router<Context>, board: Board, allowed: Set<String>?) {
        router.get("/map.geojson") { request, _ -> Response in
            let query = request.uri.queryParameters
            let parsed = Self.request(
                bbox: query.get("bbox"), zoom: query.get("zoom"), kind: query.get("kind"), limit: query.get("limit"))
            switch parsed {
            case .failure(let refused):
                return refusal(.badRequest, refused.message, to: request, allowed: allowed)
            case .success(let mapRequest):
                do throws(BoardError) {
                    return response(featureCollection(try board.map(mapRequest)), to: request, allowed: allowed)
                } catch {
                    let status: HTTPResponse.Status = error.code == .badArgument ? .badRequest : .serviceUnavailable
                    return refusal(status, error.message, to: request, allowed: allowed)
                }
            }
        }
        router.get("/pins/:file") { request, context -> Response in
            let file = context.parameters.get("file") ?? ""
            guard file.hasSuffix(".geojson") else { return refusal(.notFound, "no such pin", to: request, allowed: allowed) }
            let id = String(file.dropLast(".geojson".count))
            do throws(BoardError) {
                return response(feature(try await board.pin(id: id)), to: request, allowed: allowed)
            } catch {
                switch error.code {
                case .notFound, .badArgument: return refusal(.notFound, "no such pin", to: request, allowed: allowed)
                default: return refusal(.serviceUnavailable, error.message, to: request, allowed: allowed)
                }
            }
        }
    }
}
