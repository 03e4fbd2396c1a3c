import Hummingbird
import HTTPTypes
import ProxyHeaders
import ScavengerCore

/// The HTTP port's client address behind trusted proxies (`--trusted-proxies`): from a trusted
/// peer, the client a request's `Forwarded` or else `X-Forwarded-For` names (``ForwardedFor``'s
/// rule: the right-most hop that is not itself a trusted proxy); from any other peer, or when the
/// fields name no address, the peer's own. Both the connection limits (``HTTPGuardHandler``, by
/// the connection's first request) and every request's throttles (``ForwardedClientMiddleware``)
/// use it.
enum ForwardedClient {
    static let forwarded = HTTPField.Name("Forwarded")!
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!

    /// The address, as the connection limits count it, of a request from `peer` with these
    /// header fields (names lower-cased).
    static func address(peer: String?, fields: [(name: String, value: String)], trusted: TrustedProxies) -> String? {
        guard trusted.contains(peer) else { return peer }
        let client = ForwardedFor.client(
            peer: peer.flatMap { IPAddress($0) },
            forwarded: fields.filter { $0.name == "forwarded" }.map(\.value),
            xForwardedFor: fields.filter { $0.name == "x-forwarded-for" }.map(\.value),
            trusted: trusted)
        return client?.description ?? peer
    }

    /// The same for a request Hummingbird has parsed.
    static func address(peer: String?, headers: HTTPFields, trusted: TrustedProxies) -> String? {
        guard trusted.contains(peer) else { return peer }
        let client = ForwardedFor.client(
            peer: peer.flatMap { IPAddress($0) }, forwarded: headers[values: forwarded],
            xForwardedFor: headers[values: xForwardedFor], trusted: trusted)
        return client?.description ?? peer
    }
}

/// Sets each request's ``HTTPRequestContext/clientAddress`` from the trusted proxy's fields (see
/// ``ForwardedClient``) before its route runs, the `/ws` upgrade included: its WebSocket session
/// keeps the context of its upgrade request.
struct ForwardedClientMiddleware: RouterMiddleware {
    let trusted: TrustedProxies

    func handle(
        _ request: Request, context: HTTPRequestContext, next: (Request, HTTPRequestContext) async throws -> Response
    ) async throws -> Response {
        guard trusted.contains(context.peerAddress) else { return try await next(request, context) }
        var context = context
        let address = ForwardedClient.address(peer: context.peerAddress, headers: request.headers, trusted: trusted)
        context.clientAddress = address.flatMap(ClientAddress.key)
        return try await next(request, context)
    }
}
