import Mustache

/// The console's pages as mustache templates (HTML-escaped by default), and its stylesheet: the
/// files in `Pages/`, shipped in the binary (``PageFiles``): the console needs no files beside it
/// and nothing from the network.
enum ConsoleTemplates {
    static func library() throws -> MustacheLibrary {
        var library = MustacheLibrary()
        for (name, text) in [
            ("header", header), ("footer", footer), ("signin", signIn), ("queue", queue), ("item", item),
            ("log", log), ("message", message),
        ] {
            try library.register(text, named: name)
        }
        return library
    }

    static let header = PageFiles.text(PackageResources.header_mustache)

    static let footer = PageFiles.text(PackageResources.footer_mustache)

    static let signIn = PageFiles.text(PackageResources.signin_mustache)

    static let message = PageFiles.text(PackageResources.message_mustache)

    static let queue = PageFiles.text(PackageResources.queue_mustache)

    static let item = PageFiles.text(PackageResources.item_mustache)

    static let log = PageFiles.text(PackageResources.log_mustache)

    /// Dark text on light ground (contrast well above 4.5:1), visible focus, one column on a phone.
    static let stylesheet = PageFiles.text(PackageResources.console_css)
}
