import Hummingbird
import NIOCore

extension Request {
    /// The whole body, refused with 413 past `limit` bytes.
    func collectBody(limit: Int) async throws -> ByteBuffer {
        do {
            return try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError.tooLarge(limit: limit)
        }
    }

    /// A query parameter (percent-decoded by Hummingbird); nil when absent or empty.
    func query(_ name: String) -> String? {
        guard let value = uri.queryParameters[Substring(name)], !value.isEmpty else { return nil }
        return String(value)
    }
}

extension Response {
    /// A JSON response from canonical JSON text.
    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: text + "\n")))
    }
}
