import FencepostCore
import Testing

struct JSONValueEncoderTests {
    private struct Inner: Encodable {
        var count: UInt8
        var ratio: Float
    }

    private struct Report: Encodable {
        var fixesRead: Int
        var seconds: Double
        var name: String
        var absent: String?
        var present: Int64?
        var flags: [Bool]
        var counts: [String: Int]
        var inner: Inner
        var raw: JSONValue
        var nothing: JSONValue

        enum CodingKeys: String, CodingKey {
            case fixesRead = "fixes_read"
            case seconds, name, absent, present, flags, counts, inner, raw, nothing
        }
    }

    /// A type that writes `null` itself for a missing value, and a nested container by hand.
    private struct ExplicitNull: Encodable {
        var error: String?

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: AnyKey.self)
            try container.encode(error, forKey: AnyKey("error"))
            var list = container.nestedUnkeyedContainer(forKey: AnyKey("list"))
            try list.encodeNil()
            try list.encode(2.5)
            var nested = container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey("nested"))
            try nested.encode(true, forKey: AnyKey("ok"))
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    @Test func writesEveryKindOfFieldCanonically() throws {
        let report = Report(
            fixesRead: 2144, seconds: 0.125, name: "a \"b\"", absent: nil, present: 7, flags: [true, false],
            counts: ["exit": 3, "enter": 4], inner: Inner(count: 5, ratio: 0.5), raw: .array([.string("x"), .null]),
            nothing: .null)
        #expect(
            try JSONValueEncoder.canonicalText(report)
                == #"{"counts":{"enter":4,"exit":3},"fixes_read":2144,"flags":[true,false],"inner":{"count":5,"ratio":0.5},"name":"a \"b\"","nothing":null,"present":7,"raw":["x",null],"seconds":0.125}"#
        )
    }

    @Test func aTypeMayWriteNullAndNestedContainersItself() throws {
        #expect(
            try JSONValueEncoder.canonicalText(ExplicitNull(error: nil))
                == #"{"error":null,"list":[null,2.5],"nested":{"ok":true}}"#)
        #expect(try JSONValueEncoder.encode([1, 2]) == .array([.number(1), .number(2)]))
        // A posted batch's answer may list tens of thousands of events; a fleet's report as many devices.
        let many = try JSONValueEncoder.encode(["items": Array(0..<50_000), "more": Array(0..<3)])
        #expect(many["items"]?.arrayValue?.count == 50_000 && many["items"]?.arrayValue?.last == .number(49_999))
        #expect(many["more"] == .array([.number(0), .number(1), .number(2)]))
        #expect(try JSONValueEncoder.encode("alone") == .string("alone"))
    }
}
