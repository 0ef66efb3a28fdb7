import FencepostCore
import FencepostStore
import Foundation
import Hummingbird
import NIOCore
import NIOFoundationEssentialsCompat

/// Regions over HTTP: the same reconciler and validation as `fencepost regions plan|apply`.
/// Single-region PUT and DELETE are a plan of the monitored set with that one region changed.
///
/// A group token reads the regions that apply to the group's devices (everyone's included) and
/// puts and deletes only regions whose selectors stay inside the group (``GroupTenancy``);
/// anything else is 403 and writes nothing. Whole-set plan and apply are for admin tokens (a
/// group's are ``GroupRegionsController``'s).
struct RegionsController {
    let auth: Authenticator
    let store: Store
    let durability: StoreDurability
    let maxBodyBytes: Int

    func addRoutes(to router: Router<FencepostRequestContext>) {
        let routes = router.authenticated(by: auth)
        routes.get("/v1/regions", use: list)
        routes.get("/v1/regions/:id", use: get)
        routes.put("/v1/regions/:id", use: put)
        routes.delete("/v1/regions/:id", use: delete)
        routes.post("/v1/regions/plan", use: plan)
        routes.post("/v1/regions/apply", use: apply)
    }

    @Sendable func list(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let tenancy = try await context.requireCaller().tenancy(store: store)
        let features = try await store.monitoredRegions().filter { tenancy?.sees($0.region) ?? true }.map {
            Self.feature($0)
        }
        return .json(
            JSONValue.object(["type": .string("FeatureCollection"), "features": .array(features)]).canonicalText())
    }

    @Sendable func get(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let tenancy = try await context.requireCaller().tenancy(store: store)
        let id = try context.parameters.require("id")
        guard let region = try await store.monitoredRegions().first(where: { $0.region.id == id }) else {
            throw APIError.notFound("no region \(id)")
        }
        if let tenancy, !tenancy.sees(region.region) {
            throw APIError.forbidden("region \(id) applies to no device of group \(tenancy.group)")
        }
        return .json(Self.feature(region).canonicalText())
    }

    /// Adds or replaces one region; the body is a GeoJSON Feature whose id, if it has one,
    /// matches the path's (without one, it takes the path's).
    @Sendable func put(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let group = try context.requireRegionEditor()
        let id = try context.parameters.require("id")
        let body = try await request.collectBody(limit: maxBodyBytes)
        let region: Region
        do {
            region = try RegionConfigParser().region(
                fromFeature: Data(buffer: body), source: "request body", defaultID: id)
        } catch {
            throw Self.refused(error)
        }
        guard region.id == id else {
            throw APIError.badRequest("the feature's id \(region.id) does not match the path's \(id)")
        }
        let plan =
            if let group {
                try await store.applyGroupRegions(group) { current in current.managed.filter { $0.id != id } + [region]
                }
            } else {
                try await store.applyRegions { monitored in try await monitored().filter { $0.id != id } + [region] }
            }
        try await durability.commitsDurable()
        return .json(plan.json.canonicalText(), status: plan.addCount > 0 ? .created : .ok)
    }

    @Sendable func delete(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let group = try context.requireRegionEditor()
        let id = try context.parameters.require("id")
        let plan =
            if let group {
                try await store.applyGroupRegions(group) { current in
                    if current.otherIDs.contains(id) { throw GroupRegionRefusal.notManaged(region: id, group: group) }
                    guard current.managed.contains(where: { $0.id == id }) else {
                        throw APIError.notFound("no region \(id)")
                    }
                    return current.managed.filter { $0.id != id }
                }
            } else {
                try await store.applyRegions { monitored in
                    let regions = try await monitored()
                    guard regions.contains(where: { $0.id == id }) else { throw APIError.notFound("no region \(id)") }
                    return regions.filter { $0.id != id }
                }
            }
        try await durability.commitsDurable()
        return .json(plan.json.canonicalText())
    }

    /// The plan for a FeatureCollection body as the whole desired set; changes nothing.
    @Sendable func plan(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        _ = try context.requireAdmin()
        let desired = try await desiredSet(request)
        return await .json(try store.planRegions(desired).json.canonicalText())
    }

    /// Makes the monitored set equal the FeatureCollection body, in one transaction.
    @Sendable func apply(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        _ = try context.requireAdmin()
        let desired = try await desiredSet(request)
        let plan = try await store.applyRegions(desired)
        try await durability.commitsDurable()
        return .json(plan.json.canonicalText())
    }

    private func desiredSet(_ request: Request) async throws -> [Region] {
        try await Self.desiredSet(request, maxBodyBytes: maxBodyBytes)
    }

    /// The FeatureCollection body as a checked region set (422 with every problem).
    static func desiredSet(_ request: Request, maxBodyBytes: Int) async throws -> [Region] {
        let body = try await request.collectBody(limit: maxBodyBytes)
        do {
            return try RegionConfig.merge([RegionConfigParser().parse(Data(buffer: body), file: "request body")])
        } catch {
            throw Self.refused(error)
        }
    }

    /// A refused config as a 422 listing every problem, as the CLI prints them.
    static func refused(_ error: RegionConfigError) -> RegionsRefused {
        RegionsRefused(issues: error.issues)
    }

    static func feature(_ monitored: MonitoredRegion) -> JSONValue {
        guard case .object(var feature) = monitored.region.feature else { return monitored.region.feature }
        var properties = feature["properties"]?.objectValue ?? [:]
        properties["version"] = .number(Double(monitored.version))
        properties["updated_at"] = .string(monitored.updatedAt)
        feature["properties"] = .object(properties)
        return .object(feature)
    }
}

/// A region config the reconciler refused: 422 with every issue.
struct RegionsRefused: HTTPResponseError {
    var issues: [RegionConfigIssue]
    var status: HTTPResponse.Status { .unprocessableContent }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        let count = issues.count
        let body = JSONValue.object([
            "error": .object([
                "code": .string("invalid_regions"),
                "message": .string(
                    "\(count) problem\(count == 1 ? "" : "s") in the region config; nothing was applied"),
                "issues": .array(issues.prefix(100).map(\.json)),
            ])
        ])
        return .json(body.canonicalText(), status: status)
    }
}
