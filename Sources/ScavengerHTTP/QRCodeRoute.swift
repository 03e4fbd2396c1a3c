import Foundation
import Hummingbird
import HTTPTypes
import NIOCore
import ScavengerBoard

/// `POST /qr`: a QR code drawn as SVG, for the host's printable sheet of a hunt's code stops.
///
/// The daemon keeps a stop's code only hashed, so the host's browser sends each code it kept,
/// with the stop's title as the caption: `{"text": str, "title": str}` (`application/json`,
/// title optional). The code travels in the body only, never in a URL, and is never logged; the
/// answer (`image/svg+xml`) is not to be cached. Bounded: the body at most ``maxBodyBytes``,
/// the text 1 to ``maxTextBytes`` bytes, the title at most ``maxTitleBytes``.
enum QRCodeRoute {
    static let maxBodyBytes = 2048
    /// A stop's code is 4–64 characters; a little room for longer text such as a URL.
    static let maxTextBytes = 256
    /// A stop's title is at most 80 characters (up to 4 bytes each).
    static let maxTitleBytes = 320

    struct Input: Decodable {
        let text: String
        let title: String?
    }

    /// Why a request was refused: its status and a one-line message (which never quotes the text).
    struct Refusal: Error, Equatable {
        let status: HTTPResponse.Status
        let message: String
    }

    /// The SVG of a request body, or why not.
    static func svg(contentType: String?, body: ByteBuffer) -> Result<String, Refusal> {
        let mediaType = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard mediaType == "application/json" else {
            return .failure(Refusal(status: .unsupportedMediaType, message: "send {\"text\": …, \"title\": …} as application/json"))
        }
        let input: Input
        do {
            input = try JSONDecoder().decode(Input.self, from: Data(body.readableBytesView))
        } catch {
            return .failure(Refusal(status: .badRequest, message: "the body is not {\"text\": string, \"title\": string}"))
        }
        guard !input.text.isEmpty else { return .failure(Refusal(status: .badRequest, message: "the text is empty")) }
        guard input.text.utf8.count <= maxTextBytes else {
            return .failure(Refusal(status: .contentTooLarge, message: "the text is longer than \(maxTextBytes) bytes"))
        }
        guard (input.title?.utf8.count ?? 0) <= maxTitleBytes else {
            return .failure(Refusal(status: .contentTooLarge, message: "the title is longer than \(maxTitleBytes) bytes"))
        }
        do throws(BoardError) {
            return .success(try Board.clueCodeSVG(input.text, title: input.title))
        } catch {
            // Cannot happen within the bounds above; the message never holds the text.
            return .failure(Refusal(status: .badRequest, message: error.message))
        }
    }

    static func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        router.post("/qr") { request, _ -> Response in
            var request = request
            let result: Result<String, Refusal>
            do {
                // Reads no more than the bound, whatever Content-Length says.
                let body = try await request.collectBody(upTo: maxBodyBytes)
                result = svg(contentType: request.headers[.contentType], body: body)
            } catch is NIOTooManyBytesError {
                result = .failure(Refusal(status: .contentTooLarge, message: "the body is longer than \(maxBodyBytes) bytes"))
            }
            switch result {
            case .success(let svg):
                return Response(status: .ok, headers: [
                    .contentType: "image/svg+xml; charset=utf-8", .cacheControl: "no-store",
                ], body: ResponseBody(byteBuffer: ByteBuffer(string: svg)))
            case .failure(let refusal):
                return Response(status: refusal.status, headers: [
                    .contentType: "text/plain; charset=utf-8", .cacheControl: "no-store",
                ], body: ResponseBody(byteBuffer: ByteBuffer(string: refusal.message + "\n")))
            }
        }
    }
}
