internal import CGEOS
import Synchronization

/// A read-only spatial index over item bounding boxes, built once from all its entries.
///
/// GEOS drops items inserted after the first query, so there is no insert: build a new tree
/// to change the contents. Queries return candidates whose boxes intersect the query box, in
/// entry order; refine them with exact predicates. Queries are serialized by an internal lock.
public final class STRTree<Item> {
    private let items: [Item]
    private let tree: Mutex<RawTree>

    /// Builds a tree over the envelopes of `entries`; entries with empty geometry are skipped.
    public convenience init(_ entries: [(Geometry, Item)], nodeCapacity: Int = 10) throws(GEOSError) {
        let boxes = entries.compactMap { entry -> (Envelope, Item)? in
            guard let envelope = entry.0.envelope else { return nil }
            return (envelope, entry.1)
        }
        try self.init(envelopes: boxes, nodeCapacity: nodeCapacity)
    }

    /// Builds a tree over `entries`' boxes, which must be finite with `minY <= maxY`.
    ///
    /// A box with `minX > maxX` is indexed as crossing the antimeridian (two boxes).
    public init(envelopes entries: [(Envelope, Item)], nodeCapacity: Int = 10) throws(GEOSError) {
        for (index, entry) in entries.enumerated() {
            try RawTree.check(entry.0, "build STRtree", what: "entry \(index + 1)")
        }
        items = entries.map(\.1)
        let raw = try ContextPool.shared.withContext("build STRtree") { context throws(GEOSError) -> RawTree in
            try RawTree(context, envelopes: entries.map(\.0), nodeCapacity: nodeCapacity)
        }
        tree = Mutex(raw)
    }

    deinit {
        tree.withLock { raw in
            try? ContextPool.shared.withContext("destroy STRtree") { context in raw.destroy(context) }
        }
    }

    /// Number of indexed items.
    public var count: Int { items.count }

    /// Items whose boxes intersect `envelope` (finite, `minY <= maxY`); `minX > maxX` crosses the antimeridian.
    public func query(_ envelope: Envelope) throws(GEOSError) -> [Item] {
        try RawTree.check(envelope, "query STRtree", what: "query box")
        let boxes = RawTree.split(envelope)
        let indices = try tree.withLock { raw throws(GEOSError) -> [Int] in
            try ContextPool.shared.withContext("query STRtree") { context throws(GEOSError) in
                try raw.query(context, boxes: boxes)
            }
        }
        return indices.map { items[$0] }
    }

    /// Items whose boxes contain the point (x, y).
    public func query(x: Double, y: Double) throws(GEOSError) -> [Item] {
        try query(Envelope(minX: x, minY: y, maxX: x, maxY: y))
    }
}

extension STRTree: Sendable where Item: Sendable {}

/// The GEOS tree plus the box geometries it points into (the tree does not own them).
///
/// `@unchecked Sendable`: it is `~Copyable` (one owner) and, once built, lives only inside
/// its `STRTree`'s mutex, so the pointers are never used by two threads at once.
struct RawTree: ~Copyable, @unchecked Sendable {
    private let tree: OpaquePointer
    private let boxes: [OpaquePointer]
    private var destroyed = false

    init(_ context: Context, envelopes: [Envelope], nodeCapacity: Int) throws(GEOSError) {
        guard let tree = GEOSSTRtree_create_r(context.handle, max(2, nodeCapacity)) else {
            throw context.failure("create STRtree")
        }
        var boxes: [OpaquePointer] = []
        for (index, envelope) in envelopes.enumerated() {
            for part in RawTree.split(envelope) {
                guard let box = RawTree.makeBox(context, part) else {
                    let failure = context.failure("build STRtree")
                    GEOSSTRtree_destroy_r(context.handle, tree)
                    for box in boxes { context.destroy(box) }
                    throw failure
                }
                boxes.append(box)
                // Item pointer = index + 1, so no item is NULL.
                GEOSSTRtree_insert_r(context.handle, tree, box, UnsafeMutableRawPointer(bitPattern: index + 1))
            }
        }
        self.tree = tree
        self.boxes = boxes
    }

    /// Frees the tree, then the boxes it referenced. Call once, under the owner's lock.
    mutating func destroy(_ context: Context) {
        guard !destroyed else { return }
        destroyed = true
        GEOSSTRtree_destroy_r(context.handle, tree)
        for box in boxes { context.destroy(box) }
    }

    /// Sorted, de-duplicated indices of entries whose boxes intersect any of `boxes`.
    func query(_ context: Context, boxes: [Envelope]) throws(GEOSError) -> [Int] {
        var found = Set<Int>()
        for envelope in boxes {
            guard let probe = RawTree.makeBox(context, envelope) else { throw context.failure("query STRtree") }
            defer { context.destroy(probe) }
            withUnsafeMutablePointer(to: &found) { pointer in
                GEOSSTRtree_query_r(context.handle, tree, probe, { item, userdata in
                    guard let userdata else { return }
                    let found = userdata.assumingMemoryBound(to: Set<Int>.self)
                    found.pointee.insert(Int(bitPattern: item) - 1)
                }, pointer)
            }
        }
        return found.sorted()
    }

    /// Throws unless the box is finite with `minY <= maxY`.
    static func check(_ envelope: Envelope, _ operation: String, what: String) throws(GEOSError) {
        guard envelope.isFinite, envelope.minY <= envelope.maxY else {
            let reason = "\(what) must be finite with minY <= maxY, got \(envelope)"
            throw GEOSError(.invalidGeometry(reason: reason), operation: operation, message: reason)
        }
    }

    /// A geometry whose envelope is `envelope` (a point when degenerate).
    static func makeBox(_ context: Context, _ envelope: Envelope) -> OpaquePointer? {
        if envelope.minX == envelope.maxX, envelope.minY == envelope.maxY {
            return GEOSGeom_createPointFromXY_r(context.handle, envelope.minX, envelope.minY)
        }
        return GEOSGeom_createRectangle_r(context.handle, envelope.minX, envelope.minY, envelope.maxX, envelope.maxY)
    }

    /// Splits an antimeridian-crossing box (`minX > maxX`) into its two halves.
    static func split(_ envelope: Envelope) -> [Envelope] {
        guard envelope.minX > envelope.maxX else { return [envelope] }
        return [
            Envelope(minX: envelope.minX, minY: envelope.minY, maxX: 180, maxY: envelope.maxY),
            Envelope(minX: -180, minY: envelope.minY, maxX: envelope.maxX, maxY: envelope.maxY),
        ]
    }
}
