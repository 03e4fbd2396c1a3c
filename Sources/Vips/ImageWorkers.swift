import NIOPosix
import Synchronization

/// Runs libvips jobs on threads of their own (never an event loop or Swift's cooperative pool),
/// as many at once as it has threads: that bounds the pipelines, and so the memory, decoding
/// photos at one time. The threads start with the first job.
public final class ImageWorkers: Sendable {
    /// How many jobs run at once.
    public let threads: Int
    private let pool = Mutex<NIOThreadPool?>(nil)

    public init(threads: Int = 2) {
        precondition(threads >= 1, "ImageWorkers needs at least one thread")
        self.threads = threads
    }

    deinit {
        pool.withLock { $0?.shutdownGracefully { _ in } }
    }

    /// ``Vips/thumbnail(of:longestEdge:as:)`` on one of the threads.
    public func thumbnail(of bytes: [UInt8], longestEdge: Int, as encoding: ThumbnailEncoding) async throws(VipsError) -> [UInt8] {
        let started = startedPool()
        let result: Result<[UInt8], VipsError>
        do {
            result = try await started.runIfActive {
                Result { () throws(VipsError) -> [UInt8] in try Vips.thumbnail(of: bytes, longestEdge: longestEdge, as: encoding) }
            }
        } catch {
            throw VipsError("the image workers have stopped")
        }
        return try result.get()
    }

    private func startedPool() -> NIOThreadPool {
        pool.withLock { pool in
            if let pool { return pool }
            let started = NIOThreadPool(numberOfThreads: threads)
            started.start()
            pool = started
            return started
        }
    }
}
