import ScavengerBoard
import ScavengerCore

/// The arguments of one command (the tokens after its name), read in order with typed accessors
/// that turn bad values into `BAD_ARGUMENT` errors naming the argument. Only the grammar is
/// checked here; the rules a value must meet (ranges, text rules) are the board's
/// ``RequestChecks``, applied as each argument is read so that errors come in argument order.
public struct Arguments: Sendable {
    public let command: String
    /// The board's rules for values, with the configured limits.
    public let checks: RequestChecks
    private let tokens: ArraySlice<Token>
    private var position: Int
    /// Whether the command is a write that takes `REQUEST key` among its options.
    public let acceptsRequestKey: Bool
    /// The `REQUEST` key given, once read.
    public private(set) var requestKey: String?
    /// Where the options begin (the positional arguments end), once options are read.
    private var optionsStart: Int?
    /// The options read (but `REQUEST`), as `KEYWORD` or `KEYWORD value`, for ``canonicalRequest``.
    private var optionsRead: [[String]] = []

    public init(command: String, tokens: ArraySlice<Token>, checks: RequestChecks = RequestChecks(), acceptsRequestKey: Bool = false) {
        self.command = command
        self.tokens = tokens
        self.position = self.tokens.startIndex
        self.checks = checks
        self.acceptsRequestKey = acceptsRequestKey
    }

    /// The request in a canonical form, once every argument is read: the command, its positional
    /// arguments in order, then its options (not `REQUEST`) sorted by keyword, each token written
    /// with its length so no two requests share a form. Two requests are the same request (for
    /// `REQUEST` keys) when their forms are equal.
    public var canonicalRequest: String {
        var parts = [command]
        let positionalEnd = optionsStart ?? tokens.endIndex
        parts += tokens[tokens.startIndex ..< positionalEnd].map(\.text)
        parts.append("")
        for option in optionsRead.sorted(by: { $0[0] < $1[0] }) { parts += option + [""] }
        return parts.map { "\($0.utf8.count):\($0)" }.joined()
    }

    /// Whether the next two tokens are `REQUEST key` on a command that takes it (an optional
    /// positional argument must not take the keyword for its value).
    public var requestKeyFollows: Bool {
        guard acceptsRequestKey, remaining == 2, let keyword = peek() else { return false }
        return keyword.text.asciiUppercased == "REQUEST"
    }

    /// Reads the value of `REQUEST` (the keyword just read).
    private mutating func readRequestKey() throws(CommandError) {
        guard requestKey == nil else { throw .badArgument("option REQUEST given twice") }
        guard let value = next() else { throw .badArgument("option REQUEST needs a value") }
        do {
            try Validation.requestKey(value.text)
        } catch {
            throw .badArgument(error.message)
        }
        requestKey = value.text
    }

    /// How many arguments are left to read.
    public var remaining: Int { max(0, tokens.endIndex - position) }

    /// Whether every argument has been read.
    public var isAtEnd: Bool { position >= tokens.endIndex }

    /// The next token, if any, without consuming it.
    public func peek() -> Token? { isAtEnd ? nil : tokens[position] }

    /// The next token, if any.
    public mutating func next() -> Token? {
        guard !isAtEnd else { return nil }
        defer { position += 1 }
        return tokens[position]
    }

    /// The next token; a missing one is a wrong number of arguments.
    public mutating func required(_ name: String) throws(CommandError) -> Token {
        guard let token = next() else { throw .badArgument("missing \(name) for \(command)") }
        return token
    }

    /// Fails when tokens are left over; a write's trailing `REQUEST key` is read here when its
    /// command takes no other options.
    public mutating func finish() throws(CommandError) {
        if acceptsRequestKey, requestKey == nil, let keyword = peek(), keyword.text.asciiUppercased == "REQUEST" {
            if optionsStart == nil { optionsStart = position }
            _ = next()
            try readRequestKey()
        }
        if let extra = peek() {
            throw .badArgument("unexpected argument \(Reply.echo(extra.text)) for \(command)")
        }
    }

    /// A number in the contract's grammar.
    public static func number(_ token: Token, _ name: String) throws(CommandError) -> Double {
        guard let value = NumberGrammar.double(token.text) else {
            throw .badArgument("\(name) must be a plain decimal number, got \(Reply.echo(token.text))")
        }
        return value
    }

    /// A whole number within `range` (written in the number grammar, with no fractional part).
    public static func integer(_ token: Token, _ name: String, in range: ClosedRange<Int>) throws(CommandError) -> Int {
        let value = try number(token, name)
        guard value == value.rounded(.towardZero), let whole = Int(exactly: value) else {
            throw .badArgument("\(name) must be a whole number, got \(Reply.echo(token.text))")
        }
        try checked { () throws(BoardError) in try RequestChecks.whole(whole, name, in: range) }
        return whole
    }

    /// Runs one of the board's checks, as a `BAD_ARGUMENT` when it fails.
    static func checked(_ check: () throws(BoardError) -> Void) throws(CommandError) {
        do {
            try check()
        } catch {
            throw CommandError(error)
        }
    }

    /// The next two arguments as a point: latitude, then longitude.
    public mutating func location() throws(CommandError) -> (lat: Double, lon: Double) {
        let lat = try Self.number(required("latitude"), "latitude")
        try Self.checked { () throws(BoardError) in try checks.latitude(lat) }
        let lon = try Self.number(required("longitude"), "longitude")
        try Self.checked { () throws(BoardError) in try checks.longitude(lon) }
        return (lat, lon)
    }

    /// `lat lon radius_m`, as NEARBY and WATCH take them: a radius above 0 and at most the
    /// feed's configured maximum.
    public mutating func circle() throws(CommandError) -> (lat: Double, lon: Double, radius: Double) {
        let (lat, lon) = try location()
        let radius = try Self.number(required("radius"), "radius_m")
        try Self.checked { () throws(BoardError) in try checks.radius(radius) }
        return (lat, lon, radius)
    }

    /// A text argument checked against the contract's text rules.
    public static func text(_ token: Token, _ name: String = "text", allowEmpty: Bool = false) throws(CommandError) -> String {
        try checked { () throws(BoardError) in try RequestChecks().text(token.text, name, allowEmpty: allowEmpty) }
        return token.text
    }

    /// `LIMIT n`: 1 to 200, default 50.
    public static func pageLimit(_ token: Token?) throws(CommandError) -> Int {
        guard let token else { return 50 }
        return try integer(token, "LIMIT", in: 1 ... 200)
    }

    /// `TTL seconds`: 1 to the configured maximum, default as configured.
    public func ttl(_ token: Token?) throws(CommandError) -> Int {
        guard let token else { return checks.pins.defaultTTLSeconds }
        return try Self.integer(token, "TTL", in: 1 ... checks.pins.maximumTTLSeconds)
    }

    /// Reads trailing `KEYWORD value` pairs; keywords are case-insensitive, each allowed once.
    /// Returns the values by upper-cased keyword.
    public mutating func options(_ allowed: [String]) throws(CommandError) -> Options {
        var found = Options()
        if optionsStart == nil { optionsStart = position }
        while let keyword = next() {
            let key = keyword.text.asciiUppercased
            if acceptsRequestKey, key == "REQUEST" {
                try readRequestKey()
                continue
            }
            guard allowed.contains(key) else {
                let list = allowed.sorted().joined(separator: ", ")
                throw .badArgument("unknown option \(Reply.echo(keyword.text)) for \(command) (expected \(list))")
            }
            guard found[key] == nil else { throw .badArgument("option \(key) given twice") }
            guard let value = next() else { throw .badArgument("option \(key) needs a value") }
            found.entries.append((key, value))
            optionsRead.append([key, value.text])
        }
        return found
    }

    /// Reads trailing options in any order: `KEYWORD value` pairs for `valued`, lone keywords for
    /// `flags`, and for `counted` a keyword with an optional count after it (`GUESTS [n]`: the
    /// next token is its count when it is all digits; read it with ``Options/count(_:)``); each
    /// at most once, case-insensitive.
    public mutating func options(_ valued: [String], flags: [String], counted: [String] = []) throws(CommandError) -> Options {
        var found = Options()
        if optionsStart == nil { optionsStart = position }
        while let keyword = next() {
            let key = keyword.text.asciiUppercased
            if acceptsRequestKey, key == "REQUEST" {
                try readRequestKey()
                continue
            }
            if flags.contains(key) || counted.contains(key) {
                guard !found.flags.contains(key) else { throw .badArgument("option \(key) given twice") }
                found.flags.append(key)
                if counted.contains(key), let count = peek(), !count.text.isEmpty, count.text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                    _ = next()
                    found.entries.append((key, count))
                    optionsRead.append([key, count.text])
                } else {
                    optionsRead.append([key])
                }
                continue
            }
            guard valued.contains(key) else {
                let list = (valued + flags + counted).sorted().joined(separator: ", ")
                throw .badArgument("unknown option \(Reply.echo(keyword.text)) for \(command) (expected \(list))")
            }
            guard found[key] == nil else { throw .badArgument("option \(key) given twice") }
            guard let value = next() else { throw .badArgument("option \(key) needs a value") }
            found.entries.append((key, value))
            optionsRead.append([key, value.text])
        }
        return found
    }

    /// The options a request gave, by upper-case keyword. A handful at most: kept in a small
    /// array and searched in order, which costs less per request than a dictionary.
    public struct Options: Sendable {
        fileprivate var entries: [(key: String, value: Token)] = []
        fileprivate var flags: [String] = []

        /// Whether the lone keyword `flag` was given.
        public func has(_ flag: String) -> Bool { flags.contains(flag) }

        public subscript(key: String) -> Token? {
            entries.first { $0.key == key }?.value
        }
    }
}
