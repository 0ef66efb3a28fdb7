import FencepostCore
import FencepostFormats
import Testing

struct XMLPullParserTests {
    private func events(_ xml: String, chunk: Int = 7) throws -> [XMLEvent] {
        // Small chunks: entities, tags and text cross chunk boundaries.
        var offset = 0
        let bytes = Array(xml.utf8)
        let source = ByteSource(name: "test.xml", size: bytes.count) { () throws(TraceReadError) -> [UInt8]? in
            guard offset < bytes.count else { return nil }
            defer { offset += chunk }
            return Array(bytes[offset..<min(offset + chunk, bytes.count)])
        }
        var parser = XMLPullParser(source: source)
        var events: [XMLEvent] = []
        while let event = try parser.next() { events.append(event) }
        return events
    }

    /// Apple Health writes `’` as `&#x2019;` in every source name; the entities decode in
    /// attributes and text alike, and what is not an entity stays as written.
    @Test func entitiesDecodeAndTheRestStaysAsWritten() throws {
        let xml = """
            <r a="Jane&#x2019;s Watch" b="&lt;&amp;&gt;&quot;&apos; &#65;&#x1F600;" c="&unknown; &#xZZ; &#; x&y">\
            fish &amp; chips&#33; &amp</r>
            """
        #expect(
            try events(xml) == [
                .start(
                    name: "r",
                    attributes: ["a": "Jane\u{2019}s Watch", "b": "<&>\"' A\u{1F600}", "c": "&unknown; &#xZZ; &#; x&y"]),
                .text("fish & chips! &amp"),
                .end(name: "r"),
            ])
    }

    /// Text that is only whitespace (indentation, and Unicode spaces such as U+00A0 and U+2028)
    /// is not reported; text with anything else is, whole.
    @Test func whitespaceOnlyTextIsNotReported() throws {
        let xml = "<a>\n\t <b>\u{00A0}\u{2028}</b>\r\n<c>&#32;</c><d> x\u{00A0}</d>\u{0B}\u{0C}</a>"
        #expect(
            try events(xml) == [
                .start(name: "a", attributes: [:]),
                .start(name: "b", attributes: [:]), .end(name: "b"),
                .start(name: "c", attributes: [:]), .end(name: "c"),
                .start(name: "d", attributes: [:]), .text(" x\u{00A0}"), .end(name: "d"),
                .end(name: "a"),
            ])
    }
}
