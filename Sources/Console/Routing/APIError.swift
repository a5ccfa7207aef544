import Gatehouse
import HTTPServer
import Storage

/// An HTTP error with a safe message: rendered as JSON in one place, never with SQL, bound values,
/// stack traces or secrets.
public struct APIError: Error, Sendable {
    public let status: Int
    /// A stable machine-readable code (`not_found`, `invalid`, `forbidden_host`, ...).
    public let code: String
    public let message: String
    public var fix: String?
    /// Extra response headers (`x-auth-error` for the token lifecycle).
    public var headers: [(String, String)] = []

    public init(status: Int, code: String, message: String, fix: String? = nil, headers: [(String, String)] = []) {
        self.status = status
        self.code = code
        self.message = message
        self.fix = fix
        self.headers = headers
    }

    public static func notFound(_ message: String = "no such resource") -> APIError { APIError(status: 404, code: "not_found", message: message) }
    public static func badRequest(_ message: String, fix: String? = nil) -> APIError { APIError(status: 400, code: "invalid", message: message, fix: fix) }

    /// 401 with `x-auth-error`: the client refreshes once on `token_expired` and logs in again on the others.
    public static func unauthenticated(_ failure: TokenFailure) -> APIError {
        APIError(status: 401, code: failure.rawValue, message: TokenError(failure).message,
                 headers: [("x-auth-error", failure.rawValue), ("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
    }

    /// Maps any error thrown by the service layer to a safe API error.
    static func from(_ error: Error) -> APIError {
        switch error {
        case let error as APIError:
            return error
        case let error as TokenError:
            return .unauthenticated(error.failure)
        case LoginError.invalidCredentials:
            // No x-auth-error: this is a refused password, not a refused token.
            return APIError(status: 401, code: "invalid_credentials", message: LoginError.invalidCredentials.description)
        case LoginError.throttled(_, let retryAfter):
            let wait = retryAfter.value
            return APIError(status: 429, code: "throttled", message: "too many failed logins; try again in \(wait) s",
                            headers: [("Retry-After", String(wait))])
        case let error as GatehouseError:
            let status: Int
            switch error.code {
            case "not_found": status = 404
            case "invalid": status = 400
            case "conflict", "guideline_4_8": status = 409
            case "derived": status = 400
            case "takeover_risk": status = 422
            case "busy": status = 503
            default: status = 500
            }
            return APIError(status: status, code: error.code, message: error.message, fix: error.fix)
        case is DatabaseError:
            // SQLite's own text can quote schema or values: it stays in the server's log only.
            return APIError(status: 500, code: "store_error", message: "the store could not answer this request")
        default:
            return APIError(status: 500, code: "internal", message: "internal error")
        }
    }
}
