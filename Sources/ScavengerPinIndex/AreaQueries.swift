import ScavengerCore

// Pins by area, hidden and expired included: for assigning regions.

extension PinIndex {
    /// Positions of the pins (hidden and expired included) in a latitude/longitude box, in
    /// degrees; `minLon > maxLon` means a box across the antimeridian. For assigning regions.
    func locations(minLat: Double, maxLat: Double, minLon: Double, maxLon: Double) -> [(id: String, lat: Double, lon: Double)] {
        var result: [(id: String, lat: Double, lon: Double)] = []
        let cold = cold.buffer
        for (slot, hotRecord) in hot.buffer.enumerated() where hotRecord.flags & HotRecord.occupied != 0 {
            let record = cold[slot]
            guard record.lat >= minLat, record.lat <= maxLat else { continue }
            let inside = minLon <= maxLon
                ? record.lon >= minLon && record.lon <= maxLon
                : record.lon >= minLon || record.lon <= maxLon
            if inside { result.append((record.key.string, record.lat, record.lon)) }
        }
        return result
    }

    /// Ids of the pins (hidden and expired included) in the given cells.
    func pinIDs(inCells cells: [CellKey]) -> [String] {
        cells.flatMap { cell in
            if Self.levels.contains(cell.level) {
                return buckets[cell.level].slots(in: cell).map { cold[Int($0)].key.string }
            }
            var ids: [String] = []
            for (slot, record) in hot.buffer.enumerated() where record.flags & HotRecord.occupied != 0 {
                let coldRecord = cold[slot]
                if Grid.cell(lat: coldRecord.lat, lon: coldRecord.lon, level: cell.level) == cell { ids.append(coldRecord.key.string) }
            }
            return ids
        }
    }
}
