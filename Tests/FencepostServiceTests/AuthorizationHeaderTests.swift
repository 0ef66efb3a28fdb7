import FencepostTestSupport
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@testable import FencepostService

/// The Authorization header as phones and scripts send it: the scheme in any case, basic's
/// credentials in base64 with or without padding; anything else is no credential (401).
@Suite struct AuthorizationHeaderTests {
    @Test func base64DecodesWhatFoundationEncodesAndRefusesWhatItIsNot() {
        var random = SplitMix64(seed: 33)
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            let padded = Data(bytes).base64EncodedString()
            #expect(Base64.decode(padded.utf8) == bytes, "\(padded)")
            let unpadded = padded.replacingOccurrences(of: "=", with: "")
            #expect(Base64.decode(unpadded.utf8) == bytes, "\(unpadded)")
        }
        for bad in ["A", "AAAAA", "AB=C", "AB==C", "A===", "ab cd", "ab-_", "ab\u{0}c", "é"] {
            #expect(Base64.decode(bad.utf8) == nil, "\(bad)")
        }
    }

    /// Headers as templates: `TOKEN` is the phone's token, `b64(…)` what it holds in base64,
    /// `b64u(…)` the same without padding.
    @Test(
        "a scheme in any case, basic with or without padding; a malformed header is 401",
        arguments: [
            ("Bearer TOKEN", 200), ("bearer TOKEN", 200), ("BEARER  TOKEN ", 200),
            ("Basic b64(alice:TOKEN)", 200), ("bAsIc b64(alice:TOKEN)", 200), ("Basic b64u(alice:TOKEN)", 200),
            ("Basic b64(:TOKEN)", 200), ("Basic b64(alice:wrong)", 401), ("Basic b64(TOKEN)", 401),
            ("Basic !!b64(alice:TOKEN)", 401), ("Basic", 401), ("Bearer", 401), ("Basicx b64(alice:TOKEN)", 401),
            ("Token TOKEN", 401), ("Basic /zr/", 401),
        ])
    func header(_ template: String, status: Int) async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let value = Self.expand(template.replacingOccurrences(of: "TOKEN", with: fixture.phone))
        try await fixture.app().test(.router) { client in
            let response = try await client.execute(
                uri: "/v1/devices/phone/locations", method: .post, headers: [.authorization: value],
                body: ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
            #expect(Int(response.status.code) == status, "\(value)")
        }
    }

    /// `template` with each `b64(…)` and `b64u(…)` encoded.
    static func expand(_ template: String) -> String {
        guard let open = template.range(of: #"b64u?\("#, options: .regularExpression),
            let close = template[open.upperBound...].firstIndex(of: ")")
        else { return template }
        var encoded = Data(template[open.upperBound..<close].utf8).base64EncodedString()
        if template[open].hasPrefix("b64u") { encoded = encoded.replacingOccurrences(of: "=", with: "") }
        return String(template[..<open.lowerBound]) + encoded
            + expand(String(template[template.index(after: close)...]))
    }
}
