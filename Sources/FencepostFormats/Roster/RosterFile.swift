package import FencepostCore
import Foundation

/// A roster file for `fencepost devices plan|apply`: CSV with a header naming `device`, and
/// optionally `name`, `groups` (`;`-separated), `geofence_budget` and `platform`, or JSON, an
/// array of objects with `device`, `name`, `groups` (an array), `geofence_budget` and
/// `platform`, or `{"group", "geofence_budget", "platform"}` for every member of a group. Every device id follows ``DeviceID``'s rule and appears once;
/// a file with any problem is refused whole, at its first problem, with its line.
package enum RosterFile {
    package static func load(_ path: String) throws(TraceReadError) -> DeviceRoster {
        let bytes = try InputFile.read(path, limit: 64 << 20)
        let first = bytes.first { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 || $0 == 0xEF) }
        if first == UInt8(ascii: "[") || first == UInt8(ascii: "{") { return try json(bytes, file: path) }
        return try csv(bytes, file: path)
    }

    // MARK: - JSON

    package static func json(_ bytes: [UInt8], file: String) throws(TraceReadError) -> DeviceRoster {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw TraceReadError(file: file, line: error.line, reason: "not JSON: \(error.reason)")
        }
        guard case .array(let items) = value else {
            throw TraceReadError(
                file: file, line: nil, reason: "a JSON roster is an array of {\"device\", \"name\", \"groups\"} objects"
            )
        }
        var entries: [DeviceRoster.Entry] = []
        var groupBudgets: [String: GeofenceBudget] = [:]
        for (index, item) in items.enumerated() {
            let place = "device #\(index + 1)"
            guard case .object(let members) = item else {
                throw TraceReadError(file: file, line: nil, reason: "\(place) is not an object")
            }
            if members["device"] == nil, case .string(let group)? = members["group"] {
                let place = "item #\(index + 1) (group \(group))"
                if let unknown = members.keys.sorted().first(where: {
                    !["group", "geofence_budget", "platform"].contains($0)
                }) {
                    throw TraceReadError(
                        file: file, line: nil,
                        reason: "\(place): unknown key \"\(unknown)\" (group, geofence_budget, platform)")
                }
                guard groupBudgets[group] == nil else {
                    throw TraceReadError(file: file, line: nil, reason: "\(place): group \(group) is listed twice")
                }
                groupBudgets[group] = try budget(
                    members["geofence_budget"], members["platform"], file: file, line: nil, place: place)
                continue
            }
            if let unknown = members.keys.sorted().first(where: { !(deviceKeys + budgetKeys).contains($0) }) {
                throw TraceReadError(
                    file: file, line: nil,
                    reason:
                        "\(place): unknown key \"\(unknown)\" (device, name, groups, geofence_budget, platform; or group)"
                )
            }
            guard let device = members["device"]?.stringValue else {
                throw TraceReadError(file: file, line: nil, reason: "\(place) has no \"device\" string")
            }
            let name: String?
            switch members["name"] {
            case nil, .null?: name = nil
            case .string(let text)?: name = text
            default: throw TraceReadError(file: file, line: nil, reason: "\(place): \"name\" must be a string")
            }
            var groups: [String] = []
            switch members["groups"] {
            case nil, .null?: break
            case .array(let names)?:
                groups = names.compactMap(\.stringValue)
                guard groups.count == names.count else {
                    throw TraceReadError(file: file, line: nil, reason: "\(place): \"groups\" must hold strings")
                }
            default:
                throw TraceReadError(file: file, line: nil, reason: "\(place): \"groups\" must be an array of names")
            }
            var entry = try entry(device, name, groups, file: file, line: nil, place: place, seen: entries)
            entry.budget = try budget(
                members["geofence_budget"], members["platform"], file: file, line: nil, place: place)
            entries.append(entry)
        }
        return DeviceRoster(entries, groupBudgets: groupBudgets)
    }

    static let deviceKeys = ["device", "name", "groups"]
    static let budgetKeys = ["geofence_budget", "platform"]

    /// `geofence_budget` (a whole number, 2 to 10,000) and `platform` (`ios` or `android`),
    /// each optional.
    static func budget(_ count: JSONValue?, _ platform: JSONValue?, file: String, line: Int?, place: String)
        throws(TraceReadError) -> GeofenceBudget
    {
        var budget = GeofenceBudget()
        switch count {
        case nil, .null?: break
        case .number(let number)?
        where number.rounded() == number && GeofenceBudget.counts.contains(Int(exactly: number) ?? 0):
            budget.count = Int(exactly: number)
        case let other?:
            throw TraceReadError(
                file: file, line: line,
                reason: "\(place): geofence_budget must be a whole number from 2 to 10000, not \(other.canonicalText())"
            )
        }
        switch platform {
        case nil, .null?: break
        case .string(let name)? where GeofenceBudget.platforms.contains(name):
            budget.platform = name
        case let other?:
            throw TraceReadError(
                file: file, line: line,
                reason: "\(place): platform must be ios or android, not \(other.canonicalText())")
        }
        return budget
    }

    // MARK: - CSV

    package static func csv(_ bytes: [UInt8], file: String) throws(TraceReadError) -> DeviceRoster {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? $0.dropLast() : $0
        }
        guard let header = lines.first.map({ fields(of: $0).map { $0.lowercased() } }),
            let deviceColumn = header.firstIndex(of: "device")
        else {
            throw TraceReadError(
                file: file, line: 1, reason: "the header must name a device column (device,name,groups)")
        }
        if let unknown = header.first(where: { !(deviceKeys + budgetKeys).contains($0) }) {
            throw TraceReadError(
                file: file, line: 1,
                reason: "unknown column \"\(unknown)\" (device, name, groups, geofence_budget, platform)")
        }
        let column = { (name: String) in header.firstIndex(of: name) }
        var entries: [DeviceRoster.Entry] = []
        for (offset, line) in lines.enumerated().dropFirst() where !line.allSatisfy(\.isWhitespace) {
            let values = fields(of: line)
            guard values.count == header.count else {
                throw TraceReadError(
                    file: file, line: offset + 1, reason: "\(values.count) fields where the header has \(header.count)")
            }
            let name = column("name").map { values[$0] }.flatMap { $0.isEmpty ? nil : $0 }
            let groups = column("groups").map { values[$0].split(separator: ";").map(String.init) } ?? []
            var entry = try entry(
                values[deviceColumn], name, groups, file: file, line: offset + 1, place: "line \(offset + 1)",
                seen: entries)
            // Numbers and names as text: an empty field is none; a number must read as one.
            let count = column("geofence_budget").map { values[$0] }.flatMap { $0.isEmpty ? nil : $0 }
            let platform = column("platform").map { values[$0] }.flatMap { $0.isEmpty ? nil : $0 }
            entry.budget = try budget(
                count.map { Double($0).map(JSONValue.number) ?? .string($0) }, platform.map(JSONValue.string),
                file: file,
                line: offset + 1, place: "line \(offset + 1)")
            entries.append(entry)
        }
        return DeviceRoster(entries)
    }

    /// A line's fields: comma-separated, a field in double quotes may hold commas and `""`.
    static func fields(of line: Substring) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var characters = line.makeIterator()
        while let character = characters.next() {
            if quoted {
                if character == "\"" {
                    if let next = characters.next() {
                        if next == "\"" {
                            field.append("\"")
                        } else {
                            quoted = false
                            if next == "," {
                                fields.append(field)
                                field = ""
                            } else {
                                field.append(next)
                            }
                        }
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(character)
                }
            } else if character == "\"" && field.isEmpty {
                quoted = true
            } else if character == "," {
                fields.append(field)
                field = ""
            } else {
                field.append(character)
            }
        }
        fields.append(field)
        return fields.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    // MARK: - Entries

    private static func entry(
        _ device: String, _ name: String?, _ groups: [String], file: String, line: Int?, place: String,
        seen: [DeviceRoster.Entry]
    ) throws(TraceReadError) -> DeviceRoster.Entry {
        if let problem = DeviceID.problem(device) {
            throw TraceReadError(file: file, line: line, reason: "\(place): \(problem)")
        }
        if seen.contains(where: { $0.device == device }) {
            throw TraceReadError(file: file, line: line, reason: "\(place): device \(device) is listed twice")
        }
        let groups = groups.map { $0.trimmingCharacters(in: .whitespaces) }
        if let bad = groups.first(where: { $0.isEmpty || $0.utf8.count > 200 || $0.utf8.contains { $0 < 0x20 } }) {
            throw TraceReadError(
                file: file, line: line, reason: "\(place): a group name \"\(bad)\" is empty or too long")
        }
        return DeviceRoster.Entry(device: device, name: name, groups: groups)
    }
}
