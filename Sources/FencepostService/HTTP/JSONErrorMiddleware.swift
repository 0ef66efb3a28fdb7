import FencepostFormats
import FencepostIngest
import FencepostStore
import Foundation
import Hummingbird
import Logging

/// Every error leaves as a JSON error body: Hummingbird's own (unknown route, missing
/// parameter) get a code from their status; a store that cannot write (a full disk, a lock held
/// too long, a database that is away) answers 503; anything unexpected (a store failure) is
/// logged with an id and answered 500 with that id, never the error's text.
struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            throw error
        } catch let error as RegionsRefused {
            throw error
        } catch let error as LocationPayloadError {
            throw APIError(error)
        } catch let error as GroupRegionRefusal {
            throw APIError(error)
        } catch let error as TransitionRefusal {
            throw APIError(error)
        } catch let error as StoreUnavailable {
            // Nothing was written; the client can retry once space is freed, the lock released
            // or the database back.
            context.logger.warning("store unavailable", metadata: ["path": "\(request.uri.path)", "error": "\(error)"])
            throw APIError(error)
        } catch is LiveIngestor.ShuttingDown {
            throw APIError(.serviceUnavailable, "shutting_down", "the service is shutting down; retry")
        } catch let error as HTTPError {
            let code = error.status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "_")
            throw APIError(error.status, code, error.body ?? error.status.reasonPhrase)
        } catch {
            // The error's own text (SQL, a table's or a file's name) goes to the log only; the
            // answer carries an id that finds it there.
            let id = Self.errorID()
            context.logger.error(
                "request failed", metadata: ["path": "\(request.uri.path)", "error": "\(error)", "error_id": "\(id)"])
            throw APIError(.internalServerError, "internal", "the request failed (error id \(id) in the service's log)")
        }
    }

    /// Twelve hex digits: unique enough to find one failure in a log.
    static func errorID() -> String {
        String(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12)).lowercased()
    }
}
