/// A growable array of plain records whose storage starts on a 64-byte boundary, so records
/// of 32 or 64 bytes never straddle two cache lines (a Swift `Array` places its elements
/// 32 bytes into a heap object, which gives no such guarantee).
///
/// It owns raw memory: exactly one owner must call ``deallocate()``, and copies of the struct
/// must not outlive it. `PinIndex` keeps its arrays private and frees them in `deinit`.
struct RecordArray<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private(set) var capacity: Int

    init(capacity: Int = 16) {
        self.capacity = max(16, capacity)
        base = Self.allocate(self.capacity)
    }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<Element> {
        UnsafeMutableRawPointer.allocate(byteCount: capacity * MemoryLayout<Element>.stride, alignment: 64)
            .bindMemory(to: Element.self, capacity: capacity)
    }

    func deallocate() { UnsafeMutableRawPointer(base).deallocate() }

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

    /// The records, for loops that should not check each index.
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
        deallocate()
        base = grown
        capacity = minimum
    }
}
