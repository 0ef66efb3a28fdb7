import Hummingbird

/// Times every request into the latency histogram, labelled by the matched route.
struct RequestMetricsMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServiceMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let clock = ContinuousClock()
        let start = clock.now
        do {
            let response = try await next(request, context)
            metrics.recordRequest(
                route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: response.status.code,
                duration: clock.now - start)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            metrics.recordRequest(
                route: context.endpointPath ?? "unmatched", method: request.method.rawValue, status: status, duration: clock.now - start)
            throw error
        }
    }
}
