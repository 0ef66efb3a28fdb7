// swift-tools-version:5.3
// The fuzz targets' libFuzzer executable, in a package of its own beside the sources so the
// main build and `tools/test` never build with sanitizers. Built and run by `tools/fuzz`:
//
//   swift build --package-path FuzzTesting -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//
// (Tools version 5.3: a plain target with main.swift is an executable whose `main` libFuzzer
// may provide; later manifests rename the entry point of executable targets.)
import PackageDescription

let package = Package(
    name: "FuzzTesting",
    dependencies: [
        .package(name: "Fencepost", path: "..")
    ],
    targets: [
        .target(
            name: "fencepost-fuzz",
            dependencies: [.product(name: "FencepostFuzzTargets", package: "Fencepost")])
    ]
)
