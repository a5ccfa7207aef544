import Foundation
import HTTPServer

/// JSON responses and request bodies.
enum JSONBody {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A JSON response of an Encodable value.
    static func response<T: Encodable>(_ value: T, status: Int = 200) throws -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"], body: Array(try encoder.encode(value)))
    }

    /// The JSON error body for an API error.
    static func error(_ error: APIError) -> HTTPResponse {
        struct Body: Encodable { let error: Inner }
        struct Inner: Encodable { let code: String; let message: String; let fix: String? }
        var response = (try? response(Body(error: Inner(code: error.code, message: error.message, fix: error.fix)), status: error.status))
            ?? HTTPResponse.text(error.status, error.message)
        for (name, value) in error.headers { response.headers.add(name, value) }
        return response
    }

    /// Decodes a request body, requiring `Content-Type: application/json`.
    static func decode<T: Decodable>(_ type: T.Type, from request: HTTPRequest) throws -> T {
        guard let contentType = request.header("content-type")?.lowercased(), contentType.hasPrefix("application/json") else {
            throw APIError(status: 415, code: "unsupported_media_type", message: "request bodies must be JSON", fix: "send Content-Type: application/json")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(request.body))
        } catch {
            throw APIError.badRequest("the request body is not the JSON this endpoint expects")
        }
    }
}
