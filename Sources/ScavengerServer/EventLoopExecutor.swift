import NIOCore

/// Runs a connection's task on the event loop that owns its socket, so reading a line, running
/// an in-memory command and writing the reply happen on one thread with no hand-offs between
/// the event loop and Swift's cooperative pool. Blocking work (libpq, password hashing) runs
/// on thread pools of its own and never on this executor.
final class EventLoopExecutor: TaskExecutor, @unchecked Sendable {
    private let eventLoop: any EventLoop

    init(_ eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        eventLoop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
