import FencepostStore
import Hummingbird

/// The service's request context: Hummingbird's, with the caller ``TokenAuthentication`` found
/// for the request (nil when no valid token came with it).
struct FencepostRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    var caller: Caller?
    /// The request's query parameters, when ``TokenAuthentication`` parsed them to look for a
    /// token there: a handler reads them here rather than parse the whole query a second time
    /// (``queryParameters(of:)``). Hummingbird's `Parameters` is the type of a parsed query too.
    var query: Parameters?

    init(source: Source) {
        coreContext = .init(source: source)
    }

    /// The query parameters of `request` (this context's), parsed once per request.
    func queryParameters(of request: Request) -> Parameters {
        query ?? request.uri.queryParameters
    }

    /// The caller, or 401.
    func requireCaller() throws -> Caller {
        guard let caller else { throw APIError.unauthorized }
        return caller
    }

    /// An admin caller: 401 without a valid token, 403 with a token of another scope.
    func requireAdmin() throws -> Caller {
        let caller = try requireCaller()
        guard case .admin = caller.scope else { throw APIError.forbidden("this needs an admin token") }
        return caller
    }

    /// Who may put or delete a single region: an admin token (nil: every region) or a group
    /// token that is not read-only (its group: the regions inside it); 403 for the others.
    func requireRegionEditor() throws -> String? {
        switch try requireCaller().scope {
        case .admin: return nil
        case .group(let group, readOnly: false): return group
        case .group(let group, readOnly: true):
            throw APIError.forbidden("a read-only token for group \(group) cannot change regions")
        case .read, .device: throw APIError.forbidden("this needs an admin token or a group token")
        }
    }

    /// Who may plan (`applying` false) or apply group `group`'s regions: an admin token, or a
    /// token for that group (read-only ones plan only); 403 for the others.
    func requireGroupRegions(_ group: String, applying: Bool) throws {
        switch try requireCaller().scope {
        case .admin: return
        case .group(let own, _) where own != group:
            throw APIError.forbidden("this token is for group \(own), not \(group)")
        case .group(_, readOnly: true) where applying:
            throw APIError.forbidden("a read-only token for group \(group) cannot apply regions")
        case .group: return
        case .read, .device: throw APIError.forbidden("this needs an admin token or a token for group \(group)")
        }
    }
}

/// Puts the request's caller in its context when a valid token came with it (see
/// ``Authenticator``); a request without one goes on without a caller, and the handlers that
/// need one answer 401 (``FencepostRequestContext/requireCaller()``). Handlers that need no
/// caller (the health check, the live page itself) are registered outside it.
struct TokenAuthentication: RouterMiddleware {
    let auth: Authenticator
    /// Also a `token` query parameter: only for clients that cannot set headers (OsmAnd).
    var allowQueryToken = false

    func handle(
        _ request: Request, context: FencepostRequestContext,
        next: (Request, FencepostRequestContext) async throws -> Response
    ) async throws -> Response {
        var context = context
        if allowQueryToken { context.query = request.uri.queryParameters }
        context.caller = try await auth.caller(presentedWith: request, query: context.query)
        return try await next(request, context)
    }
}

extension Router<FencepostRequestContext> {
    /// The routes added to the group have the request's caller in their context.
    func authenticated(by auth: Authenticator, allowQueryToken: Bool = false) -> RouterGroup<FencepostRequestContext> {
        group().add(middleware: TokenAuthentication(auth: auth, allowQueryToken: allowQueryToken))
    }
}
