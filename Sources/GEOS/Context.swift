internal import CGEOS
import Synchronization

/// Serializes GEOS_init_r and GEOS_finish_r, which touch process globals without a lock.
private let lifecycleLock = Mutex<Void>(())

/// Collects the last error message GEOS reported on one context.
final class MessageBox {
    var message: String?
}

/// One GEOS context handle with its cached readers and writer.
///
/// Invariant (why `@unchecked Sendable` is sound): a context is reachable only from a
/// `ContextPool`'s idle list (under its mutex) or from the single `withContext` call
/// that checked it out, so at most one thread uses it at a time.
final class Context: @unchecked Sendable {
    let handle: GEOSContextHandle_t
    private let box = MessageBox()
    private var wktReaderRaw: OpaquePointer?
    private var wktWriterRaw: OpaquePointer?
    private var geoJSONReaderRaw: OpaquePointer?

    /// Creates a context with an error handler that records into this context's message box.
    init?() {
        guard let handle = lifecycleLock.withLock({ _ in GEOS_init_r() }) else { return nil }
        self.handle = handle
        // Non-capturing: the box arrives through the userdata pointer. It lives as long as
        // `self`, which outlives the handle (finished in deinit).
        _ = GEOSContext_setErrorMessageHandler_r(handle, { message, userdata in
            guard let message, let userdata else { return }
            Unmanaged<MessageBox>.fromOpaque(userdata).takeUnretainedValue().message = String(cString: message)
        }, Unmanaged.passUnretained(box).toOpaque())
    }

    deinit {
        if let wktReaderRaw { GEOSWKTReader_destroy_r(handle, wktReaderRaw) }
        if let wktWriterRaw { GEOSWKTWriter_destroy_r(handle, wktWriterRaw) }
        if let geoJSONReaderRaw { GEOSGeoJSONReader_destroy_r(handle, geoJSONReaderRaw) }
        let handle = self.handle
        lifecycleLock.withLock { _ in GEOS_finish_r(handle) }
    }

    /// The message recorded since the last `clearMessage()`, if any.
    var pendingMessage: String? { box.message }

    /// Forgets any recorded message.
    func clearMessage() { box.message = nil }

    /// Builds an error from the recorded message (or `fallback`) and clears the message.
    func failure(_ operation: String, kind: GEOSError.Kind = .operationFailed,
                 fallback: String = "GEOS reported no message") -> GEOSError {
        let message = box.message ?? fallback
        box.message = nil
        return GEOSError(kind, operation: operation, message: message)
    }

    /// Maps a GEOS predicate result (0, 1, 2 = exception) to a Bool or an error.
    func predicate(_ result: CChar, _ operation: String) throws(GEOSError) -> Bool {
        switch result {
        case 0: return false
        case 1: return true
        default: throw failure(operation)
        }
    }

    /// Unwraps a returned geometry pointer or throws the recorded message.
    func geometry(_ raw: OpaquePointer?, _ operation: String,
                  kind: GEOSError.Kind = .operationFailed) throws(GEOSError) -> OpaquePointer {
        guard let raw else { throw failure(operation, kind: kind) }
        return raw
    }

    /// Copies and frees a GEOS-allocated C string.
    func takeString(_ raw: UnsafeMutablePointer<CChar>?, _ operation: String) throws(GEOSError) -> String {
        guard let raw else { throw failure(operation) }
        defer { GEOSFree_r(handle, raw) }
        return String(cString: raw)
    }

    func wktReader() throws(GEOSError) -> OpaquePointer {
        if let wktReaderRaw { return wktReaderRaw }
        guard let reader = GEOSWKTReader_create_r(handle) else { throw failure("create WKT reader") }
        wktReaderRaw = reader
        return reader
    }

    func wktWriter() throws(GEOSError) -> OpaquePointer {
        if let wktWriterRaw { return wktWriterRaw }
        guard let writer = GEOSWKTWriter_create_r(handle) else { throw failure("create WKT writer") }
        GEOSWKTWriter_setTrim_r(handle, writer, 1)
        wktWriterRaw = writer
        return writer
    }

    func geoJSONReader() throws(GEOSError) -> OpaquePointer {
        if let geoJSONReaderRaw { return geoJSONReaderRaw }
        guard let reader = GEOSGeoJSONReader_create_r(handle) else { throw failure("create GeoJSON reader") }
        geoJSONReaderRaw = reader
        return reader
    }

    /// Reads WKT; nil on failure, leaving GEOS's message recorded.
    func readWKT(_ text: String) throws(GEOSError) -> OpaquePointer? {
        try Context.rejectNUL(text, "read WKT")
        return GEOSWKTReader_read_r(handle, try wktReader(), text)
    }

    /// C strings end at NUL, so text containing one would be silently truncated.
    static func rejectNUL(_ text: String, _ operation: String) throws(GEOSError) {
        if text.utf8.contains(0) {
            throw GEOSError(.parse, operation: operation, message: "input contains a NUL character")
        }
    }

    /// Destroys a geometry this context's caller owns.
    func destroy(_ raw: OpaquePointer) {
        GEOSGeom_destroy_r(handle, raw)
    }
}

/// Hands out GEOS contexts, one caller at a time each.
///
/// Contexts are created on demand (one at a time, under `lifecycleLock`) when none is idle,
/// so the pool grows to the peak number of concurrent callers and never blocks.
final class ContextPool: Sendable {
    /// The process-wide pool.
    static let shared = ContextPool()

    private let idle = Mutex<[Context]>([])

    /// Runs `body` synchronously with a context no one else is using; clears its message first.
    func withContext<R: ~Copyable>(_ operation: String,
                        _ body: (Context) throws(GEOSError) -> R) throws(GEOSError) -> R {
        let context: Context
        if let reused = idle.withLock({ $0.popLast() }) {
            context = reused
        } else if let created = Context() {
            context = created
        } else {
            throw GEOSError(.operationFailed, operation: operation, message: "could not create a GEOS context")
        }
        defer {
            context.clearMessage()
            idle.withLock { $0.append(context) }
        }
        context.clearMessage()
        return try body(context)
    }

    /// Number of contexts currently idle in the pool.
    var idleCount: Int { idle.withLock { $0.count } }
}
