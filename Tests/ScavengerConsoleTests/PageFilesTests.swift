import Foundation
import ScavengerConsole
import Testing

@Suite("Pages as files: what the web front ends serve comes from files, not Swift strings")
struct PageFilesTests {
    @Test("a file's text is served without the final newline it ends with, and only that one", arguments: [
        ("body\n", "body"), ("body", "body"), ("body\n\n", "body\n"), ("", ""), ("\n", ""), ("é…\n", "é…"),
    ])
    func textDropsTheFinalNewline(file: String, served: String) {
        #expect(PageFiles.text(Array(file.utf8)) == served)
    }

    @Test("a page's include lines are replaced by the parts it is given; other lines stay as they are")
    func includes() {
        let page = "<main>\n<!--#include account.html-->\n<p>x <!--#include account.html--> y</p>\n</main>\n"
        #expect(PageFiles.page(Array(page.utf8), including: ["account.html": "<form>\n</form>"])
            == "<main>\n<form>\n</form>\n<p>x <!--#include account.html--> y</p>\n</main>")
    }

    /// The repository's `Sources/`.
    static var sources: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources")
    }

    @Test("no Swift source holds an HTML page, a style sheet or a browser script")
    func noPageInSwift() throws {
        let markers = ["<!doctype", "<html", "<body", "<script", "</style>", "document.getElementById", "addEventListener(", ":root {"]
        let files = try #require(FileManager.default.enumerator(at: Self.sources, includingPropertiesForKeys: nil))
        var checked = 0
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8).lowercased()
            checked += 1
            for marker in markers {
                #expect(!text.contains(marker.lowercased()), "\(file.lastPathComponent) holds \(marker)")
            }
        }
        #expect(checked > 100)
    }
}
