// Pin texts in one byte arena, each after its LEB128 length.

extension PinIndex {
    /// Appends a length-prefixed text; returns its offset.
    func appendText(_ text: String) -> UInt32 {
        let offset = arena.count
        var length = text.utf8.count
        while length >= 0x80 {
            arena.append(UInt8(length & 0x7F) | 0x80)
            length >>= 7
        }
        arena.append(UInt8(length))
        arena.append(contentsOf: text.utf8)
        precondition(arena.count <= Int(UInt32.max), "PinIndex text arena is full")
        return UInt32(offset)
    }

    /// Rewrites the arena once more than half of it is garbage.
    func compactArenaIfWasteful() {
        guard garbage > 1 << 16, garbage * 2 > arena.count else { return }
        var compacted: [UInt8] = []
        compacted.reserveCapacity(arena.count - garbage)
        arena.withUnsafeBufferPointer { arena in
            for (slot, record) in hot.buffer.enumerated() where record.flags & HotRecord.occupied != 0 {
                let start = Int(cold[slot].textOffset)
                let end = Self.textRange(arena, at: start).upperBound
                cold[slot].textOffset = UInt32(compacted.count)
                compacted.append(contentsOf: UnsafeBufferPointer(rebasing: arena[start ..< end]))
            }
        }
        arena = compacted
        garbage = 0
    }

    /// Where the text stored at `offset` lies in the arena (after its LEB128 length).
    static func textRange(_ arena: UnsafeBufferPointer<UInt8>, at offset: Int) -> Range<Int> {
        var index = offset
        var length = 0
        var shift = 0
        while true {
            let byte = arena[index]
            index += 1
            length |= Int(byte & 0x7F) << shift
            if byte < 0x80 { break }
            shift += 7
        }
        return index ..< index + length
    }

    func textRange(_ slot: Int) -> Range<Int> {
        let offset = Int(cold[slot].textOffset)
        return arena.withUnsafeBufferPointer { Self.textRange($0, at: offset) }
    }

    /// Arena bytes of a slot's text, length prefix included.
    func storedTextSize(_ slot: Int) -> Int {
        textRange(slot).upperBound - Int(cold[slot].textOffset)
    }

    func textEquals(_ slot: Int, _ text: String) -> Bool {
        arena[textRange(slot)].elementsEqual(text.utf8)
    }
}
