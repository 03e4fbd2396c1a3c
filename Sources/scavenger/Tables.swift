import Foundation
import ScavengerClient

/// Where the client's lines go: standard output and standard error, or (at the prompt) through
/// the line editor, above the line being typed.
struct Output: Sendable {
    var line: @Sendable (String) -> Void
    var error: @Sendable (String) -> Void

    static let standard = Output(line: { print($0) }, error: { FileHandle.standardError.write(Data(($0 + "\n").utf8)) })
}

/// How replies are printed: one JSON value per line (`--json`), or tables and indented JSON in
/// the reply's own key order.
struct Printer {
    var json: Bool
    var output = Output.standard

    /// Prints the JSON of an `OK` reply: a table for lists (pins, hunts, leaderboard rows, the
    /// commands of `HELP`, and any list of flat objects), a hunt with its stops, clues and hints,
    /// else the JSON (compact with `--json`, indented otherwise). Distances are whole metres.
    func reply(_ text: String) {
        if json {
            output.line(text)
            return
        }
        guard let value = OrderedJSON.parse(text).map(Self.roundingDistances) else {
            output.line(text)
            return
        }
        if let commands = value.array, !commands.isEmpty, commands.allSatisfy({ $0["syntax"] != nil && $0["summary"] != nil }) {
            table(["COMMAND", "SUMMARY"], commands.map { [s($0["command"]), s($0["summary"])] }, widest: 100)
            output.line("`help NAME` shows a command's arguments and options.")
            return
        }
        if value["syntax"] != nil, let summary = value["summary"], value["command"] != nil {
            output.line(s(value["syntax"]))
            for line in Self.wrap(s(summary), width: 76) { output.line("  " + line) }
            return
        }
        if let pins = value["pins"]?.array {
            printPins(pins, next: value["next"])
            return
        }
        if let cells = value["cells"]?.array, value["total"] != nil {
            // MAP: a row per cell, fullest first; a cell of one pin shows its id and text.
            table(["COUNT", "LAT", "LON", "PIN", "TEXT"], cells.map { cell in
                [s(cell["count"]), s(cell["lat"]), s(cell["lon"]), s(cell["pin"]?["id"]), s(cell["pin"]?["text"])]
            })
            output.line("\(s(value["total"])) pins in the box")
            return
        }
        if let hunts = value["hunts"]?.array {
            table(
                ["ID", "NAME", "STATE", "HOST", "STOPS", "PLAYERS", "STARTS"],
                hunts.map { [s($0["id"]), s($0["name"]), s($0["state"]), s($0["host"]), s($0["stops"]), s($0["players"]), s($0["starts"])] })
            more(value["next"])
            return
        }
        if let entries = value["entries"]?.array, entries.first?["rank"] != nil || entries.isEmpty && value["next"] != nil {
            // A team hunt's leaderboard (protocol 1.4): a row per team, its players last.
            let teams = entries.contains { $0["members"]?.array != nil }
            let first = teams ? ["RANK", "TEAM"] : ["RANK", "PLAYER"]
            let last = teams ? ["AT", "MEMBERS"] : ["AT"]
            func ending(_ entry: OrderedJSON) -> [String] {
                teams ? [s(entry["at"]), Self.members(entry)] : [s(entry["at"])]
            }
            if entries.contains(where: { $0["time_s"] != nil }) {
                // A time trial's leaderboard: ordered by stops found, then by the time taken.
                table(
                    first + ["POINTS", "FOUND", "TIME"] + last,
                    entries.map { [s($0["rank"]), s($0["player"]), s($0["points"]), s($0["found"]), $0["time_s"].flatMap { $0 == .null ? nil : s($0) + " s" } ?? "-"] + ending($0) })
            } else {
                table(
                    first + ["POINTS", "FOUND"] + last,
                    entries.map { [s($0["rank"]), s($0["player"]), s($0["points"]), s($0["found"])] + ending($0) })
            }
            more(value["next"])
            return
        }
        if let badges = value["badges"]?.array {
            table(
                ["BADGE", "NAME", "DESCRIPTION", "HUNT", "AT"],
                badges.map { [s($0["id"]), s($0["name"]), s($0["description"]), s($0["hunt"]), s($0["at"])] })
            return
        }
        if let hunt = value["hunt"], let stops = value["stops"]?.array {
            printHunt(hunt, stops: stops, reply: value)
            return
        }
        if printList(value) { return }
        output.line(value.pretty())
    }

    /// `HUNT`: the hunt, its stops with their clues, the hints sent so far, the caller's standing.
    func printHunt(_ hunt: OrderedJSON, stops: [OrderedJSON], reply: OrderedJSON) {
        let players = Self.count(hunt["players"], "player")
        output.line("\(s(hunt["name"])) (\(s(hunt["id"]))): \(s(hunt["state"])), hosted by \(s(hunt["host"])), \(players)")
        if case let .string(description)? = hunt["description"], !description.isEmpty { output.line(description) }
        if let code = hunt["code"] { output.line("join code: \(s(code))") }
        if let trial = hunt["trial"], trial != .null { output.line("time trial: \(s(trial)) s from each player's first check-in") }
        if let teams = hunt["teams"], teams != .null { output.line("teams of up to \(s(teams))") }
        if let badge = hunt["badge"], badge != .null { output.line("badge for completing it: \(s(badge))") }
        if stops.isEmpty {
            output.line(Self.count(hunt["stops"], "stop") + ", none of them shown to you yet")
        } else {
            table(
                ["N", "ID", "TITLE", "CLUE", "LAT", "LON", "RADIUS", "POINTS", "PROOF", "FOUND BY"],
                stops.map {
                    [s($0["n"]), s($0["id"]), s($0["title"]), s($0["clue"]), s($0["lat"]), s($0["lon"]),
                     $0["radius_m"].map { s($0) + " m" } ?? "-", s($0["points"]), s($0["proof"]), s($0["found_by"])]
                })
        }
        if let hints = reply["hints"]?.array, !hints.isEmpty {
            output.line("hints:")
            for hint in hints { output.line("  \(s(hint["at"]))  \(s(hint["text"]))") }
        }
        if let me = reply["me"], me != .null {
            let found = me["found"]?.array?.count ?? 0
            let standing = "\(Self.count(me["points"], "point")), \(Self.count(.number("\(found)", Double(found)), "stop")) found, rank \(s(me["rank"]))"
            // In a team hunt the standing is the team's.
            if let team = me["team"], team != .null {
                output.line("your team \(s(team)): \(standing)")
            } else {
                output.line("you: \(standing)")
            }
        }
        if let winners = reply["winners"]?.array, !winners.isEmpty {
            output.line("winners: " + winners.map { $0.isScalar ? s($0) : s($0["player"] ?? $0["name"]) }.joined(separator: ", "))
        }
    }

    func printPins(_ pins: [OrderedJSON], next: OrderedJSON?) {
        table(
            ["ID", "DISTANCE", "KIND", "AUTHOR", "REPLIES", "EXPIRES", "PHOTO", "TEXT"],
            pins.map { pin in
                [s(pin["id"]), pin["distance_m"].map { s($0) + " m" } ?? "", s(pin["kind"]), s(pin["author"]), s(pin["replies"]),
                 s(pin["expires"]), Self.photo(pin), s(pin["text"])]
            })
        more(next)
    }

    /// A reply holding one list of flat objects (and perhaps `next`): a table whose columns are
    /// the first object's keys, in the reply's order. False when the reply is not one.
    func printList(_ value: OrderedJSON) -> Bool {
        guard case let .object(members) = value else { return false }
        let lists = members.filter { $0.value.array != nil }
        guard lists.count == 1, members.allSatisfy({ $0.value.array != nil || $0.key == "next" }),
              let rows = lists[0].value.array, let first = rows.first, case let .object(columns) = first,
              rows.allSatisfy({ row in
                  if case let .object(cells) = row { return cells.allSatisfy { $0.value.isScalar } }
                  return false
              })
        else { return false }
        let keys = columns.map(\.key)
        table(keys.map { $0.uppercased() }, rows.map { row in keys.map { s(row[$0]) } })
        more(value["next"])
        return true
    }

    func more(_ next: OrderedJSON?) {
        if case let .string(cursor)? = next { output.line("more: CURSOR \(cursor)") }
    }

    /// An `ERR`: one JSON object on standard output with `--json`, else the line on standard
    /// error (a connection that could not be made, in plain words).
    func error(_ error: ScavengerError) {
        if json {
            var object: [String: Any] = ["error": error.code.rawValue, "message": error.message]
            if let seconds = error.retryAfterSeconds { object["retry_after"] = seconds }
            if let metres = error.distanceMeters { object["distance_m"] = metres }
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                output.line(String(decoding: data, as: UTF8.self))
            }
        } else if error.code == .connectionLost {
            output.error("scavenger: \(error.message)")
        } else {
            output.error(error.description)
        }
    }

    /// A table with a header, columns as wide as their widest cell (text cut at `widest`
    /// characters).
    func table(_ header: [String], _ rows: [[String]], widest: Int = 60) {
        let rows = rows.map { $0.map { cell in
            let flat = cell.replacingOccurrences(of: "\n", with: " ")
            return flat.count > widest ? String(flat.prefix(widest - 1)) + "…" : flat
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
        output.line(render(header))
        for row in rows { output.line(render(row)) }
        if rows.isEmpty { output.line("(none)") }
    }

    /// A team's players, from its leaderboard entry's `members`: "ann, bob"; "-" when none.
    /// A photo pin's size and paths on the HTTP port: `640×480 /photos/ID (thumb: …)`.
    static func photo(_ pin: OrderedJSON) -> String {
        func text(_ value: OrderedJSON?) -> String {
            switch value {
            case let .string(text)?: text
            case let .number(text, _)?: text
            default: "?"
            }
        }
        guard case .string(let url)? = pin["url"] else { return "" }
        return "\(text(pin["width"]))×\(text(pin["height"])) \(url) (thumb: \(text(pin["thumb"])))"
    }

    static func members(_ entry: OrderedJSON) -> String {
        guard let names = entry["members"]?.array, !names.isEmpty else { return "-" }
        return names.map { name in
            if case let .string(text) = name { return text }
            return name.pretty()
        }.joined(separator: ", ")
    }

    /// "1 player", "3 players", "- players" when the number is missing.
    static func count(_ value: OrderedJSON?, _ noun: String) -> String {
        guard case let .number(text, number)? = value else { return "- \(noun)s" }
        return number == 1 ? "\(text) \(noun)" : "\(text) \(noun)s"
    }

    /// Every `distance_m` in whole metres: a great-circle distance to the millimetre says nothing
    /// more to a person.
    static func roundingDistances(_ value: OrderedJSON) -> OrderedJSON {
        switch value {
        case let .object(members):
            return .object(members.map { member in
                if member.key == "distance_m", case let .number(_, metres) = member.value {
                    let rounded = metres.rounded()
                    return (member.key, .number(String(format: "%.0f", rounded), rounded))
                }
                return (member.key, roundingDistances(member.value))
            })
        case let .array(items): return .array(items.map(roundingDistances))
        default: return value
        }
    }

    /// Words of `text` in lines of at most `width` characters (a longer word has a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    private func s(_ value: OrderedJSON?) -> String {
        switch value {
        case nil, .null?: return "-"
        case let .string(text)?: return text
        case let .number(text, _)?: return text
        case let .bool(flag)?: return flag ? "yes" : "no"
        case let value?: return value.pretty().replacingOccurrences(of: "\n", with: " ")
        }
    }
}
