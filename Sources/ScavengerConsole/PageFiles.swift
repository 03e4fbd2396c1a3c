/// The pages, templates, style sheets and scripts the web front ends serve (this console's and
/// the HTTP port's): files in each module's `Pages/`, embedded in the binary when it is built
/// (SwiftPM's `embedInCode`, as each module's `PackageResources`), so a daemon copied anywhere
/// serves them, and they are edited, diffed and debugged as the files they are.
public enum PageFiles {
    /// A file's text as it is served: its UTF-8 without the final newline every file ends with.
    public static func text(_ bytes: [UInt8]) -> String {
        let body = bytes.last == UInt8(ascii: "\n") ? bytes.dropLast() : bytes[...]
        return String(decoding: body, as: UTF8.self)
    }

    /// An HTML page whose lines `<!--#include name-->` are each replaced by the text `including`
    /// holds for `name` (a part two pages share). A name it does not hold is a programming error.
    public static func page(_ bytes: [UInt8], including parts: [String: String]) -> String {
        text(bytes).split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard line.hasPrefix(includePrefix), line.hasSuffix(includeSuffix) else { return String(line) }
            let name = String(line.dropFirst(includePrefix.count).dropLast(includeSuffix.count))
            guard let part = parts[name] else { preconditionFailure("the page includes \(name), which it was not given") }
            return part
        }.joined(separator: "\n")
    }

    private static let includePrefix = "<!--#include "
    private static let includeSuffix = "-->"
}
