import NIOCore

/// What the framing layer hands the connection: a line, or notice that a line was too long.
public enum InboundFrame: Sendable, Equatable {
    /// One line without its `\n` (and without a `\r` before it).
    case line(ByteBuffer)
    /// A line exceeded the limit; the decoder drops everything after it.
    case lineTooLong
}

/// Splits the byte stream on `\n`, dropping a `\r` before it. Never holds more than the limit
/// (plus one socket read) for a line: a longer one yields `.lineTooLong` and input is discarded.
public struct LineFrameDecoder: ByteToMessageDecoder {
    public typealias InboundOut = InboundFrame

    /// Longest line content in bytes, the line ending not counted.
    public let maxLineBytes: Int
    /// Bytes of the current line already searched, so a long line is scanned once.
    private var scanned = 0
    private var discarding = false

    public init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if discarding {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            return .needMoreData
        }
        let view = buffer.readableBytesView
        let searchStart = view.index(view.startIndex, offsetBy: scanned)
        guard let newline = view[searchStart...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = view.count
            // Even a `\r` at the end would leave content past the limit.
            if view.count > maxLineBytes + 1 {
                tooLong(context: context, buffer: &buffer)
            }
            return .needMoreData
        }
        var length = view.distance(from: view.startIndex, to: newline)
        scanned = 0
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if length > 0, line.getInteger(at: line.readerIndex + length - 1, as: UInt8.self) == UInt8(ascii: "\r") {
            length -= 1
            line = line.getSlice(at: line.readerIndex, length: length)!
        }
        if length > maxLineBytes {
            tooLong(context: context, buffer: &buffer)
            return .needMoreData
        }
        Self.shrinkIfOversized(&buffer, allocator: context.channel.allocator)
        context.fireChannelRead(wrapInboundOut(.line(line)))
        return .continue
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

    public mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        // A last line without `\n` is incomplete: the client went away before finishing it.
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        return .needMoreData
    }

    private mutating func tooLong(context: ChannelHandlerContext, buffer: inout ByteBuffer) {
        discarding = true
        buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
        context.fireChannelRead(wrapInboundOut(.lineTooLong))
    }
}
