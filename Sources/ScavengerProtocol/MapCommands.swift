import ScavengerBoard
import ScavengerCore

/// MAP: pins counted per map cell, answered from memory.
enum MapCommands {
    /// `south west north east ZOOM z`, as MAP and WATCH MAP take them (numbers only: the
    /// board judges the box). Returns the box and the zoom; the options after ZOOM are the
    /// caller's to read.
    static func box(_ arguments: inout Arguments) throws(CommandError) -> MapRequest {
        var values: [Double] = []
        for name in ["south", "west", "north", "east"] {
            values.append(try Arguments.number(try arguments.required(name), name))
        }
        let keyword = try arguments.required("ZOOM")
        guard keyword.text.asciiUppercased == "ZOOM" else {
            throw .badArgument("expected ZOOM after the box, got \(Reply.echo(keyword.text))")
        }
        let zoom = try Arguments.integer(try arguments.required("zoom"), "ZOOM", in: MapGrid.zooms)
        return MapRequest(south: values[0], west: values[1], north: values[2], east: values[3], zoom: zoom)
    }

    /// A MAP request as the board checks it: `BAD_ARGUMENT` with the board's words.
    static func checked(_ request: MapRequest) throws(CommandError) -> MapRequest {
        if let problem = request.problem { throw .badArgument(problem) }
        return request
    }

    static let all: [CommandSpec] = [
        CommandSpec(
            "MAP", arity: 6 ... 10, syntax: "MAP south west north east ZOOM z [KIND text|photo] [LIMIT n]",
            summary: "Live pins in a box counted per map cell at zoom z (0-22), the fullest LIMIT cells (default 500, at most 2000) and the total.",
            parse: { arguments -> MapRequest in
                var request = try box(&arguments)
                let options = try arguments.options(["KIND", "LIMIT"])
                request.kind = try FeedCommands.kind(options["KIND"])
                if let limit = options["LIMIT"] {
                    request.limit = try Arguments.integer(limit, "LIMIT", in: 1 ... MapRequest.maximumLimit)
                }
                return try checked(request)
            },
            answer: { request, context in
                CommandOutcome(.ok(.raw(encode(try context.board.map(request)))))
            }),
    ]

    /// `{"cells": [cell…], "total": n}`.
    static func encode(_ answer: MapAnswer<Pin>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32 + answer.cells.count * 120)
        bytes.append(contentsOf: #"{"cells":["#.utf8)
        appendCells(answer.cells, to: &bytes)
        bytes.append(contentsOf: #"],"total":"#.utf8)
        bytes.append(contentsOf: String(answer.total).utf8)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The cells, comma-separated: `{"lat", "lon", "count", "box": [s, w, n, e], "pin"}` each.
    static func appendCells(_ cells: [MapCell<Pin>], to bytes: inout [UInt8]) {
        for (index, cell) in cells.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes.append(contentsOf: #"{"lat":"#.utf8)
            JSON.appendNumber(cell.lat, to: &bytes)
            bytes.append(contentsOf: #","lon":"#.utf8)
            JSON.appendNumber(cell.lon, to: &bytes)
            bytes.append(contentsOf: #","count":"#.utf8)
            bytes.append(contentsOf: String(cell.count).utf8)
            let box = cell.tile.box
            bytes.append(contentsOf: #","box":["#.utf8)
            for (position, value) in [box.south, box.west, box.north, box.east].enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                JSON.appendNumber(value, to: &bytes)
            }
            bytes.append(contentsOf: #"],"pin":"#.utf8)
            if let pin = cell.pin {
                JSON.appendPin(pin, distance: nil, to: &bytes)
            } else {
                bytes.append(contentsOf: "null".utf8)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}
