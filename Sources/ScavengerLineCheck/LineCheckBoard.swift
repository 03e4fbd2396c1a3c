import Logging
import Postgres
import ScavengerBoard
import ScavengerCore
import ScavengerFeed
import ScavengerProtocol
import ScavengerStore
import Sodium

/// The board lines are checked on: a real board whose database is a closed port (parsing never
/// touches it, and deferred work is never run), with a few pins in its in-memory feed so that
/// NEARBY has something to page through and encode.
public enum LineCheckBoard {
    public static let shared: Board = {
        let configuration = PostgresConfiguration(connectionString: "postgresql://127.0.0.1:1/unreachable?connect_timeout=2")
        let store = Database(pool: PostgresPool(configuration: configuration, maxConnections: 1))
        let feed = Feed(database: store, logger: quietLogger)
        feed.loadOffline(pins)
        return Board(feed: feed, passwords: PasswordHasher(parameters: .minimum), rules: rules)
    }()

    /// The default rules, but a NEARBY radius that can span the globe (operators can configure
    /// one), so that checking reaches the index's whole-sphere cases.
    static let rules = BoardRules(feed: FeedRules(maximumRadiusMeters: 25_000_000))

    /// A context on ``shared`` for a connection nobody has logged in on.
    public static let context = CommandContext(
        session: Session(connectionID: 0), board: shared, logger: quietLogger)

    static let quietLogger: Logger = {
        var logger = Logger(label: "line-check")
        logger.logLevel = .critical
        return logger
    }()

    /// Pins where geometry is hard (the poles, the antimeridian, the origin, one place shared by
    /// three pins) and whose text needs escaping in JSON; one hidden and one expired, which no
    /// feed may show.
    static let pins: [IndexedPin] = {
        let created = Timestamp(microseconds: 1_700_000_000_000_000)
        let forever = Timestamp(microseconds: 7_000_000_000_000_000)  // year 2191
        let past = Timestamp(microseconds: 1_700_000_100_000_000)
        let places: [(lat: Double, lon: Double, text: String)] = [
            (0, 0, "origin"),
            (52.520008, 13.404954, "quote \" backslash \\ tab \t newline \n end"),
            (52.5201, 13.405, "é, 😀, e\u{301}, \u{2028}"),
            (52.5201, 13.405, "same place, another id"),
            (52.5201, 13.405, "same place, a third id"),
            (90, 0, "north pole"),
            (-90, 45, "south pole"),
            (10, 180, "antimeridian east"),
            (10, -180, "antimeridian west"),
            (10, 179.99999, "just west of the antimeridian"),
            (-33.8688, 151.2093, String(repeating: "long ", count: 100)),
        ]
        var pins = places.enumerated().map { index, place in
            IndexedPin(
                id: pinID(index), lat: place.lat, lon: place.lon, kind: index % 3 == 2 ? .photo : .text,
                text: place.text, author: "author\(index % 2)", created: Timestamp(microseconds: created.microseconds + Int64(index)),
                expires: forever, photo: index % 3 == 2 ? PhotoInfo(mime: "image/png", bytes: 68) : nil, replies: index)
        }
        pins.append(IndexedPin(
            id: pinID(places.count), lat: 0.001, lon: 0.001, kind: .text, text: "hidden", author: "author0",
            created: created, expires: forever, hidden: true))
        pins.append(IndexedPin(
            id: pinID(places.count + 1), lat: 0.002, lon: 0.002, kind: .text, text: "expired", author: "author1",
            created: created, expires: past))
        return pins
    }()

    /// `p` and 24 characters of `a-z 2-7`, as pin ids are.
    static func pinID(_ index: Int) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        return "p" + String((0 ..< 24).map { alphabet[($0 * 7 + index * 13) % alphabet.count] })
    }
}
