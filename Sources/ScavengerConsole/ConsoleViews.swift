import Foundation
import ScavengerCore

/// Turns the domain's values into what the templates show: plain dictionaries of strings,
/// booleans and lists (mustache escapes every value it prints).
enum ConsoleViews {
    /// Reporters whose accounts were younger than this when they reported are flagged.
    static let freshAccountSeconds = 24 * 3600

    /// `2026-11-23 14:05 UTC`.
    static func time(_ timestamp: Timestamp) -> String {
        let text = timestamp.rfc3339
        guard text.count >= 16 else { return text }
        return String(text.prefix(10)) + " " + String(text.dropFirst(11).prefix(5)) + " UTC"
    }

    /// A duration as a person reads it: `40 s`, `12 min`, `5 h`, `3 d`.
    static func age(seconds: Int) -> String {
        switch seconds {
        case ..<60: return "\(max(0, seconds)) s"
        case ..<3600: return "\(seconds / 60) min"
        case ..<(2 * 86400): return "\(seconds / 3600) h"
        default: return "\(seconds / 86400) d"
        }
    }

    static func ban(_ end: BanEnd?) -> String? {
        switch end {
        case nil: return nil
        case .permanent?: return "forever"
        case .until(let time)?: return self.time(time)
        }
    }

    static func reasons(_ item: ModerationItem) -> [[String: Any]] {
        item.reasons.map { ["reason": $0.reason, "count": $0.count] }
    }

    /// What a queue card or an item page shows of the item itself.
    static func item(_ item: ModerationItem) -> [String: Any] {
        let content = item.content
        var view: [String: Any] = [
            "item": item.item, "kind": item.kind, "text": content.text, "author": content.author,
            "created": time(content.created), "status": item.status.rawValue, "hidden": item.hidden,
            "reports": item.reports, "single": item.reports == 1, "reasons": reasons(item),
            "firstReported": time(item.firstReported), "lastReported": time(item.lastReported),
            "lat": coordinate(content.lat), "lon": coordinate(content.lon),
        ]
        if let claimedBy = item.claimedBy { view["claimedBy"] = claimedBy }
        if let resolution = item.resolution { view["resolution"] = resolution.rawValue }
        if let expires = content.expires { view["expires"] = time(expires) }
        if let parent = content.pin { view[Identifier.isHunt(parent) ? "hunt" : "pin"] = parent }
        if content.photo != nil {
            if content.photoKept {
                view["photoURL"] = "/mod/photo/\(item.item)"
                view["thumbURL"] = "/mod/photo/\(item.item)?size=thumb"
            } else {
                view["photoGone"] = true
            }
        }
        return view
    }

    static func coordinate(_ value: Double) -> String {
        String(format: "%.5f", value)
    }

    /// Reporters' ages for a queue card, and how many were fresh.
    static func ages(_ reports: [ItemReport]) -> (ages: [[String: Any]], fresh: Int) {
        let ages = reports.map { report -> [String: Any] in
            ["text": age(seconds: report.reporterAgeSeconds), "fresh": report.reporterAgeSeconds < freshAccountSeconds]
        }
        return (ages, reports.filter { $0.reporterAgeSeconds < freshAccountSeconds }.count)
    }

    static func report(_ report: ItemReport) -> [String: Any] {
        [
            "reporter": report.reporter, "age": age(seconds: report.reporterAgeSeconds),
            "fresh": report.reporterAgeSeconds < freshAccountSeconds, "reason": report.reason.rawValue,
            "note": report.note ?? "", "at": time(report.at),
        ]
    }

    static func content(_ content: AuthoredContent) -> [String: Any] {
        ["id": content.id, "text": content.text, "created": time(content.created), "hidden": content.hidden]
    }

    static func logEntry(_ entry: ModerationLogEntry) -> [String: Any] {
        var view: [String: Any] = [
            "at": time(entry.at), "moderator": entry.moderator, "action": entry.action, "user": entry.user ?? "",
            "note": entry.note ?? "",
        ]
        if let item = entry.item { view["item"] = item }
        return view
    }

    static func author(_ history: AuthorHistory) -> [String: Any] {
        var view: [String: Any] = [
            "name": history.name, "role": history.role.rawValue, "joined": time(history.joined),
            "pins": history.pins.map(content), "replies": history.replies.map(content),
            "reportedItems": history.reportedItems.map { item -> [String: Any] in
                var view: [String: Any] = ["item": item.item, "reports": item.reports, "status": item.status.rawValue]
                if let resolution = item.resolution { view["resolution"] = resolution.rawValue }
                return view
            },
            "actions": history.actions.map(logEntry),
        ]
        if let ban = ban(history.ban) { view["ban"] = ban }
        return view
    }

    /// An OpenStreetMap link centred on a place.
    static func openStreetMapURL(lat: Double, lon: Double) -> String {
        let lat = coordinate(lat)
        let lon = coordinate(lon)
        return "https://www.openstreetmap.org/?mlat=\(lat)&mlon=\(lon)#map=17/\(lat)/\(lon)"
    }

    /// The choices of a select, one marked selected.
    static func options(_ choices: [(value: String, label: String)], selected: String) -> [[String: Any]] {
        choices.map { ["value": $0.value, "label": $0.label, "selected": $0.value == selected] }
    }
}

/// A small map drawn without tiles: the reported place at the centre, nearby pins around it, a
/// scale bar; an SVG, so it works with no network at all.
enum ConsoleMap {
    /// Pixels from the centre to the edge of the drawn circle.
    static let size = 320.0
    static let margin = 20.0

    /// Where a point lies on the drawing, in pixels from its top left, or nil when it is outside
    /// the radius drawn (a local flat projection: fine at these distances).
    static func position(lat: Double, lon: Double, centreLat: Double, centreLon: Double, radius: Double) -> (x: Double, y: Double)? {
        let metresPerDegree = Geodesy.earthRadius * .pi / 180
        let east = metresPerDegree * cos(centreLat * .pi / 180) * wrapped(lon - centreLon)
        let north = metresPerDegree * (lat - centreLat)
        guard (east * east + north * north).squareRoot() <= radius * 1.0001 else { return nil }
        let scale = (size / 2 - margin) / radius
        return (size / 2 + east * scale, size / 2 - north * scale)
    }

    /// A longitude difference in -180…180.
    static func wrapped(_ degrees: Double) -> Double {
        var value = degrees.truncatingRemainder(dividingBy: 360)
        if value > 180 { value -= 360 }
        if value < -180 { value += 360 }
        return value
    }

    /// A round scale length (1, 2 or 5 × a power of ten metres) about a quarter of the radius.
    static func scaleMetres(radius: Double) -> Double {
        let target = max(radius / 4, 1)
        let power = pow(10, floor(log10(target)))
        for step in [5.0, 2.0, 1.0] where step * power <= target { return step * power }
        return power
    }

    static func label(metres: Double) -> String {
        metres >= 1000 ? "\(Int(metres / 1000)) km" : "\(Int(metres)) m"
    }

    /// The SVG: `others` are the nearby pins (lat, lon, text), drawn grey; the centre red.
    static func svg(centreLat: Double, centreLon: Double, radius: Double, others: [(lat: Double, lon: Double, text: String)]) -> String {
        func number(_ value: Double) -> String { String(format: "%.1f", value) }
        var svg = """
            <svg class="map" viewBox="0 0 \(Int(size)) \(Int(size))" role="img" aria-labelledby="map-title" xmlns="http://www.w3.org/2000/svg">
            <title id="map-title">The reported place and \(others.count) other live pin\(others.count == 1 ? "" : "s") within \(label(metres: radius))</title>
            <circle cx="\(number(size / 2))" cy="\(number(size / 2))" r="\(number(size / 2 - margin))" fill="#fff" stroke="#9aa" stroke-dasharray="4 4"/>
            <text x="\(number(size / 2))" y="14" text-anchor="middle" font-size="11" fill="#333">N ↑</text>

            """
        for other in others {
            guard let point = position(lat: other.lat, lon: other.lon, centreLat: centreLat, centreLon: centreLon, radius: radius) else { continue }
            svg += "<circle cx=\"\(number(point.x))\" cy=\"\(number(point.y))\" r=\"4\" fill=\"#666\"><title>\(escape(other.text))</title></circle>\n"
        }
        svg += """
            <circle cx="\(number(size / 2))" cy="\(number(size / 2))" r="7" fill="#c00" stroke="#fff" stroke-width="2"><title>The reported place</title></circle>

            """
        let scale = scaleMetres(radius: radius)
        let length = scale * (size / 2 - margin) / radius
        let y = size - 10
        svg += """
            <line x1="10" y1="\(number(y))" x2="\(number(10 + length))" y2="\(number(y))" stroke="#222" stroke-width="3"/>
            <text x="10" y="\(number(y - 6))" font-size="11" fill="#222">\(label(metres: scale))</text>
            </svg>
            """
        return svg
    }

    /// Escapes text for an SVG element's content.
    static func escape(_ text: String) -> String {
        var escaped = ""
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }
}
