import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
import Hummingbird
import NIOCore

/// The roster over HTTP: the devices named and grouped, as `fencepost devices list|apply` keep
/// them. Reading takes any token that reads (a group token lists the group's members only);
/// changing one device, an admin token, and a device
/// leaving a group has its visits in regions that no longer apply to it closed in the same
/// transaction.
struct DevicesController {
    let auth: Authenticator
    let store: Store
    let durability: StoreDurability
    let maxBodyBytes: Int

    func addRoutes(to router: Router<FencepostRequestContext>) {
        let routes = router.authenticated(by: auth)
        routes.get("/v1/devices", use: list)
        routes.put("/v1/devices/:device", use: put)
        routes.delete("/v1/devices/:device", use: delete)
    }

    @Sendable func list(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        let caller = try context.requireCaller()
        let entries = try await store.roster().sorted.filter { entry in
            caller.confinedGroup.map(entry.groups.contains) ?? true
        }
        return .json(JSONValue.array(entries.map(\.json)).canonicalText())
    }

    /// Adds or replaces one device: `{"name": ..., "groups": [...]}` (both optional).
    @Sendable func put(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        _ = try context.requireAdmin()
        let id = try context.parameters.require("device")
        let body = try await request.collectBody(limit: maxBodyBytes)
        let entry = try Self.entry(id, Array(buffer: body))
        var added = false
        try await store.editRoster { roster in
            var roster = roster
            added = roster.entries[id] == nil
            roster.entries[id] = entry
            return roster
        }
        try await durability.commitsDurable()
        return .json(entry.json.canonicalText(), status: added ? .created : .ok)
    }

    /// Removes the device from the roster; with `?erase=true`, erases every row naming it
    /// (``Store/eraseDevice(_:at:)``) and answers what was removed.
    @Sendable func delete(_ request: Request, context: FencepostRequestContext) async throws -> Response {
        _ = try context.requireAdmin()
        let id = try context.parameters.require("device")
        switch request.uri.queryParameters["erase"].map(String.init) {
        case "true":
            let erasure = try await store.eraseDevice(id)
            try await durability.commitsDurable()
            return .json(erasure.json.canonicalText())
        case nil, "false":
            break
        case let other?:
            throw APIError.badRequest("erase must be true or false, not \(other)")
        }
        try await store.editRoster { roster in
            guard roster.entries[id] != nil else { throw APIError.notFound("no device \(id) on the roster") }
            var roster = roster
            roster.entries[id] = nil
            return roster
        }
        try await durability.commitsDurable()
        return Response(status: .noContent)
    }

    /// The body read as a roster file's entry for `id`: the same checks, 400 or 422 with the reason.
    static func entry(_ id: String, _ body: [UInt8]) throws -> DeviceRoster.Entry {
        guard case .object(var members) = try? JSONParser.parse(body) else {
            throw APIError.badRequest("the body must be a JSON object: {\"name\": ..., \"groups\": [...]}")
        }
        if let device = members["device"], device != .string(id) {
            throw APIError.badRequest("the body's device does not match the path's \(id)")
        }
        members["device"] = .string(id)
        let roster: DeviceRoster
        do {
            roster = try RosterFile.json(Array(JSONValue.array([.object(members)]).canonicalText().utf8), file: "body")
        } catch {
            throw APIError(
                .unprocessableContent, "invalid_device", error.reason.replacingOccurrences(of: "device #1: ", with: ""))
        }
        // The one entry, under the path's id (the file's checks kept the id as given).
        guard let entry = roster.entries[id] else { throw APIError.badRequest("the body names no device \(id)") }
        return entry
    }
}
