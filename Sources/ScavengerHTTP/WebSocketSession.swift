import HummingbirdWebSocket
import Logging
import NIOCore
import ScavengerBoard
import ScavengerProtocol
import Synchronization

/// The open WebSocket sessions: their numbers (apart from the line port's connections') and
/// how many there are. Admission is the guard's, before the upgrade.
final class WebSocketConnections: Sendable {
    private struct State {
        var nextNumber = 1 << 40
        var open = 0
    }

    private let state = Mutex(State())

    var count: Int { state.withLock { $0.open } }

    /// A number for a new session.
    func opened() -> Int {
        state.withLock { state in
            state.open += 1
            state.nextNumber += 1
            return state.nextNumber
        }
    }

    func closed() {
        state.withLock { $0.open -= 1 }
    }
}

/// One WebSocket: each text message is one request line through the command table, answered in
/// order, each reply one text message without its newline; watch events arrive between replies,
/// one text message each.
struct WebSocketSession {
    let table: CommandTable
    let board: Board
    let maxLineBytes: Int
    let maxEventBytes: Int
    let logger: Logger

    func serve(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, connectionID: Int, address: String?
    ) async throws {
        let events = WebSocketEvents(maxBytes: maxEventBytes)
        let session = Session(connectionID: connectionID, address: address, eventSink: events)
        events.bind(session)
        // Events are written by a task of their own; each is one frame, so they never split a reply.
        let board = self.board
        let writer = Task {
            while let batch = await events.next() {
                for event in batch.events {
                    if let watch = event.watch, !session.holdsWatch(watch) { continue }
                    try await outbound.write(.text(event.text))
                }
                for watch in batch.overflowed { board.endWatch(watch, session: session) }
            }
        }
        defer {
            session.disconnect()
            events.close()
            writer.cancel()
            board.endWatches(session: session)
        }
        try await answer(inbound: inbound, outbound: outbound, session: session, connectionID: connectionID)
    }

    private func answer(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, session: Session, connectionID: Int
    ) async throws {
        var logger = self.logger
        logger[metadataKey: "connection.id"] = "\(connectionID)"
        let context = CommandContext(session: session, board: board, logger: logger)
        var message: [UInt8] = []
        // A fragmented message's kind is its first frame's; the rest are continuations.
        var messageIsBinary = false
        var frames = inbound.makeAsyncIterator()
        while let frame = try await frames.next() {
            switch frame.opcode {
            case .text, .binary:
                message.removeAll(keepingCapacity: message.capacity <= 64 * 1024)
                messageIsBinary = frame.opcode == .binary
            default:
                break
            }
            guard message.count + frame.data.readableBytes <= maxLineBytes else {
                logger.info("closing: message too long")
                try await send(.error(.lineTooLong, "request line longer than \(maxLineBytes) bytes; closing"), outbound)
                table.metrics?.recordFrontEndReply(.error(.lineTooLong, ""))
                return
            }
            message.append(contentsOf: frame.data.readableBytesView)
            guard frame.fin else { continue }
            if messageIsBinary {
                try await reply(CommandOutcome(.error(.badRequest, "send requests as text messages")), outbound)
                continue
            }
            guard !message.contains(UInt8(ascii: "\n")) else {
                try await reply(CommandOutcome(.error(.badRequest, "a message is one request line, without a newline")), outbound)
                continue
            }
            guard let line = String(validating: message, as: UTF8.self) else {
                try await reply(.invalidUTF8, outbound)
                continue
            }
            let outcome: CommandOutcome?
            switch table.dispatch(line: line, context: context) {
            case .reply(let answer): outcome = answer
            case .deferred(let work): outcome = await work()
            }
            guard let outcome else { continue }
            try await send(outcome.reply, outbound)
            // A new watch's events go to the socket's writer only now, behind its reply.
            outcome.afterReply?()
            if outcome.closesConnection { return }
        }
    }

    private func reply(_ outcome: CommandOutcome, _ outbound: WebSocketOutboundWriter) async throws {
        table.metrics?.recordFrontEndReply(outcome.reply)
        try await send(outcome.reply, outbound)
    }

    private func send(_ reply: Reply, _ outbound: WebSocketOutboundWriter) async throws {
        var bytes = reply.lineBytes
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        try await outbound.write(.text(String(decoding: bytes, as: UTF8.self)))
    }
}
