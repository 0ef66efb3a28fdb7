// swift-tools-version: 6.1
import PackageDescription

/// Settings every target shares: Swift 6 language mode is the package default;
/// these add the checks we want everywhere.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Fencepost",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "fencepost", targets: ["fencepost"]),
        .library(name: "FencepostCore", targets: ["FencepostCore"]),
        // For the FuzzTesting package beside the sources (tools/fuzz).
        .library(name: "FencepostFuzzTargets", targets: ["FencepostFuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/x-sheep/swift-property-based", exact: "2.0.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", exact: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types", exact: "1.8.0"),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
    ],
    targets: [
        // MARK: - C libraries
        .systemLibrary(
            name: "CGEOS",
            pkgConfig: "geos",
            providers: [.apt(["libgeos-dev"])]
        ),

        .systemLibrary(
            name: "CSystemZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // libsodium's secretbox (XSalsa20-Poly1305), for OwnTracks' encrypted payloads.
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]
        ),

        // SQLite's process-wide settings (a C function around the variadic sqlite3_config).
        .target(
            name: "CSQLiteSetup",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),

        // MARK: - Layers, bottom up
        .target(
            name: "FencepostGeometry",
            dependencies: ["CGEOS"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FencepostCore",
            dependencies: [
                "FencepostGeometry",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FencepostFormats",
            dependencies: ["FencepostGeometry", "FencepostCore", "CSystemZlib"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FencepostHealth",
            dependencies: ["FencepostCore", "FencepostFormats", "CSystemZlib"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FencepostRender",
            dependencies: ["FencepostCore", "FencepostGeometry"],
            // The interactive map's scripts, compiled into the binary (PackageResources).
            resources: [.embedInCode("HTML/Assets/map-pan-zoom.js"), .embedInCode("HTML/Assets/map-details.js")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FencepostStore",
            dependencies: [
                "FencepostGeometry", "FencepostCore", "CSQLiteSetup",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // SQLite's C API, for binding the per-event writes of an ingest directly.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Crypto", package: "swift-crypto"),
                // A PostgreSQL store's connection pool is a service of `serve`'s service group.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FencepostSync",
            dependencies: [
                "FencepostCore", "FencepostStore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // An MQTT 3.1.1 client over SwiftNIO that acknowledges a message when the application
        // says it is done (after its commit), not on receipt.
        .target(
            name: "FencepostMQTT",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Clients of the brokers the sinks deliver to (Redis, NATS JetStream), over SwiftNIO,
        // each confirming what the broker stored.
        .target(
            name: "FencepostBrokers",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The product's spine: reader → filter → monitor → visit tracker → store, for every
        // front door (files, the inbox, live posts, scan).
        .target(
            name: "FencepostIngest",
            dependencies: [
                "FencepostGeometry", "FencepostCore", "FencepostFormats", "FencepostHealth", "FencepostStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FencepostService",
            dependencies: [
                "FencepostGeometry", "FencepostCore", "FencepostFormats", "FencepostStore", "FencepostSync",
                "FencepostRender",
                "FencepostIngest", "FencepostMQTT", "FencepostBrokers", "CSodium",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // The live page's files and the API's OpenAPI document, compiled into the binary
            // (PackageResources).
            resources: [
                .embedInCode("Live/Assets/live.html"), .embedInCode("Live/Assets/live.css"),
                .embedInCode("Live/Assets/live.js"), .embedInCode("HTTP/Assets/openapi.json"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "fencepost",
            dependencies: [
                "FencepostCore",
                "FencepostFormats",
                "FencepostHealth",
                "FencepostStore",
                "FencepostIngest",
                "FencepostService",
                "FencepostSync",
                "FencepostRender",
                "FencepostGeometry",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Benchmarks (tools/bench)
        .executableTarget(
            name: "fencepost-bench",
            dependencies: ["FencepostCore", "FencepostFormats"],
            path: "tools/bench/FencepostBench",
            swiftSettings: swiftSettings
        ),

        // MARK: - Campaigns (tools/chaos): kill -9, faults, starved resources
        .executableTarget(
            name: "fencepost-chaos",
            dependencies: [
                "FencepostStore", "FencepostTestSupport", "FencepostServerTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "tools/chaos/FencepostChaos",
            swiftSettings: swiftSettings
        ),

        // MARK: - Fuzz targets (tools/fuzz; libFuzzer's executable is in the FuzzTesting package)
        .target(
            name: "FencepostFuzzTargets",
            dependencies: [
                "FencepostCore", "FencepostFormats", "FencepostGeometry", "FencepostHealth", "FencepostStore",
                "FencepostIngest", "FencepostService", "FencepostMQTT",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // MARK: - Tests
        // Helpers every test target may use (test data, temporary files, SVG parsing): no
        // database driver, no HTTP, so geometry and core tests build without them.
        .target(
            name: "FencepostTestSupport",
            path: "Tests/FencepostTestSupport",
            swiftSettings: swiftSettings
        ),
        // Stores on both backends (PostgreSQL for tools/test's second run), a fault proxy, a tile
        // server and a WebDriver client: for the tests of the store and what stands on it.
        .target(
            name: "FencepostServerTestSupport",
            dependencies: [
                "FencepostTestSupport", "FencepostGeometry", "FencepostCore", "FencepostStore", "FencepostIngest",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/FencepostServerTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostGeometryTests",
            dependencies: ["FencepostGeometry", "FencepostTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostCoreTests",
            dependencies: [
                "FencepostGeometry", "FencepostCore", "FencepostTestSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostFormatsTests",
            dependencies: ["FencepostGeometry", "FencepostCore", "FencepostFormats", "FencepostTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostHealthTests",
            dependencies: ["FencepostCore", "FencepostFormats", "FencepostHealth", "FencepostTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostRenderTests",
            dependencies: [
                "FencepostGeometry", "FencepostRender", "FencepostCore", "FencepostFormats", "FencepostIngest",
                "FencepostTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostStoreTests",
            dependencies: [
                "FencepostGeometry", "FencepostCore", "FencepostStore", "FencepostFormats", "FencepostTestSupport",
                "FencepostServerTestSupport",
                // The store's contents are made the way the product makes them: by ingesting.
                "FencepostIngest",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostIngestTests",
            dependencies: [
                "FencepostGeometry", "FencepostCore", "FencepostIngest", "FencepostStore", "FencepostFormats",
                "FencepostTestSupport", "FencepostServerTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostServiceTests",
            dependencies: [
                "FencepostCore", "FencepostFormats", "FencepostService", "FencepostStore", "FencepostSync",
                "FencepostBrokers",
                "FencepostIngest", "FencepostTestSupport", "FencepostServerTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostMQTTTests",
            dependencies: [
                "FencepostMQTT", "FencepostTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostFuzzTests",
            dependencies: ["FencepostFuzzTargets", "FencepostTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostChaosTests",
            // The executables are not imported: the tests run the built binaries.
            dependencies: ["fencepost", "fencepost-chaos", "FencepostTestSupport", "FencepostServerTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FencepostCLITests",
            // `fencepost` is not imported: the tests run the built binary.
            dependencies: [
                "fencepost", "FencepostTestSupport", "FencepostServerTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
