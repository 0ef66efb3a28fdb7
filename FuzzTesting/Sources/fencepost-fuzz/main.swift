// libFuzzer's entry points for every Fencepost fuzz target, in one executable: the target is
// chosen by FENCEPOST_FUZZ_TARGET (tools/fuzz sets it). Built only by the FuzzTesting package,
// with -sanitize=fuzzer,address; libFuzzer provides main().
import FencepostFuzzTargets
import Foundation

/// The target this process fuzzes, looked up once; `list` prints them all instead.
let selected: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["FENCEPOST_FUZZ_TARGET"] ?? ""
    if name == "list" {
        for target in FuzzTarget.all { print("\(target.name)\t\(target.summary)") }
        exit(0)
    }
    guard let target = FuzzTarget.named(name) else {
        let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
        FileHandle.standardError.write(Data("set FENCEPOST_FUZZ_TARGET to one of: \(names)\n".utf8))
        exit(64)
    }
    return target
}()

@_cdecl("LLVMFuzzerInitialize")
public func initialize(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
) -> CInt {
    _ = selected
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func testOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = count == 0 ? [] : Array(UnsafeRawBufferPointer(start: start, count: count))
    selected.runBlocking(bytes)
    return 0
}
