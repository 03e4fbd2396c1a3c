import GEOS
import ScavengerCore
import Synchronization

/// A named region's boundary, checked: what `scavengerd region set` stores.
public struct RegionDefinition: Sendable, Equatable {
    public var name: String
    /// The GeoJSON as given (a Polygon or MultiPolygon, bare, Feature or FeatureCollection of one).
    public var geoJSON: String
    /// Bounding box: x is longitude, y latitude.
    public var envelope: Envelope
    /// Area in square degrees; the smaller of two overlapping regions is the more specific.
    public var area: Double

    public init(name: String, geoJSON: String, envelope: Envelope, area: Double) {
        self.name = name
        self.geoJSON = geoJSON
        self.envelope = envelope
        self.area = area
    }

    /// Checks the name and the geometry; the error is one line for the operator.
    public static func parse(name: String, geoJSON: String) throws(RegionError) -> RegionDefinition {
        do {
            try Validation.regionName(name)
        } catch {
            throw .invalidName(error.message)
        }
        let geometry: Geometry
        do {
            geometry = try Geometry.region(geoJSON: geoJSON)
        } catch {
            throw .invalidGeometry(error.message)
        }
        guard let envelope = geometry.envelope, let area = try? geometry.area else {
            throw .invalidGeometry("the region is empty")
        }
        return RegionDefinition(name: name, geoJSON: geoJSON, envelope: envelope, area: area)
    }
}

/// Why a region was refused.
public enum RegionError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidName(String)
    case invalidGeometry(String)

    public var description: String {
        switch self {
        case .invalidName(let message): return message
        case .invalidGeometry(let message): return message
        }
    }
}

/// Which named region a point belongs to: GEOS does the work, an STRtree of the regions' boxes
/// finds candidates and prepared geometries make the exact test. A point on a boundary belongs to
/// the region; where regions overlap, the smallest (then the first by name) wins.
///
/// Built once from all regions; build a new one when they change. Safe to share: GEOS objects
/// are used under a lock, one caller at a time.
public final class RegionIndex: Sendable {
    /// The regions, by name.
    public let definitions: [String: RegionDefinition]
    private let state: Mutex<State>

    private struct State: ~Copyable {
        var tree: STRTree<Int>?
        var shapes: [PreparedGeometry]
        var order: [RegionDefinition]
    }

    /// An index of no regions.
    public static let empty = try! RegionIndex([])

    public init(_ regions: [RegionDefinition]) throws(RegionError) {
        // Most specific first, so the first hit wins.
        let order = regions.sorted { ($0.area, $0.name) < ($1.area, $1.name) }
        var shapes: [PreparedGeometry] = []
        var entries: [(Envelope, Int)] = []
        for (index, region) in order.enumerated() {
            do {
                shapes.append(try PreparedGeometry(Geometry.region(geoJSON: region.geoJSON)))
            } catch {
                throw .invalidGeometry("region \(region.name): \(error.message)")
            }
            entries.append((region.envelope, index))
        }
        let tree: STRTree<Int>?
        do {
            tree = entries.isEmpty ? nil : try STRTree(envelopes: entries)
        } catch {
            throw .invalidGeometry(error.message)
        }
        definitions = Dictionary(uniqueKeysWithValues: regions.map { ($0.name, $0) })
        state = Mutex(State(tree: tree, shapes: shapes, order: order))
    }

    /// Region names, sorted.
    public var names: [String] { definitions.keys.sorted() }

    /// The name of the region the point lies in, or nil.
    public func region(lat: Double, lon: Double) -> String? {
        state.withLock { state -> String? in
            guard let tree = state.tree, let candidates = try? tree.query(x: lon, y: lat) else { return nil }
            for index in candidates.sorted() where (try? state.shapes[index].coversPoint(x: lon, y: lat)) == true {
                return state.order[index].name
            }
            return nil
        }
    }
}
