// swift-tools-version:6.1
// A peer for our CSV trace reader: yaslab/CSV.swift reading the same file, in a package of its
// own so the product never depends on it. `tools/bench/csv-peer TRACE.csv` builds and runs it
// beside `fencepost-bench parse`.
import PackageDescription

let package = Package(
    name: "CSVPeer",
    dependencies: [
        .package(url: "https://github.com/yaslab/CSV.swift", exact: "2.5.2")
    ],
    targets: [
        .executableTarget(name: "csv-peer", dependencies: [.product(name: "CSV", package: "CSV.swift")])
    ]
)
