import ScavengerCore

// The records of a slot: hot (what NEARBY scans) and cold (everything else).

/// What NEARBY reads for every candidate: one half of a cache line.
struct HotRecord: BitwiseCopyable {
    var x: Double
    var y: Double
    var z: Double
    /// The expiry in microseconds (56 bits, signed) and the flags (top 8 bits).
    var meta: UInt64

    static let occupied: UInt8 = 1
    static let hidden: UInt8 = 2
    static let photoKind: UInt8 = 4
    /// The true expiry is in `farExpiries`; `expires` holds it clamped.
    static let farExpiry: UInt8 = 8
    /// Counted in MAP's sets.
    static let mapped: UInt8 = 0x10
    /// Marked for removal (within `removeSlots` only).
    static let dying: UInt8 = 0x80

    static let expiryLimit: Int64 = 1 << 55

    /// The expiry as the hot record can hold it.
    @inline(__always)
    static func clamp(_ microseconds: Int64) -> Int64 {
        min(expiryLimit - 1, max(-expiryLimit, microseconds))
    }

    init(vector: Geodesy.UnitVector, expires: Int64, flags: UInt8) {
        x = vector.x
        y = vector.y
        z = vector.z
        meta = UInt64(bitPattern: Self.clamp(expires)) & 0x00FF_FFFF_FFFF_FFFF | UInt64(flags) << 56
    }

    var expires: Int64 {
        @inline(__always) get { Int64(bitPattern: meta << 8) >> 8 }
    }

    var flags: UInt8 {
        @inline(__always) get { UInt8(truncatingIfNeeded: meta >> 56) }
    }

    mutating func setFlag(_ flag: UInt8, _ on: Bool) {
        let bits = UInt64(flag) << 56
        meta = on ? meta | bits : meta & ~bits
    }

    func isVisible(now: Int64) -> Bool {
        flags & (Self.occupied | Self.hidden) == Self.occupied && expires > now
    }
}

/// Everything else about a pin: one cache line.
struct ColdRecord: BitwiseCopyable {
    var high: UInt64
    var low: UInt64
    var lat: Double
    var lon: Double
    var created: Int64
    /// Where the text starts in the arena.
    var textOffset: UInt32
    var author: UInt32
    var replies: Int32
    var photoBytes: UInt32
    var region: UInt32
    var mime: UInt16

    var key: PinKey { PinKey(high: high, low: low) }
}

extension PinIndex {
    /// The records of some slots, in order. Finds every text before building any record, so
    /// the processor can fetch many at once.
    func makeRecords(_ slots: [Int]) -> [PinRecord] {
        makeRecords(count: slots.count, slot: { slots[$0] }) { record, _ in record }
    }

    /// `make` applied to the record of each slot `slot(0)`, `slot(1)`, … `slot(count - 1)`
    /// and its position, in order, in one array.
    func makeRecords<Element>(count: Int, slot: (Int) -> Int, _ make: (PinRecord, Int) -> Element) -> [Element] {
        let hot = hot.buffer
        let cold = cold.buffer
        let ranges = withoutActuallyEscaping(slot) { slot in texts.textRanges(at: (0 ..< count).lazy.map { cold[slot($0)].textOffset }) }
        return (0 ..< count).map { position in
            let slot = slot(position)
            let record = cold[slot]
            let hotRecord = hot[slot]
            let expires = hotRecord.flags & HotRecord.farExpiry != 0 ? farExpiries[UInt32(slot)] ?? hotRecord.expires : hotRecord.expires
            let pinRecord = PinRecord(
                key: record.key, lat: record.lat, lon: record.lon,
                kind: hotRecord.flags & HotRecord.photoKind != 0 ? .photo : .text,
                textUTF8: texts.bytes[ranges[position]],
                author: names.authors[Int(record.author)], created: Timestamp(microseconds: record.created),
                expires: Timestamp(microseconds: expires),
                region: record.region == 0 ? nil : names.regions[Int(record.region)],
                photo: record.mime == 0 ? nil : photoInfo(record, slot: slot),
                replies: Int(record.replies))
            return make(pinRecord, position)
        }
    }

    func makePin(_ slot: Int) -> Pin { Pin(makeRecords([slot])[0]) }

    private func photoInfo(_ record: ColdRecord, slot: Int) -> PhotoInfo {
        let pixels = photoDimensions[UInt32(slot)]
        return PhotoInfo(
            mime: names.mimes[Int(record.mime)], bytes: Int(record.photoBytes), width: Int(pixels?.width ?? 0),
            height: Int(pixels?.height ?? 0))
    }
}

/// A photo's width and height in the index.
struct PhotoPixels: Equatable {
    var width: UInt16
    var height: UInt16

    init?(_ photo: PhotoInfo) {
        guard photo.width > 0, photo.height > 0, let width = UInt16(exactly: photo.width),
              let height = UInt16(exactly: photo.height)
        else { return nil }
        self.width = width
        self.height = height
    }
}
