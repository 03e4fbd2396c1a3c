import Foundation
import ScavengerClient

/// How replies are printed: one JSON value per line (`--json`), or tables and indented JSON.
struct Printer {
    var json: Bool

    /// Prints the JSON of an `OK` reply: a table for lists of pins, hunts and leaderboard rows,
    /// else the JSON (compact with `--json`, indented otherwise).
    func reply(_ text: String) {
        if json {
            print(text)
            return
        }
        guard let value = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) else {
            print(text)
            return
        }
        if let object = value as? [String: Any] {
            if let pins = object["pins"] as? [[String: Any]] {
                printPins(pins, next: object["next"])
                return
            }
            if let hunts = object["hunts"] as? [[String: Any]] {
                table(
                    ["ID", "NAME", "STATE", "HOST", "STOPS", "PLAYERS", "STARTS"],
                    hunts.map { [s($0["id"]), s($0["name"]), s($0["state"]), s($0["host"]), s($0["stops"]), s($0["players"]), s($0["starts"])] })
                more(object["next"])
                return
            }
            if let entries = object["entries"] as? [[String: Any]], entries.first?["rank"] != nil || entries.isEmpty && object["next"] != nil {
                table(
                    ["RANK", "PLAYER", "POINTS", "FOUND", "AT"],
                    entries.map { [s($0["rank"]), s($0["player"]), s($0["points"]), s($0["found"]), s($0["at"])] })
                more(object["next"])
                return
            }
            if let hunt = object["hunt"] as? [String: Any], let stops = object["stops"] as? [[String: Any]] {
                print("\(s(hunt["name"])) (\(s(hunt["id"]))): \(s(hunt["state"])), hosted by \(s(hunt["host"])), \(s(hunt["players"])) players")
                if let code = hunt["code"] { print("join code: \(s(code))") }
                table(
                    ["N", "ID", "TITLE", "LAT", "LON", "RADIUS", "POINTS", "PROOF", "FOUND BY"],
                    stops.map { [s($0["n"]), s($0["id"]), s($0["title"]), s($0["lat"]), s($0["lon"]), s($0["radius_m"]), s($0["points"]), s($0["proof"]), s($0["found_by"])] })
                if let me = object["me"] as? [String: Any] { print("you: \(s(me["points"])) points, rank \(s(me["rank"]))") }
                return
            }
        }
        pretty(value)
    }

    func printPins(_ pins: [[String: Any]], next: Any?) {
        table(
            ["ID", "DISTANCE", "KIND", "AUTHOR", "REPLIES", "EXPIRES", "TEXT"],
            pins.map { pin in
                let distance = (pin["distance_m"] as? NSNumber).map { String(format: "%.0f m", $0.doubleValue) } ?? ""
                return [s(pin["id"]), distance, s(pin["kind"]), s(pin["author"]), s(pin["replies"]), s(pin["expires"]), s(pin["text"])]
            })
        more(next)
    }

    func more(_ next: Any?) {
        if let next = next as? String { print("more: CURSOR \(next)") }
    }

    /// Indented JSON.
    func pretty(_ value: Any) {
        if let data = try? JSONSerialization.data(withJSONObject: value, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]) {
            print(String(decoding: data, as: UTF8.self))
        }
    }

    /// An `ERR`: one JSON object on standard output with `--json`, else the line on standard error.
    func error(_ error: ScavengerError) {
        if json {
            var object: [String: Any] = ["error": error.code.rawValue, "message": error.message]
            if let seconds = error.retryAfterSeconds { object["retry_after"] = seconds }
            if let metres = error.distanceMeters { object["distance_m"] = metres }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                print(String(decoding: data, as: UTF8.self))
            }
        } else {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
        }
    }

    /// A table with a header, columns as wide as their widest cell (text cut at 60 characters).
    func table(_ header: [String], _ rows: [[String]]) {
        let rows = rows.map { $0.map { cell in
            let flat = cell.replacingOccurrences(of: "\n", with: " ")
            return flat.count > 60 ? String(flat.prefix(59)) + "…" : flat
        } }
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
        }
        func render(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell + String(repeating: " ", count: widths[index] - cell.count)
            }.joined(separator: "  ")
        }
        print(render(header))
        for row in rows { print(render(row)) }
        if rows.isEmpty { print("(none)") }
    }

    private func s(_ value: Any?) -> String {
        switch value {
        case nil, is NSNull: return "-"
        case let string as String: return string
        case let number as NSNumber:
            return number.stringValue
        default: return "\(value!)"
        }
    }
}
