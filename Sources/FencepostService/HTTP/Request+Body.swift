import FencepostCore
import HTTPTypes
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

    /// A query parameter that is an RFC 3339 time, in seconds; nil when absent, 400 naming it
    /// when malformed.
    func queryTime(_ name: String) throws -> Double? {
        guard let text = query(name) else { return nil }
        guard let time = Timestamp.parse(text) else {
            throw APIError.badRequest("\(name) is not an RFC 3339 time: \(text)")
        }
        return time
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

extension HTTPFields {
    /// The value of the first field named `name`. HTTPFields' own subscript joins the values
    /// of every field of that name into a new string, which a request's handling paid for each
    /// header it read.
    func firstValue(_ name: HTTPField.Name) -> String? {
        for field in self where field.name == name { return field.value }
        return nil
    }
}

extension HTTPField.Name {
    /// OwnTracks' user and device (HTTP mode), looked up on every post.
    static let ownTracksUser = HTTPField.Name("X-Limit-U")!
    static let ownTracksDevice = HTTPField.Name("X-Limit-D")!
}
