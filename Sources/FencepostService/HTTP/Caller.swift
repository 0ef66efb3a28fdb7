import FencepostCore
import FencepostStore

/// Who made a request: the token's name and scope.
struct Caller: Sendable {
    var tokenName: String
    var scope: TokenScope

    /// Posting fixes of `devices` (one request's, all of them or none): admin; a device token
    /// for its own device; a group token that is not read-only for the group's devices, by the
    /// roster as it is now. Else 403, naming the first device refused.
    func requirePost(devices: some Collection<String>, store: Store) async throws {
        switch scope {
        case .admin: return
        case .device(let own):
            if let other = devices.sorted().first(where: { $0 != own }) {
                throw APIError.forbidden("this token is for device \(own), not \(other)")
            }
        case .read: throw APIError.forbidden("a read token cannot post locations")
        case .group(let group, readOnly: true):
            throw APIError.forbidden("a read-only token for group \(group) cannot post locations")
        case .group(let group, readOnly: false):
            if let stranger = try await store.devicesOutside(group: group, among: devices).first {
                throw APIError.forbidden("this token is for group \(group); device \(stranger) is not in it")
            }
        }
    }

    /// The device a device token is confined to; nil for the other scopes.
    var confinedDevice: String? {
        if case .device(let own) = scope { return own }
        return nil
    }

    /// The roster group a group token is confined to; nil for the other scopes.
    var confinedGroup: String? {
        if case .group(let group, _) = scope { return group }
        return nil
    }

    /// The rows a read may return: those of `asked` (a request's `device` parameter) when
    /// given, within what the token reads: a device token its own device only, a group token
    /// the group's devices only. A request that names a device the token does not read is 403,
    /// not an empty answer.
    func readScope(asking asked: String?, store: Store) async throws -> ReadScope {
        switch scope {
        case .admin, .read: return ReadScope(device: asked, group: nil)
        case .device(let own):
            if let asked, asked != own { throw APIError.forbidden("this token reads device \(own) only") }
            return ReadScope(device: own, group: nil)
        case .group(let group, _):
            if let asked, try await !store.devicesOutside(group: group, among: [asked]).isEmpty {
                throw APIError.forbidden("this token reads group \(group)'s devices only; \(asked) is not in it")
            }
            return ReadScope(device: asked, group: group)
        }
    }

    /// What the token may know of the regions: all of them, or a group tenant's view.
    func tenancy(store: Store) async throws -> GroupTenancy? {
        guard let group = confinedGroup else { return nil }
        return try await store.groupTenancy(group)
    }
}

/// Whose rows a read returns: one device's, the devices of a roster group (its members when the
/// read runs), both (a member of the group), or, when both are nil, everyone's.
struct ReadScope: Sendable, Hashable {
    var device: String?
    var group: String?
}
