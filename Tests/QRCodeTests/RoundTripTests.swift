import Foundation
import QRCode
import ScavengerTestSupport
import Testing

/// External tools the round trip needs. scripts/test.sh installs their Debian packages
/// (SCAVENGER_TEST_PACKAGES in scripts/lib.sh); the tests install nothing and fail without them.
private enum Tool {
    /// The executable `name` on PATH, or a failed test that names its package.
    static func require(_ name: String, package: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let found = path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(found, "\(name) is not on PATH: install the Debian package \(package) (scripts/test.sh does)")
    }

    /// Runs `executable` and returns its exit status and standard output (standard error is kept
    /// for failure messages).
    static func run(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, output: Data, errors: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Both tools write little to standard error: reading it second cannot block the first.
        let outputData = readToEnd(output.fileHandleForReading)
        let errorData = readToEnd(errors.fileHandleForReading)
        process.waitUntilExit()
        return (process.terminationStatus, outputData, String(decoding: errorData, as: UTF8.self))
    }
}

/// Renders `svg` to PNG with rsvg-convert and returns what zbarimg reads in it, as raw bytes.
private func decode(_ svg: String) throws -> [UInt8] {
    let rsvg = try Tool.require("rsvg-convert", package: "librsvg2-bin")
    let zbar = try Tool.require("zbarimg", package: "zbar-tools")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qrcode-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let svgFile = directory.appendingPathComponent("code.svg")
    let pngFile = directory.appendingPathComponent("code.png")
    try Data(svg.utf8).write(to: svgFile)

    let rendered = try Tool.run(rsvg, ["--format", "png", "--output", pngFile.path, svgFile.path])
    try #require(rendered.status == 0, "rsvg-convert failed (\(rendered.status)): \(rendered.errors)")
    // --raw: the symbol's bytes as they are, no charset guessing; QR codes only.
    let scanned = try Tool.run(zbar, ["--quiet", "--raw", "-Sdisable", "-Sqrcode.enable", pngFile.path])
    try #require(scanned.status == 0, "zbarimg read no QR code (\(scanned.status)): \(scanned.errors)")
    var bytes = [UInt8](scanned.output)
    // zbarimg ends each symbol's data with a line feed.
    try #require(bytes.last == UInt8(ascii: "\n"), "zbarimg output does not end with a line feed")
    bytes.removeLast()
    return bytes
}

/// Printable ASCII, deterministic: `count` bytes.
private func printable(_ count: Int) -> String {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    var scalars = String.UnicodeScalarView()
    for _ in 0..<count {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        scalars.append(Unicode.Scalar(UInt8(0x20 + (state >> 33) % 95)))
    }
    return String(scalars)
}

@Suite struct RoundTrip {
    @Test("zbarimg reads back the text from the rendered SVG", arguments: [
        ("https://example.org/hunt/42?stop=7&code=K9X2", QRCode.Correction.medium),
        ("HELLO WORLD 0123456789 and lower case", .low),
        ("Stop 3 — Café ☕ 🦆", .high),
        ("a", .quartile),
        (printable(700), .quartile),
        (printable(1273), .high),
    ])
    func roundTrip(text: String, correction: QRCode.Correction) throws {
        let code = try QRCode.encode(text, correction: correction)
        let moduleSize = code.size > 100 ? 4 : 6
        #expect(try decode(code.svg(moduleSize: moduleSize)) == Array(text.utf8))
    }

    @Test("A caption under the code does not stop it being read")
    func withCaption() throws {
        let code = try QRCode.encode("https://example.org/hunt/42?stop=3")
        #expect(try decode(code.svg(title: "Stop 3: <the old mill> & \"wheel\"")) == Array("https://example.org/hunt/42?stop=3".utf8))
    }

    @Test("Text with a NUL character reads back whole")
    func nul() throws {
        let text = "before\u{0}after"
        #expect(try decode(QRCode.encode(text).svg()) == Array(text.utf8))
    }
}
