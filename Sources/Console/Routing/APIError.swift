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

    /// One of `T`'s names, nil for an absent or empty value, else 400 naming the field and the choices (never
    /// echoing the value). `field` is spelled as the request spells it: `"format"` in a body, `?by` in a query.
    public static func choice<T: CaseIterable & RawRepresentable>(_ text: String?, field: String, as type: T.Type) throws -> T?
    where T.RawValue == String {
        guard let text, !text.isEmpty else { return nil }
        do { return try NamedChoice.parse(text, as: T.self) } catch { throw APIError.badRequest(error.message(field: field, echo: false)) }
    }

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
        case LoginError.invalidSecondFactor:
            // No x-auth-error: the session (if any) stays good; only the code was refused.
            return APIError(status: 401, code: "invalid_code", message: LoginError.invalidSecondFactor.description)
        case LoginError.secondFactorRequired:
            return APIError(status: 401, code: "mfa_required", message: LoginError.secondFactorRequired.description)
        case let error as SSOError:
            return APIError(status: error.status, code: error.code, message: error.message)
        case let error as MFATokenError:
            return APIError(status: 401, code: error.rawValue, message: error.description)
        case LoginError.throttled(_, let retryAfter):
            let wait = retryAfter.value
            return APIError(status: 429, code: "throttled", message: "too many failed logins; try again in \(wait) s",
                            headers: [("Retry-After", String(wait))])
        case let error as GatehouseError:
            return from(error)
        default:
            // A store's failure, on any engine, in the words the CLI uses; anything else is a programming error.
            guard let translated = GatehouseError.operatorFacing(error) else {
                return APIError(status: 500, code: "internal", message: "internal error")
            }
            // The engine's own text can quote schema or values: when there are no better words, it stays in the server's log.
            guard translated.code != .storeError else {
                return APIError(status: 500, code: "store_error", message: "the store could not answer this request")
            }
            return from(translated)
        }
    }

    private static func from(_ error: GatehouseError) -> APIError {
        var headers: [(String, String)] = []
        if let seconds = retryAfter(error.code) { headers.append(("Retry-After", String(seconds))) }
        return APIError(status: status(of: error.code), code: error.code.rawValue, message: error.message, fix: error.fix, headers: headers)
    }

    /// Seconds a client should wait before trying again, for the failures that pass by themselves (not a change of
    /// unknown outcome, which must not be sent again blindly).
    static func retryAfter(_ code: GatehouseError.Code) -> Int? {
        switch code {
        case .busy: return 5
        case .unavailable: return 2
        default: return nil
        }
    }

    /// The HTTP status for each kind of domain failure.
    static func status(of code: GatehouseError.Code) -> Int {
        switch code {
        case .notFound: return 404
        case .invalid, .derived: return 400
        case .conflict, .guideline48: return 409
        case .takeoverRisk: return 422
        case .busy, .unavailable, .cannotOpen, .outcomeUnknown: return 503
        case .revealRequired, .permissionDenied, .selfApproval: return 403
        case .approvalClosed: return 409
        case .readOnly: return 409
        case .diskFull: return 507
        case .failed, .corrupt, .notADatabase, .storeError, .masterKeyMissing, .unsealFailed,
             .cryptoFailed, .listenFailed, .selfTestFailed:
            return 500
        }
    }
}
