import NIOCore

/// What framing hands the connection: a line, or notice that a line was too long.
public enum InboundFrame: Sendable, Equatable {
    /// One line without its `\n` (and without a `\r` before it).
    case line(ByteBuffer)
    /// A line exceeded the limit; the framer drops everything after it.
    case lineTooLong
}

/// Splits the byte stream on `\n`, dropping a `\r` before it. Never holds more than the limit
/// (plus one socket read) for a line: a longer one yields `.lineTooLong` and input is discarded.
///
/// The connection handler feeds it each read and takes lines out in the same call, so a request
/// costs no pass through a handler of its own.
public struct LineFramer {
    /// Longest line content in bytes, the line ending not counted.
    public let maxLineBytes: Int
    /// Bytes received and not yet taken as lines.
    private var pending: ByteBuffer?
    /// Bytes of the current line already searched, so a long line is scanned once.
    private var scanned = 0
    /// After a line too long: everything is dropped.
    public private(set) var discarding = false

    public init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Adds bytes read from the socket.
    public mutating func append(_ bytes: ByteBuffer) {
        guard !discarding else { return }
        if pending == nil || pending!.readableBytes == 0 {
            pending = bytes
        } else {
            var bytes = bytes
            pending!.writeBuffer(&bytes)
        }
    }

    /// The next complete line, `.lineTooLong` once when the current line passes the limit, or
    /// nil when more bytes are needed.
    public mutating func next(allocator: ByteBufferAllocator) -> InboundFrame? {
        guard !discarding, var buffer = pending else { return nil }
        pending = nil
        defer { if !discarding { pending = buffer } }
        let view = buffer.readableBytesView
        let searchStart = view.index(view.startIndex, offsetBy: scanned)
        guard let newline = view[searchStart...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = view.count
            // Even a `\r` at the end would leave content past the limit.
            if view.count > maxLineBytes + 1 { return tooLong() }
            return nil
        }
        var length = view.distance(from: view.startIndex, to: newline)
        scanned = 0
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if length > 0, line.getInteger(at: line.readerIndex + length - 1, as: UInt8.self) == UInt8(ascii: "\r") {
            length -= 1
            line = line.getSlice(at: line.readerIndex, length: length)!
        }
        if length > maxLineBytes { return tooLong() }
        Self.shrinkIfOversized(&buffer, allocator: allocator)
        return .line(line)
    }

    /// Drops an unfinished last line (the client went away before finishing it).
    public mutating func dropUnfinished() {
        pending = nil
        scanned = 0
    }

    /// Largest read buffer kept for the bytes after a line; a bigger one is copied into a buffer
    /// of their size.
    public static let keptBufferCapacity = 64 * 1024

    /// After a big line, the bytes that follow it (the start of the next line) would keep the big
    /// line's buffer alive until they are used up: copy them into a buffer of their own size, so
    /// the connection's read buffer shrinks back.
    public static func shrinkIfOversized(_ buffer: inout ByteBuffer, allocator: ByteBufferAllocator) {
        guard buffer.capacity > keptBufferCapacity, buffer.readableBytes <= keptBufferCapacity / 2 else { return }
        var fresh = allocator.buffer(capacity: buffer.readableBytes)
        fresh.writeBuffer(&buffer)
        buffer = fresh
    }

    private mutating func tooLong() -> InboundFrame {
        discarding = true
        pending = nil
        return .lineTooLong
    }
}
