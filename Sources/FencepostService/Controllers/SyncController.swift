import FencepostCore
import FencepostStore
import Foundation
import Hummingbird
import NIOCore
import NIOPosix

/// The server side of sync: `POST /v1/sync/mutations` applies a batch once per idempotency key
/// (one transaction; an answer per mutation), `GET /v1/sync/changes` reads the change feed.
/// Admin tokens may sync everything; a device token only its own device's events and visits
/// (other mutations are rejected one by one, with the reason); read tokens may only read. A
/// group token may push nothing and reads only its devices' events and visits (no regions:
/// they may be other tenants').
struct SyncController {
    let auth: Authenticator
    let store: Store
    let signal: ChangeSignal
    let durability: StoreDurability
    let maxBodyBytes: Int
    static let maxMutations = 10_000
    static let maxPage = 5_000

    func addRoutes(to router: Router<FencepostRequestContext>) {
        let routes = router.authenticated(by: auth)
        routes.post("/v1/sync/mutations", use: mutations)
        routes.get("/v1/sync/changes", use: changes)
    }

    @Sendable func mutations(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let permissions: SyncPermissions
        switch caller.scope {
        case .admin: permissions = SyncPermissions(device: nil, regions: true)
        case .device(let own): permissions = SyncPermissions(device: own, regions: false)
        case .read: throw APIError.forbidden("a read token cannot push mutations")
        case .group(let group, _): throw APIError.forbidden("a token for group \(group) cannot push mutations")
        }
        let body = try await request.collectBody(limit: maxBodyBytes)
        let mutations: [SyncMutation]
        do {
            mutations = try SyncWire.parseMutations(try JSONParser.parse(Array(buffer: body)))
        } catch let error as JSONSyntaxError {
            throw APIError(.badRequest, "bad_json", "the body is not JSON: \(error)")
        } catch {
            throw APIError(.unprocessableContent, "invalid_mutations", "\(error)")
        }
        guard mutations.count <= Self.maxMutations else {
            throw APIError(.contentTooLarge, "too_many_mutations", "at most \(Self.maxMutations) mutations per request")
        }
        let results = try await store.applyMutations(mutations, permissions: permissions)
        if results.contains(.applied) { signal.notify() }
        // The client forgets what is acknowledged: it must be on disk first.
        try await durability.commitsDurable()
        return .json(SyncWire.resultsBody(zip(mutations, results).map { ($0.key, $1) }))
    }

    @Sendable func changes(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let cursor: Int64 =
            try request.query("cursor").map { text in
                guard let seq = Int64(text), seq >= 0 else {
                    throw APIError.badRequest("cursor must be a number from next_cursor")
                }
                return seq
            } ?? 0
        let limit: Int =
            try request.query("limit").map { text in
                guard let limit = Int(text), (1...Self.maxPage).contains(limit) else {
                    throw APIError.badRequest("limit must be between 1 and \(Self.maxPage)")
                }
                return limit
            } ?? 500
        let entities = try request.query("entity").map { text in
            let entities = Set(text.split(separator: ",").map { SyncEntity(String($0)) })
            guard !entities.isEmpty, entities.isSubset(of: SyncEntity.known) else {
                throw APIError.badRequest("entity must list event, visit or region, comma-separated")
            }
            return entities
        }
        let page = try await store.syncChanges(
            after: cursor, entities: entities, device: caller.confinedDevice, group: caller.confinedGroup,
            limit: limit + 1)
        let changes = Array(page.prefix(limit))
        let next = changes.last?.seq ?? cursor
        return .json(SyncWire.changesBody(changes, nextCursor: next, hasMore: page.count > limit))
    }
}
