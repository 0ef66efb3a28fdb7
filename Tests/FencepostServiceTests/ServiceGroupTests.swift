import AsyncHTTPClient
import FencepostServerTestSupport
import FencepostService
import FencepostStore
import Logging
import NIOCore
import NIOHTTP1
import Testing

/// `serve` as the command runs it: one service group holding the store's connection pool and the
/// application.
@Suite("The service group")
struct ServiceGroupTests {
    @Test("the group runs the store's connection pool: the service answers on a store opened as serve opens it")
    func poolRunsInTheGroup() async throws {
        let fixture = try await ServiceFixture()
        defer { fixture.cleanUp() }
        // Opened as `serve` opens it: a PostgreSQL store's pool is left to the group (nothing in
        // the store runs it; a transaction before the group ran it would wait for ever).
        let store = try await Store.open(fixture.store.location, poolAsService: true)
        #expect((store.poolService != nil) == TestStores.onPostgres)
        let (ports, listening) = AsyncStream<Int>.makeStream()
        let settings = ServiceSettings(port: 0) { listening.yield($0) }
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        let service = Task { try await runService(store: store, settings: settings, logger: logger) }
        var iterator = ports.makeAsyncIterator()
        let port = try #require(await iterator.next())

        let http = HTTPClient(eventLoopGroupProvider: .singleton)
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/devices/phone/locations")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(fixture.phone)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: ServiceFixture.batchBody(ServiceFixture.walk())))
        let answer = await Result { try await http.execute(request, timeout: .seconds(30)) }
        try await http.shutdown()
        service.cancel()
        _ = await service.result
        await store.close()

        #expect(try answer.get().status.code == 200)
        #expect(try await fixture.counts().events == 2)
    }
}

extension Result where Failure == any Error {
    fileprivate init(_ body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
