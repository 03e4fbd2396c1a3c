import DequeModule
import ScavengerCore
import ScavengerStore
import Synchronization

/// What the HTTP port answers to `GET /photos/ID`: the bytes with their type and validator, and
/// how long others may keep them.
public struct PhotoFileReply: Sendable {
    public var mime: String
    public var data: [UInt8]
    /// A strong validator (quoted FNV-1a of the bytes).
    public var etag: String
    /// `public, max-age=31536000, immutable` for a live public pin's made size or original;
    /// `no-cache` for an original standing in for a size not made yet; `private` for a
    /// check-in's photo.
    public var cacheControl: String
}

/// The photos' bytes most recently served, by id, size and encoding, up to a byte budget
/// (oldest first out). Only the bytes: whether a pin may still be seen is asked every time.
final class PhotoFileCache: Sendable {
    private struct Contents {
        var replies: [String: PhotoFileReply] = [:]
        var order = Deque<String>()
        var bytes = 0
    }

    private let contents = Mutex(Contents())
    let budgetBytes: Int

    init(budgetBytes: Int) {
        self.budgetBytes = budgetBytes
    }

    func reply(_ key: String) -> PhotoFileReply? {
        contents.withLock { $0.replies[key] }
    }

    func keep(_ reply: PhotoFileReply, key: String) {
        guard reply.data.count <= budgetBytes / 4 else { return }
        contents.withLock { contents in
            guard contents.replies[key] == nil else { return }
            contents.replies[key] = reply
            contents.order.append(key)
            contents.bytes += reply.data.count
            while contents.bytes > budgetBytes, let oldest = contents.order.popFirst() {
                contents.bytes -= contents.replies.removeValue(forKey: oldest)?.data.count ?? 0
            }
        }
    }
}

extension Board {
    static let noSuchPhoto = BoardError(.notFound, "no such photo")

    /// Starts making the sizes of the photos left without them (by a restart, or another
    /// daemon's): call once the daemon starts.
    public func resumePhotoSizes() {
        photoSizes.wake()
    }

    /// A photo as the HTTP port serves it: `size` nil for the (stripped) original, else that
    /// size, in WebP when `webp` (the request's `Accept` takes it) or JPEG, or the original
    /// until the size is made.
    ///
    /// A pin's photo: only while the pin is live and not hidden, which the database is asked on
    /// every request (one primary-key read), so a hidden, removed or expired pin's photo is
    /// `NOT_FOUND` at once on every daemon; the bytes may come from memory. A check-in's photo:
    /// `bearer` must be the session token of its player, its hunt's host or a moderator
    /// (`UNAUTHORIZED` without a valid one; `NOT_FOUND` for anyone else).
    public func photoFile(id: String, size: PhotoSize?, webp: Bool, bearer: String?) async throws(BoardError) -> PhotoFileReply {
        let encoding: SizeEncoding = webp && size != nil ? .webp : .jpeg
        if Identifier.isCheckIn(id) { return try await checkInPhotoFile(id: id, size: size, encoding: encoding, bearer: bearer) }
        guard Identifier.isPin(id) else { throw Self.noSuchPhoto }
        let key = "\(id)/\(size?.rawValue ?? "original")/\(size == nil ? "" : encoding.rawValue)"
        return try await guarded {
            if let cached = photoFiles.reply(key) {
                guard try await store.isVisiblePhotoPin(id: id) else { throw Self.noSuchPhoto }
                return cached
            }
            guard let file = try await store.pinPhotoFile(id: id, size: size, encoding: encoding) else { throw Self.noSuchPhoto }
            let reply = PhotoFileReply(
                mime: file.mime, data: file.data, etag: Self.etag(of: file.data),
                cacheControl: file.isAsked ? "public, max-age=31536000, immutable" : "no-cache")
            if file.isAsked {
                photoFiles.keep(reply, key: key)
            } else if size != nil {
                // The original stands in: the size is not made yet (its drain may have stopped
                // on a failed store read).
                photoSizes.wake()
            }
            return reply
        }
    }

    private func checkInPhotoFile(id: String, size: PhotoSize?, encoding: SizeEncoding, bearer: String?) async throws(BoardError) -> PhotoFileReply {
        guard let bearer, !bearer.isEmpty else {
            throw BoardError(.unauthorized, "a check-in's photo needs Authorization: Bearer and a session token")
        }
        let session = Session(connectionID: 0)
        _ = try await resume(token: bearer, on: session)
        try await checkInPhotoViewer(id: id, session: session)
        return try await guarded {
            guard let file = try await store.checkInPhotoFile(id: id, size: size, encoding: encoding) else { throw Self.noSuchPhoto }
            return PhotoFileReply(mime: file.mime, data: file.data, etag: Self.etag(of: file.data), cacheControl: "private")
        }
    }

    /// `"…"`: FNV-1a of the bytes, 64 bits, in hex.
    static func etag(of bytes: [UInt8]) -> String {
        "\"" + String(FNV1a.hash(bytes), radix: 16) + "\""
    }
}
