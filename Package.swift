// swift-tools-version: 6.0
import PackageDescription

/// Front ends see only what they import: a member of a module they did not import (the store's,
/// the feed's, a C wrapper's, reached through a type the board returns) does not compile.
let frontEndSettings: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "Scavenger",
    // The Apple versions are ScavengerClient's (Synchronization's Mutex needs them).
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .executable(name: "scavengerd", targets: ["scavengerd"]),
        // The client library for apps and Swift backends, and the command-line client built on it.
        .library(name: "ScavengerClient", targets: ["ScavengerClient"]),
        .executable(name: "scavenger", targets: ["scavenger"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // zlib's gzip for the HTTP port's pages and scripts (already in the graph through
        // hummingbird-websocket, which compresses WebSocket messages with it).
        .package(url: "https://github.com/adam-fowler/compress-nio.git", from: "1.5.0"),
    ],
    targets: [
        // System libraries: module map + shim header only.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CGEOS", pkgConfig: "geos", providers: [.apt(["libgeos-dev"])]),
        .systemLibrary(name: "CB64", providers: [.apt(["libb64-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // GNU readline, for the command-line client's prompt (no .pc file on Debian 12).
        .systemLibrary(name: "CReadline", providers: [.apt(["libreadline-dev"])]),
        // libcurl, for its SMTP client (STARTTLS, smtps://, authentication).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // libvips, for photos' headers and sizes; its shim wraps the variadic calls. Found through
        // GLib's gobject-2.0.pc, whose flags are vips.pc's include paths less the `-pthread` that
        // SwiftPM refuses with a warning on every build; the module map links vips itself.
        .systemLibrary(name: "CVips", pkgConfig: "gobject-2.0", providers: [.apt(["libvips-dev"])]),

        // Thin safe wrappers: the only importers of their C module.
        .target(name: "Postgres", dependencies: [
            "CLibPQ", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
        ]),
        .target(name: "GEOS", dependencies: ["CGEOS"]),
        .target(name: "Base64", dependencies: ["CB64"]),
        .target(name: "Sodium", dependencies: ["CSodium", .product(name: "NIOPosix", package: "swift-nio")]),
        // QR codes of text (libqrencode) and their SVG, for printing a hunt's code stops.
        .target(name: "QRCode", dependencies: ["CQREncode"]),
        // Mail over SMTP with libcurl, each send on a thread of its own: the only importer of CCurl.
        .target(name: "Mail", dependencies: ["CCurl", .product(name: "NIOPosix", package: "swift-nio")]),
        // Photos' headers and sizes with libvips, for untrusted input: the only importer of CVips.
        .target(name: "Vips", dependencies: ["CVips", .product(name: "NIOPosix", package: "swift-nio")]),

        // A reader-writer lock over pthread_rwlock, for the in-memory feed.
        .target(name: "ReadWriteLock"),

        // An order-statistic tree: a sorted set with positions in O(log n), for the leaderboards.
        .target(name: "OrderStatistics"),

        // Who a connection from a trusted proxy is for (--trusted-proxies): IP addresses and CIDR
        // networks, the PROXY protocol header (v1, v2) of the line port, the HTTP port's
        // Forwarded and X-Forwarded-For. Pure parsers, for the front ends.
        .target(name: "ProxyHeaders"),

        // Pure-Swift domain: pins, users, moderation rules, validation, cells and distances. No SQL, no sockets.
        .target(name: "ScavengerCore", dependencies: ["OrderStatistics"]),
        // The in-memory pin index that serves NEARBY and REGION: unsafe storage inside, safe API outside.
        .target(name: "ScavengerPinIndex", dependencies: [
            "ScavengerCore", "OrderStatistics", .product(name: "HeapModule", package: "swift-collections"),
        ]),
        // Named regions over GEOS: GeoJSON rules, the most specific region of a point.
        .target(name: "ScavengerGeography", dependencies: ["ScavengerCore", "GEOS"]),
        // PostgreSQL store: the only place that knows SQL (LISTEN included).
        .target(name: "ScavengerStore", dependencies: [
            "ScavengerCore", "ScavengerGeography", "GEOS", "Postgres",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
        ]),
        // The live feed: the pin index loaded from the store and kept in step with it.
        .target(name: "ScavengerFeed", dependencies: [
            "ScavengerCore", "ScavengerPinIndex", "ScavengerGeography", "ScavengerStore", "ReadWriteLock",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "HeapModule", package: "swift-collections"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The outbox's sender: a service that sends the mails the store queued, with retries.
        .target(name: "ScavengerMail", dependencies: [
            "Mail", "ScavengerStore",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The application layer: one call per use case, writing the store and updating the feed.
        .target(name: "ScavengerBoard", dependencies: [
            "ScavengerCore", "ScavengerPinIndex", "ScavengerStore", "ScavengerFeed", "Sodium", "Base64", "QRCode", "Vips",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
        ], resources: [
            // The plain-text mails of account recovery (MailTemplate), built into the binary.
            .embedInCode("MailTemplates/reset.txt"),
            .embedInCode("MailTemplates/verify.txt"),
        ]),
        // Line protocol: tokenizer, arguments, replies, the command table.
        .target(name: "ScavengerProtocol", dependencies: [
            "ScavengerBoard", "ScavengerCore",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
        ], swiftSettings: frontEndSettings),
        // TLS for both front ends' listeners: the certificate each new connection is served
        // with (read from PEM files, reloadable on SIGHUP), the handshake deadline.
        .target(name: "ScavengerTLS", dependencies: [
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOTLS", package: "swift-nio"),
        ]),
        // NIO server: connections, framing, limits, graceful shutdown, TLS.
        .target(name: "ScavengerServer", dependencies: [
            "ScavengerBoard", "ScavengerCore", "ScavengerProtocol", "ProxyHeaders", "ScavengerTLS",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], swiftSettings: frontEndSettings),
        // HTTP port: WebSocket front end to the command table, /healthz, /metrics (Hummingbird),
        // the demo and hunt pages (Leaflet from the system's files, QR codes of code stops drawn
        // by the board).
        // The moderators' console at /mod/: server-rendered pages over the board.
        .target(name: "ScavengerConsole", dependencies: [
            "ScavengerBoard", "ScavengerCore",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Mustache", package: "swift-mustache"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], resources: [
            // The console's templates and style sheet, built into the binary (PageFiles).
            .embedInCode("Pages/console.css"),
            .embedInCode("Pages/footer.mustache"),
            .embedInCode("Pages/header.mustache"),
            .embedInCode("Pages/item.mustache"),
            .embedInCode("Pages/log.mustache"),
            .embedInCode("Pages/message.mustache"),
            .embedInCode("Pages/queue.mustache"),
            .embedInCode("Pages/signin.mustache"),
        ], swiftSettings: frontEndSettings),
        .target(name: "ScavengerHTTP", dependencies: [
            "ScavengerProtocol", "ScavengerBoard", "ScavengerCore", "ScavengerConsole", "ProxyHeaders", "ScavengerTLS",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            .product(name: "CompressNIO", package: "compress-nio"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], resources: [
            // The pages, styles and scripts the HTTP port serves, built into the binary (PageFiles).
            .embedInCode("Pages/account.html"),
            .embedInCode("Pages/basemap.js"),
            .embedInCode("Pages/client.js"),
            .embedInCode("Pages/demo.css"),
            .embedInCode("Pages/demo.html"),
            .embedInCode("Pages/demo.js"),
            .embedInCode("Pages/host.html"),
            .embedInCode("Pages/guest-join.js"),
            .embedInCode("Pages/host.js"),
            .embedInCode("Pages/hunts.css"),
            .embedInCode("Pages/hunts.js"),
            .embedInCode("Pages/join-link.js"),
            .embedInCode("Pages/location.js"),
            .embedInCode("Pages/notices.js"),
            .embedInCode("Pages/pin-map.css"),
            .embedInCode("Pages/pin-map.js"),
            .embedInCode("Pages/play.html"),
            .embedInCode("Pages/play-scores.js"),
            .embedInCode("Pages/play.js"),
        ], swiftSettings: frontEndSettings),
        // The invariants of a request line whatever its bytes, and the board they are checked on:
        // shared by the fuzz target and the tests that replay what it found.
        .target(name: "ScavengerLineCheck", dependencies: [
            "ScavengerProtocol", "ScavengerBoard", "ScavengerCore", "ScavengerFeed", "ScavengerStore", "Postgres", "Sodium",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // libFuzzer's driver, declared only: `-sanitize=fuzzer` links it (scripts/fuzz.sh).
        .systemLibrary(name: "CLibFuzzer"),
        // A libFuzzer target over tokenizing and parsing request lines when built by scripts/fuzz.sh
        // (-D SCAVENGER_FUZZ); otherwise a tool that replays inputs through the same checks.
        .executableTarget(name: "ScavengerProtocolFuzzer", dependencies: ["ScavengerLineCheck", "ScavengerProtocol", "CLibFuzzer"]),
        .executableTarget(name: "scavengerd", dependencies: [
            "ScavengerServer", "ScavengerHTTP", "ScavengerProtocol", "ScavengerBoard", "ScavengerFeed", "ScavengerStore",
            "ScavengerGeography", "ScavengerCore", "Postgres", "Sodium", "Mail", "ScavengerMail", "ProxyHeaders", "ScavengerTLS",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        ]),

        // The client library: the line protocol over TCP or TLS, typed calls, reconnects with
        // REQUEST keys, resumable watches. SwiftNIO only, none of the daemon's modules, so it
        // builds for Apple platforms too.
        .target(name: "ScavengerClient", dependencies: [
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "NIOFoundationCompat", package: "swift-nio"),
        ]),
        // GNU readline behind a safe API (the only importer of CReadline), for the CLI's prompt.
        .target(name: "LineEditor", dependencies: ["CReadline"]),
        // The command-line client: one command per run (tables, or --json), or a prompt.
        .executableTarget(name: "scavenger", dependencies: [
            "ScavengerClient", "LineEditor",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),

        // Shared by the test targets: the real test database, seeded random numbers, fixtures, a real board
        // (offline, or on a migrated schema), waits that guard against hangs.
        .target(
            name: "ScavengerTestSupport",
            dependencies: [
                "Postgres", "GEOS", "ScavengerCore", "ScavengerFeed", "ScavengerBoard", "ScavengerStore", "Sodium",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            path: "Tests/ScavengerTestSupport"),
        // NIOEmbedded: the deadline timer's tests run it on a loop whose time they advance.
        .testTarget(name: "PostgresTests", dependencies: [
            "Postgres", "ScavengerTestSupport", .product(name: "NIOEmbedded", package: "swift-nio"),
        ]),
        .testTarget(name: "GEOSTests", dependencies: ["GEOS", "ScavengerTestSupport"]),
        .testTarget(name: "Base64Tests", dependencies: ["Base64", "ScavengerTestSupport"]),
        .testTarget(name: "ReadWriteLockTests", dependencies: ["ReadWriteLock"]),
        .testTarget(name: "SodiumTests", dependencies: ["Sodium"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode", "ScavengerTestSupport"]),
        .testTarget(name: "VipsTests", dependencies: ["Vips", "ScavengerTestSupport"]),
        .testTarget(name: "OrderStatisticsTests", dependencies: ["OrderStatistics"]),
        .testTarget(name: "ProxyHeadersTests", dependencies: ["ProxyHeaders"]),
        .testTarget(name: "ScavengerCoreTests", dependencies: ["ScavengerCore", "ScavengerTestSupport"]),
        .testTarget(name: "ScavengerPinIndexTests", dependencies: ["ScavengerPinIndex", "ScavengerCore", "ScavengerTestSupport"]),
        .testTarget(name: "ScavengerGeographyTests", dependencies: ["ScavengerGeography", "GEOS", "ScavengerTestSupport"]),
        .testTarget(
            name: "ScavengerProtocolTests",
            dependencies: [
                "ScavengerProtocol", "ScavengerBoard", "ScavengerCore", "ScavengerTestSupport", "ScavengerLineCheck",
                .product(name: "Logging", package: "swift-log"),
            ],
            // Inputs the fuzzer found (or representative ones), replayed by FuzzRegressionTests.
            exclude: ["FuzzRegressions"]),
        .testTarget(name: "ScavengerBoardTests", dependencies: ["ScavengerBoard", "ScavengerCore", "ScavengerStore", "Sodium", "ScavengerTestSupport"]),
        .testTarget(name: "ScavengerStoreTests", dependencies: ["ScavengerStore", "Postgres", "ScavengerTestSupport"]),
        // The feed's own pieces without a server: shared catch-ups (CatchUpTurns), the hunts'
        // projections and their events' delivery, the watch hub; and the feeds against the test
        // database (ScavengerTestSupport's TestEnvironment), catching up with the change logs.
        .testTarget(name: "ScavengerFeedTests", dependencies: [
            "ScavengerFeed", "ScavengerStore", "ScavengerCore", "ScavengerTestSupport", "Postgres",
        ]),
        .testTarget(name: "ScavengerServerTests", dependencies: [
            "ScavengerServer", "ScavengerProtocol", "ScavengerBoard", "ScavengerTestSupport", "ScavengerStore",
            "ScavengerCore", "ScavengerFeed", "ScavengerGeography", "Sodium", "Postgres", "Base64", "ScavengerLineCheck",
            "Mail", "ScavengerMail", "ProxyHeaders", "ScavengerTLS",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOEmbedded", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // The client library and the command-line client against a real daemon process.
        .testTarget(name: "ScavengerClientTests", dependencies: [
            "ScavengerClient", "ScavengerTestSupport", "Postgres",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ]),
        // The console's pure logic; the console served over HTTP is tested in ScavengerHTTPTests.
        .testTarget(name: "ScavengerConsoleTests", dependencies: ["ScavengerConsole", "ScavengerCore"]),
        .testTarget(name: "ScavengerHTTPTests", dependencies: [
            "ScavengerHTTP", "ScavengerServer", "ScavengerProtocol", "ScavengerBoard", "ScavengerTestSupport", "ScavengerStore",
            "ScavengerCore", "ScavengerFeed", "Postgres", "QRCode", "ProxyHeaders", "ScavengerTLS", "Vips",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
