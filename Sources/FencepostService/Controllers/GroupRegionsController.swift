import FencepostCore
import FencepostStore
import Hummingbird

/// A group's own regions plan and apply: `POST /v1/groups/{name}/regions/plan|apply` with a
/// FeatureCollection as the group's whole desired set. The current set is the regions whose
/// selectors stay inside the group (``GroupTenancy``); every other region (another group's,
/// everyone's) is left as it is, and a feature that reaches outside the group, or takes the id
/// of a region the group does not manage, refuses the whole request (403). The same reconciler
/// as `/v1/regions/plan|apply`; the plan counts only the group's regions.
///
/// Admin tokens may call it for any group; group tokens for their own (read-only ones plan only).
struct GroupRegionsController {
    let auth: Authenticator
    let store: Store
    let durability: StoreDurability
    let maxBodyBytes: Int

    func addRoutes(to router: Router<FencepostRequestContext>) {
        let routes = router.authenticated(by: auth)
        routes.post("/v1/groups/:group/regions/plan", use: plan)
        routes.post("/v1/groups/:group/regions/apply", use: apply)
    }

    /// What applying the body would change among the group's regions; changes nothing.
    @Sendable func plan(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let group = try context.parameters.require("group")
        try context.requireGroupRegions(group, applying: false)
        let desired = try await RegionsController.desiredSet(request, maxBodyBytes: maxBodyBytes)
        return .json(try await store.planGroupRegions(group) { _ in desired }.json.canonicalText())
    }

    /// Makes the group's regions equal the body, in one transaction.
    @Sendable func apply(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let group = try context.parameters.require("group")
        try context.requireGroupRegions(group, applying: true)
        let desired = try await RegionsController.desiredSet(request, maxBodyBytes: maxBodyBytes)
        let plan = try await store.applyGroupRegions(group) { _ in desired }
        try await durability.commitsDurable()
        return .json(plan.json.canonicalText())
    }
}
