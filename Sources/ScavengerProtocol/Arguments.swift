import ScavengerCore

/// The arguments of one command (the tokens after its name), read in order with typed accessors
/// that turn bad values into `BAD_ARGUMENT` errors naming the argument.
public struct Arguments: Sendable {
    public let command: String
    /// The configured pin rules (TTL bounds, photo size), so parsers can check against them.
    public let pinRules: PinRules
    /// The configured feed rules (radius limit).
    public let feedRules: FeedRules
    private let tokens: ArraySlice<Token>
    private var position: Int

    public init(
        command: String, tokens: ArraySlice<Token>, pinRules: PinRules = PinRules(), feedRules: FeedRules = FeedRules()
    ) {
        self.command = command
        self.tokens = tokens
        self.position = self.tokens.startIndex
        self.pinRules = pinRules
        self.feedRules = feedRules
    }

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

    /// Fails when tokens are left over.
    public func finish() throws(CommandError) {
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
        guard range.contains(whole) else {
            throw .badArgument("\(name) must be between \(range.lowerBound) and \(range.upperBound), got \(whole)")
        }
        return whole
    }

    /// A latitude in [-90, 90].
    public static func latitude(_ token: Token) throws(CommandError) -> Double {
        let value = try number(token, "latitude")
        guard (-90 ... 90).contains(value) else { throw .badArgument("latitude must be within [-90, 90]") }
        return value
    }

    /// A longitude in [-180, 180].
    public static func longitude(_ token: Token) throws(CommandError) -> Double {
        let value = try number(token, "longitude")
        guard (-180 ... 180).contains(value) else { throw .badArgument("longitude must be within [-180, 180]") }
        return value
    }

    /// The next two arguments as a point: latitude, then longitude.
    public mutating func location() throws(CommandError) -> (lat: Double, lon: Double) {
        let lat = try Self.latitude(required("latitude"))
        return (lat, try Self.longitude(required("longitude")))
    }

    /// `lat lon radius_m`, as NEARBY and WATCH take them: a radius above 0 and at most the
    /// feed's configured maximum.
    public mutating func circle() throws(CommandError) -> (lat: Double, lon: Double, radius: Double) {
        let (lat, lon) = try location()
        let radius = try Self.number(required("radius"), "radius_m")
        let maximum = feedRules.maximumRadiusMeters
        guard radius > 0, radius <= maximum else {
            throw .badArgument("radius_m must be greater than 0 and at most \(JSON.format(maximum))")
        }
        return (lat, lon, radius)
    }

    /// A text argument checked against the contract's text rules.
    public static func text(_ token: Token, _ name: String = "text", allowEmpty: Bool = false) throws(CommandError) -> String {
        do {
            try Validation.text(token.text, name: name, allowEmpty: allowEmpty)
        } catch {
            throw .badArgument(error.message)
        }
        return token.text
    }

    /// `LIMIT n`: 1 to 200, default 50.
    public static func pageLimit(_ token: Token?) throws(CommandError) -> Int {
        guard let token else { return 50 }
        return try integer(token, "LIMIT", in: 1 ... 200)
    }

    /// `TTL seconds`: 1 to the configured maximum, default as configured.
    public func ttl(_ token: Token?) throws(CommandError) -> Int {
        guard let token else { return pinRules.defaultTTLSeconds }
        return try Self.integer(token, "TTL", in: 1 ... pinRules.maximumTTLSeconds)
    }

    /// Reads trailing `KEYWORD value` pairs; keywords are case-insensitive, each allowed once.
    /// Returns the values by upper-cased keyword.
    public mutating func options(_ allowed: [String]) throws(CommandError) -> Options {
        var found = Options()
        while let keyword = next() {
            let key = keyword.text.asciiUppercased
            guard allowed.contains(key) else {
                let list = allowed.sorted().joined(separator: ", ")
                throw .badArgument("unknown option \(Reply.echo(keyword.text)) for \(command) (expected \(list))")
            }
            guard found[key] == nil else { throw .badArgument("option \(key) given twice") }
            guard let value = next() else { throw .badArgument("option \(key) needs a value") }
            found.entries.append((key, value))
        }
        return found
    }

    /// The options a request gave, by upper-case keyword. A handful at most: kept in a small
    /// array and searched in order, which costs less per request than a dictionary.
    public struct Options: Sendable {
        fileprivate var entries: [(key: String, value: Token)] = []

        public subscript(key: String) -> Token? {
            entries.first { $0.key == key }?.value
        }
    }
}
