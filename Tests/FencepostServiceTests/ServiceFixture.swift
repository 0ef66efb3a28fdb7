import FencepostCore
import FencepostServerTestSupport
import FencepostService
import FencepostStore
import FencepostTestSupport
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore

/// A real store in a temporary directory with one circular region ("home", 100 m around
/// 47.0 N 8.0 E) and a token of each scope, and the service built on it.
struct ServiceFixture {
    let directory: URL
    let store: Store
    let admin: String
    let reader: String
    let phone: String
    let otherDevice: String

    static let home = (lat: 47.0, lon: 8.0)

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "fencepost-service-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store =
            TestStores.onPostgres
            ? try await TestStores.fresh() : try Store(path: directory.appendingPathComponent("store.db").path)
        try await store.applyRegions([try Self.region(id: "home", lat: Self.home.lat, lon: Self.home.lon, radius: 100)])
        // The tests' fixes are from 2025 (fixed times): the service's prune job, which keeps
        // history_days of fixes by their own times, would remove them at its first run, at a
        // moment of its own. A century keeps them for every test.
        try await store.setHistoryDays(36_500)
        admin = try await store.createToken(name: "admin", scope: .admin)
        reader = try await store.createToken(name: "reader", scope: .read)
        phone = try await store.createToken(name: "phone", scope: .device("phone"))
        otherDevice = try await store.createToken(name: "other", scope: .device("other"))
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: directory)
        // A PostgreSQL store's connections go back to the server (tests make many stores).
        let store = self.store
        Task { await store.close() }
    }

    static func region(id: String, lat: Double, lon: Double, radius: Double) throws -> Region {
        try RegionConfigParser().region(
            fromFeature: Data(circleFeature(id: id, lat: lat, lon: lon, radius: radius).utf8), source: "test")
    }

    static func circleFeature(id: String, lat: Double, lon: Double, radius: Double) -> String {
        #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"radius":\#(radius)}}"#
    }

    /// The service on the fixture's store, or on `store` (another instance's connection to the
    /// same database, ``secondStore()``).
    func app(
        _ configuration: ServiceConfiguration = ServiceConfiguration(), store: Store? = nil,
        pollInterval: Duration = .milliseconds(50)
    ) async throws -> some ApplicationProtocol {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        return try await buildApplication(
            store: store ?? self.store,
            settings: ServiceSettings(configuration: configuration, pollInterval: pollInterval), logger: logger)
    }

    /// The same database opened again, as a second service instance (or process) would.
    func secondStore() async throws -> Store {
        try await Store.open(store.location)
    }

    /// A walk due north through home: 10 fixes a minute apart from 600 m south to 600 m north
    /// (about 0.0054° of latitude each side), accurate to 5 m.
    static func walk(start: Double = 1_750_000_000) -> [(time: Double, lat: Double, lon: Double)] {
        (0...12).map { step in (start + Double(step) * 60, home.lat - 0.0054 + Double(step) * 0.0009, home.lon) }
    }

    static func batchBody(_ fixes: [(time: Double, lat: Double, lon: Double)]) -> String {
        let items = fixes.map {
            #"{"time":"\#(Timestamp.format(seconds: $0.time))","lat":\#($0.lat),"lon":\#($0.lon),"accuracy":5}"#
        }
        return #"{"fixes":["# + items.joined(separator: ",") + "]}"
    }

    /// How many events, event and visit outbox rows, and devices the store holds: "nothing
    /// written" checks.
    func counts() async throws -> (events: Int, outbox: Int, devices: Int) {
        var events = 0
        try await store.forEachEvent(EventQuery()) { _ in events += 1 }
        let outbox = try await store.syncChanges(after: 0, entities: [.event, .visit], device: nil, limit: 1_000_000)
            .count
        return await (events, outbox, try store.deviceAnchors().count)
    }
}

extension HTTPFields {
    static func bearer(_ token: String?) -> HTTPFields {
        guard let token else { return [:] }
        return [.authorization: "Bearer \(token)"]
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }

    var json: JSONValue? { try? JSONParser.parse(Array(text.utf8)) }
}
