/// One step of an XML document, as ``XMLPullParser`` reports it.
package enum XMLEvent: Equatable {
    /// An element opened; the name and attribute names are local (namespace prefixes dropped).
    case start(name: String, attributes: [String: String])
    case end(name: String)
    /// Character data between tags, entities decoded; whitespace-only text is not reported.
    case text(String)
}

/// A small streaming XML reader: elements, attributes and text, read chunk by chunk so a
/// multi-gigabyte document needs no more memory than its largest element.
///
/// Enough XML for GPX, TCX and Apple Health exports: the prolog, comments, processing
/// instructions, a DOCTYPE with an internal subset, CDATA, the predefined and numeric entities.
/// It checks that tags nest; it does not validate.
package struct XMLPullParser {
    private var window: ChunkWindow
    private var pending: [XMLEvent] = []
    private var openElements: [String] = []
    package init(source: ByteSource) {
        window = ChunkWindow(source: source)
    }

    package var name: String { window.source.name }
    /// The line the parser has reached, for error messages.
    package var line: Int { window.line }

    /// The next event, or nil at the end of a well-formed document.
    package mutating func next() throws(TraceReadError) -> XMLEvent? {
        if !pending.isEmpty { return pending.removeFirst() }
        while true {
            guard try window.ensure(1) else {
                if let open = openElements.last { throw failure("unexpected end of file inside <\(open)>") }
                return nil
            }
            if window.buffer[window.position] != UInt8(ascii: "<") {
                if let text = try readText() { return .text(text) }
                continue
            }
            guard try window.ensure(2) else { throw failure("unexpected end of file after '<'") }
            switch window.buffer[window.position + 1] {
            case UInt8(ascii: "?"):
                try skip(past: Array("?>".utf8))
            case UInt8(ascii: "!"):
                try skipDeclaration()
                if let cdata = pendingCDATA.take() { return .text(cdata) }
            case UInt8(ascii: "/"):
                return try readEndTag()
            default:
                return try readStartTag()
            }
        }
    }

    private var pendingCDATA = CDATABox()

    // MARK: - Tokens

    private mutating func readStartTag() throws(TraceReadError) -> XMLEvent {
        let end = try findTagEnd()
        var index = window.position + 1
        let nameStart = index
        while index < end, !isSpace(window.buffer[index]), window.buffer[index] != UInt8(ascii: "/") { index += 1 }
        let name = localName(window.buffer[nameStart..<index])
        guard !name.isEmpty else { throw failure("malformed start tag") }
        var attributes: [String: String] = [:]
        while true {
            while index < end, isSpace(window.buffer[index]) { index += 1 }
            guard index < end, window.buffer[index] != UInt8(ascii: "/") else { break }
            let attributeStart = index
            while index < end, window.buffer[index] != UInt8(ascii: "="), !isSpace(window.buffer[index]) { index += 1 }
            let attributeName = localName(window.buffer[attributeStart..<index])
            while index < end, isSpace(window.buffer[index]) { index += 1 }
            guard index < end, window.buffer[index] == UInt8(ascii: "=") else {
                throw failure("attribute \(attributeName) of <\(name)> has no value")
            }
            index += 1
            while index < end, isSpace(window.buffer[index]) { index += 1 }
            guard index < end, window.buffer[index] == UInt8(ascii: "\"") || window.buffer[index] == UInt8(ascii: "'")
            else {
                throw failure("attribute \(attributeName) of <\(name)> is not quoted")
            }
            let quote = window.buffer[index]
            index += 1
            let valueStart = index
            while index < end, window.buffer[index] != quote { index += 1 }
            guard index < end else { throw failure("unterminated attribute \(attributeName) of <\(name)>") }
            attributes[attributeName] = decodeEntities(window.buffer[valueStart..<index])
            index += 1
        }
        let selfClosing = window.buffer[end - 1] == UInt8(ascii: "/")
        window.advance(to: end + 1)
        if selfClosing {
            pending.append(.end(name: name))
        } else {
            openElements.append(name)
        }
        return .start(name: name, attributes: attributes)
    }

    private mutating func readEndTag() throws(TraceReadError) -> XMLEvent {
        let end = try findTagEnd()
        let name = localName(window.buffer[(window.position + 2)..<end].filter { !isSpace($0) }[...])
        guard let open = openElements.popLast() else { throw failure("closing tag </\(name)> without an open element") }
        guard open == name else { throw failure("closing tag </\(name)> does not match <\(open)>") }
        window.advance(to: end + 1)
        return .end(name: name)
    }

    /// The text up to the next tag, entities decoded; nil when it is only whitespace (the
    /// indentation between elements, most of the time: told from the bytes, without a string).
    private mutating func readText() throws(TraceReadError) -> String? {
        var bytes: [UInt8] = []
        while true {
            if let less = window.buffer[window.position...].firstIndex(of: UInt8(ascii: "<")) {
                bytes.append(contentsOf: window.buffer[window.position..<less])
                window.advance(to: less)
                break
            }
            bytes.append(contentsOf: window.buffer[window.position...])
            window.advance(to: window.buffer.count)
            guard try window.ensure(1) else { break }
        }
        if bytes.allSatisfy(isASCIIWhitespace) { return nil }
        let text = decodeEntities(bytes[...])
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            return text.utf8.allSatisfy(isASCIIWhitespace) ? nil : text
        }
        return text.contains(where: { !$0.isWhitespace }) ? text : nil
    }

    /// Comments, CDATA sections and DOCTYPE (with its internal subset).
    private mutating func skipDeclaration() throws(TraceReadError) {
        _ = try window.ensure(9)
        let head = window.buffer[window.position..<min(window.position + 9, window.buffer.count)]
        if head.starts(with: Array("<!--".utf8)) {
            try skip(past: Array("-->".utf8))
        } else if head.starts(with: Array("<![CDATA[".utf8)) {
            let end = try find(Array("]]>".utf8), from: window.position + 9)
            // After find(), which may have read more: the buffer may have moved.
            let start = window.position + 9
            pendingCDATA.value = String(decoding: window.buffer[start..<end], as: UTF8.self)
            window.advance(to: end + 3)
        } else {
            // <!DOCTYPE ...> possibly with [ ... ] holding further declarations.
            var depth = 0
            var index = window.position + 2
            while true {
                while index >= window.buffer.count {
                    let offset = index - window.position  // more() moves the unread bytes
                    guard try window.more() else { throw failure("unterminated declaration") }
                    index = window.position + offset
                }
                let byte = window.buffer[index]
                if byte == UInt8(ascii: "[") { depth += 1 }
                if byte == UInt8(ascii: "]") { depth -= 1 }
                if byte == UInt8(ascii: ">"), depth <= 0 { break }
                index += 1
            }
            window.advance(to: index + 1)
        }
    }

    // MARK: - Buffer

    private mutating func findTagEnd() throws(TraceReadError) -> Int {
        var quote: UInt8?
        var index = window.position + 1
        while true {
            while index >= window.buffer.count {
                let offset = index - window.position
                guard try window.more() else { throw failure("unexpected end of file inside a tag") }
                index = window.position + offset
            }
            let byte = window.buffer[index]
            if let open = quote {
                if byte == open { quote = nil }
            } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                quote = byte
            } else if byte == UInt8(ascii: ">") {
                return index
            } else if byte == UInt8(ascii: "<") {
                throw failure("'<' inside a tag")
            }
            index += 1
        }
    }

    private mutating func find(_ pattern: [UInt8], from start: Int) throws(TraceReadError) -> Int {
        var index = start
        while true {
            while index + pattern.count > window.buffer.count {
                let offset = index - window.position
                guard try window.more() else {
                    throw failure("unterminated section, expected \(String(decoding: pattern, as: UTF8.self))")
                }
                index = window.position + offset
            }
            if window.buffer[index] == pattern[0], window.buffer[index..<(index + pattern.count)].elementsEqual(pattern)
            {
                return index
            }
            index += 1
        }
    }

    private mutating func skip(past pattern: [UInt8]) throws(TraceReadError) {
        let index = try find(pattern, from: window.position + 2)
        window.advance(to: index + pattern.count)
    }

    private func failure(_ reason: String) -> TraceReadError {
        window.failure("malformed XML: \(reason)")
    }

    // MARK: - Text

    private func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    private func localName(_ bytes: ArraySlice<UInt8>) -> String {
        if let colon = bytes.lastIndex(of: UInt8(ascii: ":")) {
            return String(decoding: bytes[(colon + 1)...], as: UTF8.self)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// What `Character.isWhitespace` says of an ASCII byte: tab, line feed, vertical tab, form
    /// feed, carriage return and space.
    private func isASCIIWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// Text with the predefined and numeric entities decoded, byte by byte (an unknown or
    /// malformed entity stays as it was written).
    private func decodeEntities(_ bytes: ArraySlice<UInt8>) -> String {
        guard var amp = bytes.firstIndex(of: UInt8(ascii: "&")) else { return String(decoding: bytes, as: UTF8.self) }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var start = bytes.startIndex
        while true {
            result.append(contentsOf: bytes[start..<amp])
            guard let semicolon = bytes[amp...].firstIndex(of: UInt8(ascii: ";")) else {
                start = amp
                break
            }
            if !Self.appendEntity(bytes[(amp + 1)..<semicolon], to: &result) {
                result.append(contentsOf: bytes[amp...semicolon])
            }
            start = semicolon + 1
            guard let next = bytes[start...].firstIndex(of: UInt8(ascii: "&")) else { break }
            amp = next
        }
        result.append(contentsOf: bytes[start...])
        return String(decoding: result, as: UTF8.self)
    }

    /// Appends the UTF-8 bytes an entity's name (between `&` and `;`) stands for; false when
    /// the name is unknown or malformed.
    private static func appendEntity(_ name: ArraySlice<UInt8>, to result: inout [UInt8]) -> Bool {
        switch String(decoding: name, as: UTF8.self) {
        case "amp": result.append(UInt8(ascii: "&"))
        case "lt": result.append(UInt8(ascii: "<"))
        case "gt": result.append(UInt8(ascii: ">"))
        case "quot": result.append(UInt8(ascii: "\""))
        case "apos": result.append(UInt8(ascii: "'"))
        case let numeric where numeric.hasPrefix("#"):
            let hex = numeric.hasPrefix("#x")
            guard let code = UInt32(numeric.dropFirst(hex ? 2 : 1), radix: hex ? 16 : 10),
                let scalar = Unicode.Scalar(code)
            else {
                return false
            }
            result.append(contentsOf: String(Character(scalar)).utf8)
        default:
            return false
        }
        return true
    }
}

/// Holds a CDATA section's text until `next()` returns it.
private struct CDATABox {
    var value: String?
    mutating func take() -> String? {
        defer { value = nil }
        return value
    }
}
