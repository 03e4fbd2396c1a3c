import HTTPTypes

/// Cross-origin reads (CORS) of what other sites may load from the daemon (the client module).
enum CrossOrigin {
    /// Lets `origin` read the response when `allowed` lists it, or any origin when `allowed` is
    /// nil (no `--allowed-origins`): `Access-Control-Allow-Origin` names it. Caches keep one
    /// answer per origin (`Vary: Origin`).
    static func allow(_ headers: inout HTTPFields, origin: String?, allowed: Set<String>?) {
        let vary = headers[.vary].map { $0 + ", Origin" } ?? "Origin"
        headers[.vary] = vary
        guard let origin else { return }
        if let allowed {
            guard allowed.contains(origin) else { return }
            headers[.accessControlAllowOrigin] = origin
        } else {
            headers[.accessControlAllowOrigin] = "*"
        }
    }
}
