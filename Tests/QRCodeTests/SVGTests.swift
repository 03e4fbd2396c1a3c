import Foundation
import QRCode
import Testing
#if canImport(FoundationXML)
import FoundationXML
#endif

/// What an SVG document says, read by Foundation's XMLParser.
private final class SVGReader: NSObject, XMLParserDelegate {
    var elements: [String] = []
    var attributes: [String: [String: String]] = [:]
    var texts: [String: String] = [:]
    private var current: String?

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName: String?, attributes: [String: String] = [:]) {
        elements.append(elementName)
        self.attributes[elementName] = attributes
        current = elementName
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let current { texts[current, default: ""] += string }
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        current = nil
    }

    /// Parses `svg`, failing the test (with the parser's error) unless it is well-formed XML.
    static func read(_ svg: String) throws -> SVGReader {
        let reader = SVGReader()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = reader
        let parsed = parser.parse()
        #expect(parsed, "not well-formed XML: \(String(describing: parser.parserError))\n\(svg)")
        try #require(parsed)
        return reader
    }
}

/// The modules a path of `M x,y h n v1 h-n z` runs paints, each as (column, row).
private func paintedModules(_ path: String) throws -> [[Int]] {
    var painted: [[Int]] = []
    for run in path.split(separator: "z") {
        let fields = run.split(whereSeparator: { "Mhv,".contains($0) })
        let values = fields.compactMap { Int($0) }
        try #require(values.count == 5 && fields.count == 5 && run.hasPrefix("M"), "not a run: \(run)")
        #expect(values[3] == 1 && values[4] == -values[2], "not a one-module-high rectangle: \(run)")
        for x in values[0]..<(values[0] + values[2]) { painted.append([x, values[1]]) }
    }
    return painted
}

@Suite struct SVG {
    @Test("A standalone document: namespace, viewBox, crisp edges, a white background, one path")
    func document() throws {
        let code = try QRCode.encode("https://example.org/hunt/42", correction: .medium)
        let svg = code.svg()
        #expect(svg.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "))
        let reader = try SVGReader.read(svg)
        #expect(reader.elements == ["svg", "rect", "path"])
        let side = code.size + 8
        let root = try #require(reader.attributes["svg"])
        #expect(root["xmlns"] == "http://www.w3.org/2000/svg")
        #expect(root["viewBox"] == "0 0 \(side) \(side)")
        #expect(root["width"] == "\(side * 8)" && root["height"] == "\(side * 8)")
        #expect(root["shape-rendering"] == "crispEdges")
        let background = try #require(reader.attributes["rect"])
        #expect(background["width"] == "\(side)" && background["height"] == "\(side)")
        #expect(background["fill"] == "#fff" && background["x"] == nil && background["y"] == nil)
        #expect(reader.attributes["path"]?["fill"] == "#000")
    }

    @Test("The path paints exactly the dark modules, offset by the quiet zone",
          arguments: [(4, 8), (0, 1), (2, 3)])
    func pathIsTheModules(quietZone: Int, moduleSize: Int) throws {
        let code = try QRCode.encode("Stop 3: the old mill, behind the wheel", correction: .high)
        let svg = code.svg(moduleSize: moduleSize, quietZone: quietZone)
        let reader = try SVGReader.read(svg)
        let side = code.size + 2 * quietZone
        #expect(reader.attributes["svg"]?["viewBox"] == "0 0 \(side) \(side)")
        #expect(reader.attributes["svg"]?["width"] == "\(side * moduleSize)")
        let path = try #require(reader.attributes["path"]?["d"])
        let painted = try paintedModules(path)
        var dark: [[Int]] = []
        for y in 0..<code.size {
            for x in 0..<code.size where code.isDark(x: x, y: y) { dark.append([x + quietZone, y + quietZone]) }
        }
        let darkSet = Set(dark)
        #expect(painted.count == Set(painted).count, "a module painted twice")
        #expect(Set(painted) == darkSet)
        // One rectangle per maximal run: as many as dark modules whose left neighbour is light.
        let runStarts = dark.filter { !darkSet.contains([$0[0] - 1, $0[1]]) }.count
        #expect(path.split(separator: "z").count == runStarts)
        #expect(runStarts < dark.count)
    }

    @Test("A hostile caption is escaped and reads back as given", arguments: [
        "<script>&\"'", "</text></svg><script>alert(1)</script>", "]]><!-- &amp; &#x41; <![CDATA[ x",
        "Stop 3 — Café ☕ 🦆", "a\tb\nc",
    ])
    func hostileCaption(title: String) throws {
        let code = try QRCode.encode("x")
        let svg = code.svg(title: title)
        let reader = try SVGReader.read(svg)
        #expect(reader.elements == ["svg", "title", "rect", "path", "text"])
        #expect(reader.texts["text"] == title)
        #expect(reader.texts["title"] == title)
        #expect(!svg.contains("<script"))
        let text = try #require(reader.attributes["text"])
        #expect(text["text-anchor"] == "middle")
        // The caption sits below the code's square, quiet zone included.
        let side = code.size + 8
        let y = try #require(text["y"].flatMap(Double.init))
        #expect(y > Double(side))
        let height = try #require(reader.attributes["svg"]?["viewBox"]?.split(separator: " ").last.flatMap { Double($0) })
        #expect(y < height)
        #expect(reader.attributes["rect"]?["height"] == "\(Int(height))")
    }

    @Test("Each of & < > \" ' is written as an entity")
    func entities() throws {
        let svg = try QRCode.encode("x").svg(title: "<script>&\"'")
        #expect(svg.contains(">&lt;script&gt;&amp;&quot;&apos;</text>"))
        #expect(svg.contains("<title>&lt;script&gt;&amp;&quot;&apos;</title>"))
    }

    @Test("Characters XML cannot carry become U+FFFD")
    func forbiddenCharacters() throws {
        let svg = try QRCode.encode("x").svg(title: "a\u{0}b\u{1B}[31mc\u{FFFE}d")
        let reader = try SVGReader.read(svg)
        #expect(reader.texts["text"] == "a\u{FFFD}b\u{FFFD}[31mc\u{FFFD}d")
    }

    @Test("No caption for nil or empty text", arguments: [nil, ""] as [String?])
    func noCaption(title: String?) throws {
        let code = try QRCode.encode("x")
        let reader = try SVGReader.read(code.svg(title: title))
        #expect(reader.elements == ["svg", "rect", "path"])
        #expect(code.svg(title: title) == code.svg())
    }

    @Test("A long caption gets a smaller font than a short one")
    func captionFontShrinks() throws {
        let code = try QRCode.encode("x")
        let short = try #require(SVGReader.read(code.svg(title: "Mill")).attributes["text"]?["font-size"].flatMap(Double.init))
        let long = try #require(SVGReader.read(code.svg(title: String(repeating: "The old mill ", count: 8)))
            .attributes["text"]?["font-size"].flatMap(Double.init))
        #expect(short == 2.5)
        #expect(long < short && long > 0)
        // About 0.6 em per character: the estimate stays within 90% of the 29-module side.
        #expect(long * 0.6 * 104 <= 29 * 0.9 + 0.01)
    }
}
