import QRCode

extension Board {
    /// The printable QR code of a code stop's secret, as a standalone SVG with the stop's title
    /// under it (the host's sheet of clue codes). The daemon keeps codes only hashed, so the host
    /// sends the code it kept; nothing is stored. `badArgument` for empty text or text too long
    /// for a QR code; the message never quotes the text.
    public static func clueCodeSVG(_ text: String, title: String?) throws(BoardError) -> String {
        do {
            return try QRCode.encode(text, correction: .medium).svg(title: title)
        } catch {
            throw BoardError(.badArgument, error.description)
        }
    }
}
