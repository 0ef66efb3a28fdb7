import FencepostCore
import FencepostService
import FencepostTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Synchronization
import Testing

/// `GET /openapi.json` describes the API the router serves: every route in the document, and
/// nothing in the document the router does not serve.
@Suite("The OpenAPI document")
struct OpenAPIDocumentTests {
    @Test("every route of the router is in the document, with its method, and the document has no other")
    func routesAndDocumentAgree() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        let routes = Mutex<[String]>([])
        var settings = ServiceSettings(pollInterval: .milliseconds(50))
        settings.onRoutes = { found in routes.withLock { $0 = found } }
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let app = try await buildApplication(store: fixture.store, settings: settings, logger: logger)
        try await app.test(.router) { client in
            let response = try await client.execute(uri: "/openapi.json", method: .get)
            #expect(response.status == .ok)
            let document = try #require(response.json)
            #expect(document["openapi"]?.stringValue == "3.1.0")
            var documented: Set<String> = []
            for (path, item) in document["paths"]?.objectValue ?? [:] {
                for method in (item.objectValue ?? [:]).keys { documented.insert("\(method.uppercased()) \(path)") }
            }
            let served = Set(routes.withLock { $0 })
            #expect(served.count > 30)
            #expect(served.subtracting(documented).sorted() == [], "served, not documented")
            #expect(documented.subtracting(served).sorted() == [], "documented, not served")
            // Every operation says what it answers, and every $ref resolves.
            let schemas = document["components"]?["schemas"]?.objectValue ?? [:]
            for (path, item) in document["paths"]?.objectValue ?? [:] {
                for (method, operation) in item.objectValue ?? [:] {
                    #expect(operation["responses"]?.objectValue?.isEmpty == false, "\(method) \(path)")
                }
            }
            for reference in Self.references(in: document) {
                #expect(schemas[String(reference.dropFirst("#/components/schemas/".count))] != nil, "\(reference)")
            }
        }
    }

    static func references(in value: JSONValue) -> [String] {
        switch value {
        case .object(let members):
            return (members["$ref"]?.stringValue.map { [$0] } ?? []) + members.values.flatMap(references)
        case .array(let items): return items.flatMap(references)
        default: return []
        }
    }
}
