// swift-tools-version:6.0
// The least a SwiftNIO server can do per PING, for scripts/bench/floor.sh: a reference point, not
// part of scavengerd.
import PackageDescription

let package = Package(
    name: "nio-floor",
    dependencies: [.package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2")],
    targets: [
        .executableTarget(
            name: "nio-floor",
            dependencies: [.product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio")]),
    ]
)
