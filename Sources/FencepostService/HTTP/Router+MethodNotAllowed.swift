import HTTPTypes
import Hummingbird

extension Router where Context == FencepostRequestContext {
    /// For every path a route serves, answers the methods no route serves there with 405 and
    /// `Allow` (`DELETE /v1/events` is not "not found": the path exists). Called once every
    /// controller has added its routes.
    func answerOtherMethodsNotAllowed() {
        let methods: [HTTPRequest.Method] = [.get, .post, .put, .delete, .patch]
        var byPath: [String: (path: RouterPath, methods: Set<HTTPRequest.Method>)] = [:]
        for route in routes {
            byPath["\(route.path)", default: (route.path, [])].methods.insert(route.method)
        }
        for (path, taken) in byPath.values {
            let allowed =
                methods.filter(taken.contains)
                + taken.filter { !methods.contains($0) }.sorted {
                    $0.rawValue < $1.rawValue
                }
            for method in methods where !taken.contains(method) {
                on(path, method: method) { _, _ -> Response in
                    throw APIError.methodNotAllowed(method, allowed: allowed)
                }
            }
        }
    }
}
