extension QRCode {
    /// A standalone SVG document of the code, for printing: black modules on a white background,
    /// with the quiet zone around them and an optional caption below.
    ///
    /// The document's user units are modules (`viewBox` is the symbol plus its quiet zone, plus a
    /// band for the caption); `width` and `height` are `moduleSize` pixels per module, and
    /// `shape-rendering="crispEdges"` keeps module edges sharp. The dark modules are one `<path>`
    /// with a rectangle per horizontal run of each row.
    ///
    /// - Parameters:
    ///   - moduleSize: pixels per module in `width` and `height`, at least 1. The default, 8,
    ///     prints a version 1 code about 6 cm wide at 96 dpi.
    ///   - quietZone: light modules around the symbol, at least 0; the standard asks for 4.
    ///   - title: a caption centred under the code (and the document's `<title>`), or `nil` or
    ///     empty for none. It is user content: XML-escaped, with characters XML cannot carry
    ///     replaced by U+FFFD. Its font size shrinks with its length (estimated, not measured)
    ///     so that it stays about as wide as the code.
    public func svg(moduleSize: Int = 8, quietZone: Int = 4, title: String? = nil) -> String {
        precondition(moduleSize >= 1, "moduleSize must be at least 1")
        precondition(quietZone >= 0, "quietZone must not be negative")
        let side = size + 2 * quietZone
        let caption = title.flatMap { $0.isEmpty ? nil : Self.xmlEscaped($0) }

        // Caption metrics, in hundredths of a module: at most 2.5 modules high, and narrower
        // than 90% of the side if a glyph is about 0.6 of the font size wide.
        var band = 0
        var fontSize = 0
        if let title, caption != nil {
            fontSize = max(1, min(250, side * 150 / max(1, title.count)))
            band = (2 * fontSize + 99) / 100
        }
        let height = side + band

        var svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\""
        svg += " width=\"\(side * moduleSize)\" height=\"\(height * moduleSize)\""
        svg += " viewBox=\"0 0 \(side) \(height)\" shape-rendering=\"crispEdges\">\n"
        if let caption { svg += "<title>\(caption)</title>\n" }
        svg += "<rect width=\"\(side)\" height=\"\(height)\" fill=\"#fff\"/>\n"
        svg += "<path fill=\"#000\" d=\""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else {
                    x += 1
                    continue
                }
                let start = x
                while x < size, isDark(x: x, y: y) { x += 1 }
                let run = x - start
                svg += "M\(start + quietZone),\(y + quietZone)h\(run)v1h-\(run)z"
            }
        }
        svg += "\"/>\n"
        if let caption {
            // The baseline sits about a third of the font size below the band's middle.
            let baseline = side * 100 + band * 50 + fontSize * 35 / 100
            svg += "<text x=\"\(Self.hundredths(side * 50))\" y=\"\(Self.hundredths(baseline))\""
            svg += " font-family=\"sans-serif\" font-size=\"\(Self.hundredths(fontSize))\""
            svg += " text-anchor=\"middle\" fill=\"#000\">\(caption)</text>\n"
        }
        svg += "</svg>\n"
        return svg
    }

    /// `value / 100` as a decimal without trailing zeros: 250 is "2.5", 1700 is "17".
    private static func hundredths(_ value: Int) -> String {
        let whole = value / 100
        let fraction = value % 100
        if fraction == 0 { return "\(whole)" }
        if fraction % 10 == 0 { return "\(whole).\(fraction / 10)" }
        return fraction < 10 ? "\(whole).0\(fraction)" : "\(whole).\(fraction)"
    }

    /// `text` as XML character data that is also safe in a quoted attribute: `& < > " '` escaped,
    /// and the characters XML 1.0 forbids (control characters other than tab, line feed and
    /// carriage return; U+FFFE and U+FFFF) replaced by U+FFFD.
    static func xmlEscaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r", "\u{20}"..."\u{D7FF}", "\u{E000}"..."\u{FFFD}", "\u{10000}"..."\u{10FFFF}":
                out.unicodeScalars.append(scalar)
            default:
                out.unicodeScalars.append("\u{FFFD}")
            }
        }
        return out
    }
}
