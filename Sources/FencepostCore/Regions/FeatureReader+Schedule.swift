import Foundation

extension FeatureReader {
    /// `schedule`: `{"tz": IANA zone, "weekly": [{"days": ["mo", ...], "from": "HH:MM", "to":
    /// "HH:MM"}, ...], "except": ["YYYY-MM-DD", ...]}`. Every problem is reported with the
    /// entry it is in.
    mutating func readSchedule(_ properties: FeatureProperties) -> RegionSchedule? {
        let value: [String: JSONValue]
        switch properties["schedule"] {
        case nil, .null?: return nil
        case .object(let members)?: value = members
        case let other?:
            refuseSchedule("must be an object with tz and weekly, found a JSON \(other.typeName)")
            return nil
        }
        let before = problems.count
        for key in value.keys.sorted() where !["tz", "weekly", "except"].contains(key) {
            refuseSchedule("has an unknown member \"\(key)\" (tz, weekly and except are known)")
        }
        var zone: String?
        switch value["tz"] {
        case .string(let name)? where Self.isIANAZone(name):
            zone = name
        case .string(let name)?:
            refuseSchedule("tz \"\(name)\" is no IANA time zone (such as \"Europe/Dublin\")")
        default:
            refuseSchedule("needs tz, an IANA time zone (such as \"Europe/Dublin\")")
        }
        var weekly: [RegionSchedule.Weekly] = []
        if let entries = value["weekly"]?.arrayValue, !entries.isEmpty {
            for (index, entry) in entries.enumerated() {
                if let rule = readWeekly(entry, index: index) { weekly.append(rule) }
            }
        } else {
            refuseSchedule("needs weekly, a non-empty array of {\"days\", \"from\", \"to\"}")
        }
        var except: [LocalDate] = []
        switch value["except"] {
        case nil, .null?: break
        case .array(let items)?:
            for item in items {
                if let text = item.stringValue, let date = LocalDate(text) {
                    except.append(date)
                } else {
                    refuseSchedule("except must list dates as \"YYYY-MM-DD\", found \(Self.shown(item))")
                }
            }
        case let other?:
            refuseSchedule("except must be an array of dates, found a JSON \(other.typeName)")
        }
        guard problems.count == before, let zone else { return nil }
        return RegionSchedule(timeZone: zone, weekly: weekly, except: except)
    }

    private mutating func readWeekly(_ entry: JSONValue, index: Int) -> RegionSchedule.Weekly? {
        let at = "weekly[\(index)]"
        guard case .object(let members) = entry else {
            refuseSchedule("\(at) must be an object with days, from and to")
            return nil
        }
        var days: [Weekday] = []
        if let names = members["days"]?.arrayValue, !names.isEmpty {
            for name in names {
                if let day = name.stringValue.flatMap(Weekday.init(name:)) {
                    days.append(day)
                } else {
                    refuseSchedule("\(at).days: \(Self.shown(name)) is no day (mo, tu, we, th, fr, sa, su)")
                }
            }
        } else {
            refuseSchedule("\(at) needs days, a non-empty array such as [\"mo\", \"tu\"]")
        }
        let from = members["from"]?.stringValue.flatMap { RegionSchedule.minutes($0, endOfDay: false) }
        let to = members["to"]?.stringValue.flatMap { RegionSchedule.minutes($0, endOfDay: true) }
        if from == nil { refuseSchedule("\(at).from must be a local time \"HH:MM\" (00:00 to 23:59)") }
        if to == nil { refuseSchedule("\(at).to must be a local time \"HH:MM\" (00:00 to 24:00)") }
        guard let from, let to, !days.isEmpty else { return nil }
        guard from != to % 1440 || to == 1440 && from == 0 else {
            refuseSchedule("\(at): from and to are the same time; for a whole day write \"00:00\" to \"24:00\"")
            return nil
        }
        return RegionSchedule.Weekly(days: days, from: from, to: to)
    }

    private mutating func refuseSchedule(_ reason: String) {
        problems.append(.invalidProperty(name: "schedule", reason: reason))
    }

    /// A zone the system knows by an IANA name (`Area/Location`, or `UTC`), not by an
    /// abbreviation such as `EST`, whose meaning varies.
    private static func isIANAZone(_ name: String) -> Bool {
        (name == "UTC" || name.contains("/")) && TimeZone(identifier: name) != nil
    }

    private static func shown(_ value: JSONValue) -> String {
        if let text = value.stringValue { return "\"\(text)\"" }
        return "a JSON \(value.typeName)"
    }
}
