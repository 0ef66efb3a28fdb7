import FencepostCore
import FencepostFormats

/// The regions and roster commands that run without a store read from files (`scan`,
/// `simulate-device`): a refused config exits 1 with its problems; a roster file that cannot
/// be read exits 3, a malformed one 1.
enum RegionFiles {
    static func load(_ regionPaths: [String], roster rosterPath: String?) throws -> ([Region], DeviceRoster) {
        let regions: [Region]
        do {
            regions = try RegionConfigLoader.load(regionPaths)
        } catch {
            throw CommandFailure.invalidInput(RegionPlanOutput.issueLines(error))
        }
        var roster = DeviceRoster()
        if let rosterPath {
            do throws(TraceReadError) {
                roster = try RosterFile.load(rosterPath)
            } catch {
                let line = "error: \(error)"
                throw error.unreadable ? CommandFailure.io(line) : CommandFailure.invalidInput([line])
            }
        }
        return (regions, roster)
    }
}
