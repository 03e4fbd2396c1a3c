/// Pin texts, back to back in one byte array: each a LEB128 length, then its UTF-8 bytes,
/// named by the offset where it starts. A replaced or freed text stays behind as garbage
/// until ``compact(_:)`` rewrites the arena.
struct TextArena {
    /// The texts, garbage included.
    private(set) var bytes: [UInt8] = []
    /// Bytes that belong to no pin any more.
    private(set) var garbage = 0

    /// Bytes in use, garbage included.
    var count: Int { bytes.count }
    /// Bytes allocated.
    var capacity: Int { bytes.capacity }

    mutating func reserveCapacity(_ count: Int) { bytes.reserveCapacity(count) }

    /// Appends a length-prefixed text; returns its offset.
    mutating func append(_ text: String) -> UInt32 {
        let offset = bytes.count
        var length = text.utf8.count
        while length >= 0x80 {
            bytes.append(UInt8(length & 0x7F) | 0x80)
            length >>= 7
        }
        bytes.append(UInt8(length))
        bytes.append(contentsOf: text.utf8)
        precondition(bytes.count <= Int(UInt32.max), "PinIndex text arena is full")
        return UInt32(offset)
    }

    /// Where the text stored at `offset` lies in `bytes` (after its LEB128 length).
    static func textRange(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) -> Range<Int> {
        var index = offset
        var length = 0
        var shift = 0
        while true {
            let byte = bytes[index]
            index += 1
            length |= Int(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        return index ..< index + length
    }

    /// Where the text stored at `offset` lies (after its LEB128 length).
    func textRange(at offset: UInt32) -> Range<Int> {
        bytes.withUnsafeBufferPointer { Self.textRange($0, at: Int(offset)) }
    }

    /// The ranges of the texts at `offsets`, all found before any is read, so the processor
    /// can fetch many at once.
    func textRanges(at offsets: some Sequence<UInt32>) -> [Range<Int>] {
        bytes.withUnsafeBufferPointer { bytes in offsets.map { Self.textRange(bytes, at: Int($0)) } }
    }

    /// Whether the text at `offset` is `text`.
    func text(at offset: UInt32, equals text: String) -> Bool {
        bytes[textRange(at: offset)].elementsEqual(text.utf8)
    }

    /// Counts the text at `offset`, length prefix included, as garbage.
    mutating func discard(at offset: UInt32) {
        garbage += textRange(at: offset).upperBound - Int(offset)
    }

    /// More than half garbage, and enough of it to be worth a rewrite.
    var isWasteful: Bool { garbage > 1 << 16 && garbage * 2 > bytes.count }

    /// Rewrites the arena without garbage. `relocate` must call the function it is given once
    /// per live text, with the text's offset; that copies the text over and returns its new one.
    mutating func compact(_ relocate: (_ move: (UInt32) -> UInt32) -> Void) {
        var compacted: [UInt8] = []
        compacted.reserveCapacity(bytes.count - garbage)
        bytes.withUnsafeBufferPointer { bytes in
            relocate { offset in
                let start = Int(offset)
                let end = Self.textRange(bytes, at: start).upperBound
                let moved = UInt32(compacted.count)
                compacted.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start ..< end]))
                return moved
            }
        }
        bytes = compacted
        garbage = 0
    }
}

extension PinIndex {
    /// Rewrites the arena once more than half of it is garbage.
    func compactArenaIfWasteful() {
        guard texts.isWasteful else { return }
        texts.compact { move in
            for (slot, record) in hot.buffer.enumerated() where record.flags & HotRecord.occupied != 0 {
                cold[slot].textOffset = move(cold[slot].textOffset)
            }
        }
    }
}
