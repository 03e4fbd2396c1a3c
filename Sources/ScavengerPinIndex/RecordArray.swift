/// A growable array of plain records whose storage starts on a 64-byte boundary, so records
/// of 32 or 64 bytes never straddle two cache lines (a Swift `Array` places its elements
/// 32 bytes into a heap object, which gives no such guarantee).
///
/// It owns its memory and frees it when it goes away; being non-copyable, it has exactly one
/// owner. Reads and writes are index-checked; only ``buffer`` skips the checks, for hot loops.
struct RecordArray<Element: BitwiseCopyable>: ~Copyable {
    /// The storage: private to this file, so nothing else can free or keep it.
    private var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private(set) var capacity: Int

    init(capacity: Int = 16) {
        self.capacity = max(16, capacity)
        base = Self.allocate(self.capacity)
    }

    deinit { UnsafeMutableRawPointer(base).deallocate() }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<Element> {
        UnsafeMutableRawPointer.allocate(byteCount: capacity * MemoryLayout<Element>.stride, alignment: 64)
            .bindMemory(to: Element.self, capacity: capacity)
    }

    var indices: Range<Int> { 0 ..< count }

    subscript(index: Int) -> Element {
        get {
            precondition(index >= 0 && index < count, "record index out of range")
            return base[index]
        }
        nonmutating set {
            precondition(index >= 0 && index < count, "record index out of range")
            base[index] = newValue
        }
    }

    /// The records, for loops that should not check each index. Valid until the next
    /// ``append(_:)`` or ``reserveCapacity(_:)``; never let it escape the index.
    var buffer: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: base, count: count) }

    mutating func append(_ element: Element) {
        if count == capacity { reserveCapacity(capacity + capacity / 2) }
        (base + count).initialize(to: element)
        count += 1
    }

    mutating func reserveCapacity(_ minimum: Int) {
        guard minimum > capacity else { return }
        let grown = Self.allocate(minimum)
        grown.update(from: base, count: count)
        UnsafeMutableRawPointer(base).deallocate()
        base = grown
        capacity = minimum
    }
}
