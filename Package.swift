// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Scavenger",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "scavengerd", targets: ["scavengerd"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // System libraries: module map + shim header only.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CGEOS", pkgConfig: "geos", providers: [.apt(["libgeos-dev"])]),
        .systemLibrary(name: "CB64", providers: [.apt(["libb64-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),

        // Thin safe wrappers: the only importers of their C module.
        .target(name: "Postgres", dependencies: ["CLibPQ", .product(name: "NIOPosix", package: "swift-nio")]),
        .target(name: "GEOS", dependencies: ["CGEOS"]),
        .target(name: "Base64", dependencies: ["CB64"]),
        .target(name: "Sodium", dependencies: ["CSodium", .product(name: "NIOPosix", package: "swift-nio")]),

        // A reader-writer lock over pthread_rwlock, for the in-memory feed.
        .target(name: "ReadWriteLock"),

        // Pure-Swift domain: no SQL, no sockets.
        .target(name: "ScavengerCore"),
        // Named regions over GEOS: validation, the most specific region of a point.
        .target(name: "ScavengerGeography", dependencies: ["ScavengerCore", "GEOS"]),
        // PostgreSQL store: the only place that knows SQL.
        .target(name: "ScavengerStore", dependencies: [
            "ScavengerCore", "ScavengerGeography", "Postgres",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The live feed: every live pin in memory, kept in step with PostgreSQL.
        .target(name: "ScavengerFeed", dependencies: [
            "ScavengerCore", "ScavengerGeography", "ScavengerStore", "Postgres", "ReadWriteLock",
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        // Line protocol: tokenizer, arguments, replies, the command table.
        .target(name: "ScavengerProtocol", dependencies: [
            "ScavengerCore", "ScavengerStore", "ScavengerFeed", "ScavengerGeography", "Sodium", "Base64",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // NIO server: connections, framing, limits, graceful shutdown.
        .target(name: "ScavengerServer", dependencies: [
            "ScavengerProtocol",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .executableTarget(name: "scavengerd", dependencies: [
            "ScavengerServer", "ScavengerStore", "ScavengerProtocol",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),

        // Shared by the test targets: the real test database, isolated per test.
        .target(name: "ScavengerTestSupport", dependencies: ["Postgres"], path: "Tests/ScavengerTestSupport"),
        .testTarget(name: "PostgresTests", dependencies: ["Postgres", "ScavengerTestSupport"]),
        .testTarget(name: "GEOSTests", dependencies: ["GEOS"]),
        .testTarget(name: "Base64Tests", dependencies: ["Base64"]),
        .testTarget(name: "ReadWriteLockTests", dependencies: ["ReadWriteLock"]),
        .testTarget(name: "SodiumTests", dependencies: ["Sodium"]),
        .testTarget(name: "ScavengerCoreTests", dependencies: ["ScavengerCore"]),
        .testTarget(name: "ScavengerGeographyTests", dependencies: ["ScavengerGeography", "GEOS"]),
        .testTarget(name: "ScavengerProtocolTests", dependencies: ["ScavengerProtocol"]),
        .testTarget(name: "ScavengerStoreTests", dependencies: ["ScavengerStore", "Postgres", "ScavengerTestSupport"]),
        .testTarget(name: "ScavengerServerTests", dependencies: [
            "ScavengerServer", "ScavengerTestSupport", "ScavengerStore", "ScavengerCore", "ScavengerFeed",
            "ScavengerGeography", "Sodium", "Postgres", "Base64",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
