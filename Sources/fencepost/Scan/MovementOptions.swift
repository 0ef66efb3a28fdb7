import ArgumentParser
import FencepostCore

/// How stops and trips are found (`scan --stops|--trips`, `stops`, `trips`).
struct MovementOptions: ParsableArguments {
    @Option(help: "Metres from a stop's centre within which a fix is still at the stop (a fix's accuracy is credited).")
    var stopRadius: Double = MovementSettings().radius

    @Option(help: "Seconds a device must stay for a stop.")
    var stopMinDuration: Double = MovementSettings().minDuration

    @Option(help: "Seconds of fixes away (two at least) that confirm a departure; one stray fix never does.")
    var stopLeaveDelay: Double = MovementSettings().leaveDelay

    @Option(help: "Seconds of silence that end a stop or a trip at the fix before it.")
    var stopMaxGap: Double = MovementSettings().maxGap

    var settings: MovementSettings {
        MovementSettings(
            radius: stopRadius, minDuration: stopMinDuration, leaveDelay: stopLeaveDelay, maxGap: stopMaxGap)
    }

    func validate() throws {
        for (name, value) in [
            ("--stop-radius", stopRadius), ("--stop-min-duration", stopMinDuration),
            ("--stop-leave-delay", stopLeaveDelay), ("--stop-max-gap", stopMaxGap),
        ] where !(value.isFinite && value > 0) {
            throw ValidationError("\(name): a positive number, not \(value)")
        }
    }
}
