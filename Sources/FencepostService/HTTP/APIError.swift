import FencepostCore
import FencepostFormats
import FencepostStore
import Foundation
package import Hummingbird

/// Every failure the API reports: a status and `{"error":{"code","message"}}`.
///
/// Domain errors become these in one place (``APIError/init(_:)``), so handlers just throw.
package struct APIError: HTTPResponseError, Sendable {
    package var status: HTTPResponse.Status
    package var code: String
    package var message: String
    /// For a 405: the methods the path takes (the `Allow` header).
    package var allowed: [HTTPRequest.Method] = []

    package init(_ status: HTTPResponse.Status, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// A method the path does not take: 405 with `Allow`.
    static func methodNotAllowed(_ method: HTTPRequest.Method, allowed: [HTTPRequest.Method]) -> APIError {
        var error = APIError(
            .methodNotAllowed, "method_not_allowed",
            "\(method) is not allowed here; allowed: \(allowed.map(\.rawValue).joined(separator: ", "))")
        error.allowed = allowed
        return error
    }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = JSONValue.object([
            "error": .object(["code": .string(code), "message": .string(message)])
        ]).canonicalText()
        var headers: HTTPFields = [.contentType: "application/json"]
        if status == .unauthorized { headers[.wwwAuthenticate] = #"Bearer realm="fencepost""# }
        if status == .serviceUnavailable { headers[.retryAfter] = "1" }
        if !allowed.isEmpty { headers[.allow] = allowed.map(\.rawValue).joined(separator: ", ") }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: body + "\n")))
    }

    static func badRequest(_ message: String) -> APIError { APIError(.badRequest, "bad_request", message) }
    static func notFound(_ message: String) -> APIError { APIError(.notFound, "not_found", message) }
    static let unauthorized = APIError(.unauthorized, "unauthorized", "a valid bearer token is required")
    static func forbidden(_ message: String) -> APIError { APIError(.forbidden, "forbidden", message) }
    /// A refused location payload: 400 for its shape, 422 for a fix, a transition or the
    /// device, 413 for too many fixes.
    init(_ error: LocationPayloadError) {
        switch error {
        case .malformed: self.init(.badRequest, "bad_request", error.description)
        case .invalidFix: self.init(.unprocessableContent, "invalid_fix", error.description)
        case .invalidDevice: self.init(.unprocessableContent, "invalid_device", error.description)
        case .tooManyFixes: self.init(.contentTooLarge, "too_many_fixes", error.description)
        case .invalidTransition: self.init(.unprocessableContent, "invalid_transition", error.description)
        }
    }

    /// A store that cannot take writes now: 503 (with `Retry-After`). A full disk or a lock
    /// says why; a database server that is away only that it is (its words may name hosts).
    init(_ error: StoreUnavailable) {
        switch error.cause {
        case .diskFull, .locked: self.init(.serviceUnavailable, error.code, error.description)
        case .serverAway: self.init(.serviceUnavailable, error.code, "the store is unavailable; retry")
        }
    }

    /// A region edit that would reach outside a group tenant's devices, or take over a region
    /// it does not manage: 403, nothing written.
    init(_ error: GroupRegionRefusal) {
        self.init(.forbidden, "outside_group", error.description)
    }

    /// A reported transition for a region that is unknown, disabled or not the device's: 422
    /// naming it, nothing written.
    init(_ error: TransitionRefusal) {
        switch error {
        case .unknownRegion: self.init(.unprocessableContent, "unknown_region", error.description)
        case .notInAudience: self.init(.unprocessableContent, "region_not_for_device", error.description)
        case .disabledRegion: self.init(.unprocessableContent, "region_disabled", error.description)
        }
    }

    static func tooLarge(limit: Int) -> APIError {
        APIError(.contentTooLarge, "body_too_large", "the request body is over the limit of \(limit) bytes")
    }
}
