package import FencepostCore

/// A configuration file that cannot be used: the file, where in it (line and column, the key
/// path) and why.
package struct ConfigurationError: Error, CustomStringConvertible {
    package var path: String
    package var line: Int?
    package var column: Int?
    /// `sync.batch_size`, `webhooks[1].url`; empty for the document as a whole.
    package var keyPath: String
    package var reason: String

    package init(path: String, line: Int? = nil, column: Int? = nil, keyPath: String = "", reason: String) {
        self.path = path
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.reason = reason
    }

    package var description: String {
        let place = line.map { ":\($0)" + (column.map { ":\($0)" } ?? "") } ?? ""
        return "\(path)\(place): \(keyPath.isEmpty ? "" : keyPath + ": ")\(reason)"
    }
}

/// One object of a configuration file, read key by key: each value is checked for its type and
/// range, and a key the reader does not know is refused (naming the nearest known one), since
/// a misspelt switch silently left at its default is how `/metrics` stays open by mistake.
package struct ConfigObject {
    let node: LocatedJSON
    let file: String
    let keyPath: String

    /// The document's top-level object.
    package init(document: LocatedJSON, file: String) throws(ConfigurationError) {
        self.node = document
        self.file = file
        self.keyPath = ""
        guard case .object = document.value else {
            throw ConfigurationError(
                path: file, line: document.line, column: document.column,
                reason: "expected a JSON object, found a JSON \(document.value.typeName)")
        }
    }

    private init(node: LocatedJSON, file: String, keyPath: String) {
        self.node = node
        self.file = file
        self.keyPath = keyPath
    }

    /// Refuses any key not in `known`.
    package func allowOnly(_ known: [String]) throws(ConfigurationError) {
        for member in node.members where !known.contains(member.name) {
            var reason = "unknown key"
            if let nearest = Self.nearest(to: member.name, among: known) { reason += "; did you mean \"\(nearest)\"?" }
            reason += " (known here: \(known.joined(separator: ", ")))"
            throw ConfigurationError(
                path: file, line: member.line, column: member.column, keyPath: path(member.name), reason: reason)
        }
    }

    package func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let member = present(key) else { return nil }
        guard case .string(let text) = member.value.value else { throw mismatch(member, "a string") }
        return text
    }

    package func requiredString(_ key: String) throws(ConfigurationError) -> String {
        guard let text = try string(key) else { throw missing(key, "a string") }
        return text
    }

    package func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let member = present(key) else { return nil }
        guard case .bool(let value) = member.value.value else { throw mismatch(member, "true or false") }
        return value
    }

    /// A whole number in `range`.
    package func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let member = present(key) else { return nil }
        guard case .number(let number) = member.value.value, let value = Int(exactly: number) else {
            throw mismatch(member, "a whole number")
        }
        guard range.contains(value) else {
            throw failure(member, "must be from \(range.lowerBound) to \(range.upperBound), got \(value)")
        }
        return value
    }

    /// A number in `range`.
    package func number(_ key: String, in range: ClosedRange<Double>) throws(ConfigurationError) -> Double? {
        guard let member = present(key) else { return nil }
        guard case .number(let value) = member.value.value else { throw mismatch(member, "a number") }
        guard range.contains(value) else {
            throw failure(
                member,
                "must be from \(JSONValue.format(range.lowerBound)) to \(JSONValue.format(range.upperBound)), got \(value)"
            )
        }
        return value
    }

    package func object(_ key: String) throws(ConfigurationError) -> ConfigObject? {
        guard let member = present(key) else { return nil }
        guard case .object = member.value.value else { throw mismatch(member, "an object") }
        return ConfigObject(node: member.value, file: file, keyPath: path(key))
    }

    /// An array of objects.
    package func objects(_ key: String) throws(ConfigurationError) -> [ConfigObject]? {
        guard let member = present(key) else { return nil }
        guard case .array = member.value.value else { throw mismatch(member, "an array") }
        var objects: [ConfigObject] = []
        for (index, item) in member.value.items.enumerated() {
            let itemPath = path(key) + "[\(index)]"
            guard case .object = item.value else {
                throw ConfigurationError(
                    path: file, line: item.line, column: item.column, keyPath: itemPath,
                    reason: "expected an object, found a JSON \(item.value.typeName)")
            }
            objects.append(ConfigObject(node: item, file: file, keyPath: itemPath))
        }
        return objects
    }

    /// An array of strings.
    package func strings(_ key: String) throws(ConfigurationError) -> [String]? {
        guard let member = present(key) else { return nil }
        guard case .array(let items) = member.value.value else { throw mismatch(member, "an array of strings") }
        var strings: [String] = []
        for item in items {
            guard case .string(let text) = item else { throw mismatch(member, "an array of strings") }
            strings.append(text)
        }
        return strings
    }

    /// An object whose values are all strings, as a dictionary.
    package func stringMap(_ key: String) throws(ConfigurationError) -> [String: String]? {
        guard let member = present(key) else { return nil }
        guard case .object = member.value.value else { throw mismatch(member, "an object of strings") }
        var map: [String: String] = [:]
        for entry in member.value.members {
            guard case .string(let text) = entry.value.value else {
                throw ConfigurationError(
                    path: file, line: entry.value.line, column: entry.value.column,
                    keyPath: path(key) + "." + entry.name,
                    reason: "expected a string, found a JSON \(entry.value.value.typeName)")
            }
            map[entry.name] = text
        }
        return map
    }

    /// Any JSON value, as it is.
    package func json(_ key: String) -> JSONValue? {
        present(key)?.value.value
    }

    /// An error about `key`'s value (or this object, when the key is absent).
    package func invalid(_ key: String, _ reason: String) -> ConfigurationError {
        guard let member = node[key] else {
            return ConfigurationError(
                path: file, line: node.line, column: node.column, keyPath: keyPath, reason: reason)
        }
        return failure(member, reason)
    }

    // MARK: - Pieces

    /// The member, unless absent or `null` (both mean "the default").
    private func present(_ key: String) -> LocatedJSON.Member? {
        guard let member = node[key], member.value.value != .null else { return nil }
        return member
    }

    private func path(_ key: String) -> String {
        keyPath.isEmpty ? key : keyPath + "." + key
    }

    private func failure(_ member: LocatedJSON.Member, _ reason: String) -> ConfigurationError {
        ConfigurationError(
            path: file, line: member.value.line, column: member.value.column, keyPath: path(member.name),
            reason: reason)
    }

    private func mismatch(_ member: LocatedJSON.Member, _ expected: String) -> ConfigurationError {
        failure(member, "expected \(expected), found a JSON \(member.value.value.typeName)")
    }

    private func missing(_ key: String, _ expected: String) -> ConfigurationError {
        ConfigurationError(
            path: file, line: node.line, column: node.column, keyPath: path(key),
            reason: "missing: expected \(expected)")
    }

    /// The known key closest to `name` by edit distance, when close enough to be a typo.
    static func nearest(to name: String, among known: [String]) -> String? {
        let scored = known.map { ($0, editDistance(name, $0)) }.min { $0.1 < $1.1 }
        guard let (key, distance) = scored, distance <= max(2, key.count / 3) else { return nil }
        return key
    }

    /// Levenshtein distance over characters.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
