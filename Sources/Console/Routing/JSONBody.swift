import Foundation
import Gatehouse
import HTTPServer

/// JSON responses and request bodies.
enum JSONBody {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    /// A JSON response of an Encodable value, the domain's references in its text put into the console's words.
    static func response<T: Encodable>(_ value: T, status: Int = 200) throws -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json; charset=utf-8"],
                     body: ConsoleSpelling.renderJSON(Array(try encoder.encode(value))))
    }

    /// The JSON error body for an API error.
    static func error(_ error: APIError) -> HTTPResponse {
        struct Body: Encodable { let error: Inner }
        struct Inner: Encodable { let code: String; let message: String; let fix: String? }
        var response = (try? response(Body(error: Inner(code: error.code, message: error.message, fix: error.fix)), status: error.status))
            ?? HTTPResponse.text(error.status, ConsoleSpelling.render(error.message))
        for (name, value) in error.headers { response.headers.add(name, value) }
        return response
    }

    /// Refuses a request that carries a body other than JSON (415); a bodiless request passes.
    static func requireJSONIfPresent(_ request: HTTPRequest) throws {
        if !request.body.isEmpty { try requireJSON(request) }
    }

    static func requireJSON(_ request: HTTPRequest) throws {
        let contentType = request.header("content-type")?.lowercased() ?? ""
        let mediaType = contentType.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard mediaType == "application/json" else {
            throw APIError(status: 415, code: "unsupported_media_type", message: "request bodies must be JSON", fix: "send Content-Type: application/json")
        }
    }

    /// Decodes a request body, requiring `Content-Type: application/json`.
    static func decode<T: Decodable>(_ type: T.Type, from request: HTTPRequest) throws -> T {
        try requireJSON(request)
        do {
            return try JSONDecoder().decode(T.self, from: Data(request.body))
        } catch let error as GatehouseError {
            throw error
        } catch let error as DecodingError {
            // Names the field, never echoes a value (it may be a password).
            switch error {
            case .keyNotFound(let key, let context):
                throw APIError.badRequest("the request body lacks \"\(path(context.codingPath + [key]))\"")
            case .typeMismatch(_, let context), .valueNotFound(_, let context):
                throw APIError.badRequest("\"\(path(context.codingPath))\" in the request body has the wrong type")
            case .dataCorrupted(let context) where !context.codingPath.isEmpty:
                throw APIError.badRequest("\"\(path(context.codingPath))\" in the request body is not valid")
            default:
                throw APIError.badRequest("the request body is not valid JSON")
            }
        } catch {
            throw APIError.badRequest("the request body is not the JSON this endpoint expects")
        }
    }

    private static func path(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".").prefix(100).description
    }
}
