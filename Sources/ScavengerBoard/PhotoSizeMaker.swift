import Logging
import ScavengerCore
import ScavengerStore
import Synchronization
import Vips

/// Makes each photo's sizes (``PhotoSize``: thumb and display, JPEG and WebP) once, in the
/// background after its write, and keeps them beside it in the store. Woken by each photo
/// written here, once at start (so a restart resumes what was left pending), and by each request
/// for a size not made yet (so sizes left when the store failed are made once it answers); it
/// drains what the store says is pending, then stops until woken again. It never sleeps: a
/// failed read of the store ends the drain until the next wake. At most ``ImageWorkers/threads``
/// images decode at once, on the workers' own threads.
final class PhotoSizeMaker: Sendable {
    private let store: Database
    private let workers: ImageWorkers
    private let limits: PhotoPixelLimits
    private let logger: Logger
    /// Whether a drain runs, and whether it was woken again meanwhile.
    private let state = Mutex<(running: Bool, woken: Bool)>((false, false))
    /// Photos taken from the store per round.
    private static let batch = 8
    /// Failed writes of sizes in a round before a drain gives up until the next wake.
    private static let storeFailures = 3

    init(store: Database, workers: ImageWorkers, limits: PhotoPixelLimits, logger: Logger) {
        self.store = store
        self.workers = workers
        self.limits = limits
        self.logger = logger
        // libvips starts once, here, before any worker thread uses it.
        do {
            try Vips.start()
        } catch {
            logger.error("libvips did not start: photos will be refused", metadata: ["error": "\(error)"])
        }
    }

    /// Starts a drain, or has the running one look again before it stops.
    func wake() {
        let start = state.withLock { state -> Bool in
            if state.running {
                state.woken = true
                return false
            }
            state = (true, false)
            return true
        }
        if start { Task.detached { await self.drain() } }
    }

    private func drain() async {
        var failures = 0
        while true {
            let owners: [PhotoOwner]
            do {
                owners = try await store.photosWithoutSizes(limit: Self.batch)
                failures = 0
            } catch {
                logger.warning("could not read the photos without sizes; waiting for the next wake", metadata: ["error": "\(error)"])
                state.withLock { $0 = (false, false) }
                return
            }
            if owners.isEmpty {
                let stop = state.withLock { state -> Bool in
                    if state.woken {
                        state.woken = false
                        return false
                    }
                    state.running = false
                    return true
                }
                if stop { return }
                continue
            }
            await withTaskGroup(of: Bool.self) { group in
                for owner in owners { group.addTask { await self.make(owner) } }
                for await stored in group where !stored { failures += 1 }
            }
            if failures >= Self.storeFailures {
                state.withLock { $0 = (false, false) }
                return
            }
        }
    }

    /// Makes and keeps one photo's sizes; false when the store failed.
    private func make(_ owner: PhotoOwner) async -> Bool {
        do {
            guard let original = try await store.originalWithoutSizes(owner) else { return true }
            try await store.keepSizes(await sizes(of: original, owner: owner), of: owner)
            return true
        } catch {
            logger.warning("could not keep a photo's sizes", metadata: ["photo": "\(owner.id)", "error": "\(error)"])
            return false
        }
    }

    /// A JPEG of `photo` at `size`, made now on the workers, for a photo the store keeps no sizes
    /// of (a moderation item's copy of a reported photo); nil when it cannot be decoded or claims
    /// more pixels than the limits allow.
    func resized(_ photo: [UInt8], to size: PhotoSize) async -> [UInt8]? {
        do throws(VipsError) {
            let header = try Vips.header(of: photo)
            let dimensions = PhotoDimensions(width: header.width, height: header.height, interlaced: header.interlaced)
            if limits.refusal(of: dimensions) != nil { return nil }
            return try await workers.thumbnail(of: photo, longestEdge: size.longestEdge, as: .jpeg)
        } catch {
            logger.warning("libvips could not resize a photo", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// A made WebP without its EXIF chunk.
    private static func scrubbed(_ webp: [UInt8]) throws(VipsError) -> [UInt8] {
        do {
            return try PhotoScrubber.scrub(webp)
        } catch {
            throw VipsError("a made WebP could not be walked: \(error)")
        }
    }

    /// The sizes of one original; nil when it cannot be decoded (or, stored before the limits
    /// were checked, claims too many pixels): its original then stands for every size.
    private func sizes(of original: [UInt8], owner: PhotoOwner) async -> MadePhotoSizes? {
        do throws(VipsError) {
            let header = try Vips.header(of: original)
            let dimensions = PhotoDimensions(width: header.width, height: header.height, interlaced: header.interlaced)
            if let refusal = limits.refusal(of: dimensions) {
                logger.warning("a stored photo is too large to make sizes of", metadata: ["photo": "\(owner.id)", "why": "\(refusal)"])
                return nil
            }
            var files: [PhotoSize: [SizeEncoding: [UInt8]]] = [:]
            for size in PhotoSize.allCases {
                for encoding in SizeEncoding.allCases {
                    let made = try await workers.thumbnail(
                        of: original, longestEdge: size.longestEdge, as: encoding == .webp ? .webp : .jpeg)
                    // libvips 8.14.1's WebP saver writes an EXIF chunk whatever it is told (one it
                    // rebuilds, with no position left in it): walked out like any photo's.
                    files[size, default: [:]][encoding] = encoding == .webp ? try Self.scrubbed(made) : made
                }
            }
            return MadePhotoSizes(width: header.width, height: header.height, files: files)
        } catch {
            logger.warning("libvips could not make a photo's sizes", metadata: ["photo": "\(owner.id)", "error": "\(error)"])
            return nil
        }
    }
}
