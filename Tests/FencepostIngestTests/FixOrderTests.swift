import FencepostCore
import FencepostIngest
import Testing

@Suite struct FixOrderTests {
    /// Everything the order settles, adding the fixes one by one, then finishing.
    func settled(_ fixes: [Fix], window: Int) throws -> [Fix] {
        var order = FixOrder(window: window)
        var out: [Fix] = []
        for fix in fixes {
            try order.add(fix)
            while let next = try order.next() { out.append(next) }
        }
        try order.finish()
        while let next = try order.next() { out.append(next) }
        return out
    }

    func fix(_ device: String, _ time: Double) -> Fix { Fix(device: device, time: time, lat: 0, lon: 0) }

    /// Devices in runs and interleaved, each in time order, come out as they went in; one fix
    /// earlier than its device's latest, seen before another device's run, sorts the input by time.
    @Test func aDeviceBackInTimeAfterAnotherDevicesRunSortsTheInput() throws {
        let inOrder = [fix("a", 1), fix("a", 2), fix("b", 0), fix("b", 5), fix("a", 3), fix("c", 1), fix("a", 3)]
        #expect(try settled(inOrder, window: 100) == inOrder)
        let backInTime = [fix("a", 1), fix("a", 4), fix("b", 0), fix("b", 5), fix("a", 3), fix("b", 6)]
        #expect(try settled(backInTime, window: 100).map(\.time) == [0, 1, 3, 4, 5, 6])
        // Found in order within the window: the rest streams as it comes.
        let streamed = try settled(inOrder + [fix("a", 9), fix("b", 7)], window: 4)
        #expect(streamed == inOrder + [fix("a", 9), fix("b", 7)])
    }

    /// A second input starts with no memory of the first's times: its fixes, in order per
    /// device though earlier than the first input's, keep their input order (a sorted input
    /// would put b's first).
    @Test func eachInputIsJudgedOnItsOwn() throws {
        var order = FixOrder(window: 100)
        for fix in [fix("a", 10), fix("a", 20)] { try order.add(fix) }
        try order.finish()
        while try order.next() != nil {}
        for fix in [fix("a", 1), fix("b", 0.5)] { try order.add(fix) }
        try order.finish()
        var out: [String] = []
        while let next = try order.next() { out.append("\(next.device)@\(next.time)") }
        #expect(out == ["a@1.0", "b@0.5"])
    }
}
