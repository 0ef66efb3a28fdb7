import Hummingbird

/// Times every request into the latency histogram, labelled by the matched route.
///
/// Every label value comes from a small fixed set, whatever a client sends: the route as
/// registered (or `unmatched`), the method when it is a standard one (else `other`), the status.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics
    init(metrics: ServiceMetrics) {
        self.metrics = metrics
    }

    static func methodLabel(_ method: HTTPRequest.Method) -> String {
        switch method {
        case .get, .head, .post, .put, .delete, .patch, .options: return method.rawValue
        default: return "other"
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await next(request, context)
            metrics.recordRequest(
                route: context.endpointPath ?? "unmatched", method: Self.methodLabel(request.method),
                status: response.status.code,
                duration: clock.now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.recordRequest(
                route: context.endpointPath ?? "unmatched", method: Self.methodLabel(request.method), status: status,
                duration: clock.now - start)
            throw error
        }
    }
}
