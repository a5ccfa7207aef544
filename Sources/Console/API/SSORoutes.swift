import Foundation
import Gatehouse
import HTTPServer

/// Single sign-on through the company's OpenID provider (`gatehouse sso set`), all public:
///
/// - `GET /api/auth/sso` → {enabled, provider?, passwordLogin}: what the login page offers
/// - `GET /api/auth/sso/start` → 302 to the provider's authorization endpoint, with a short-lived HttpOnly, SameSite=Lax
///   cookie binding the sign-in's state to this browser
/// - `GET /api/auth/sso/callback?code&state` → 302 to `/#sso=TICKET` (a single-use ticket for 60 s), or a page that
///   says why the sign-in was refused (403, 400 for a state that is not this browser's, 502 when the provider failed)
/// - `POST /api/auth/sso/complete` {ticket} → the token bundle, or the second step for an admin with a factor, as
///   `POST /api/auth/login` answers; a ticket unknown, used or expired is 401 `sso_ticket_invalid`, `sso_ticket_used`,
///   `sso_ticket_expired`
enum SSORoutes {
    /// The cookie that binds a sign-in to the browser that started it.
    static let cookieName = "gatehouse_sso"
    static let cookiePath = "/api/auth/sso/"

    struct Offer: Encodable {
        let enabled: Bool
        /// The button's name for the provider: its host.
        let provider: String?
        let passwordLogin: Bool
    }

    struct CompleteRequest: Decodable {
        let ticket: String
    }

    static func register(on router: inout Router) {
        router.addPublic("GET", "/api/auth/sso") { ctx in
            let settings = try ctx.stores.withStore { try SSOConfiguration(store: $0).current() }
            return try JSONBody.response(Offer(enabled: settings != nil, provider: settings?.providerName, passwordLogin: settings?.passwordLogin ?? true))
        }
        router.addPublic("GET", "/api/auth/sso/start") { ctx in
            let fallback = ownOrigin(ctx) + SSOSettings.callbackPath
            let started: SSOLogin.Started
            do {
                started = try ctx.stores.withStore { try SSOLogin(store: $0).start(fallbackRedirectURI: fallback, now: ctx.now) }
            } catch let error as SSOError {
                return refusalPage(error)
            }
            var headers: HTTPHeaders = ["Location": started.location]
            let secure = fallback.hasPrefix("https://") ? "; Secure" : ""
            headers.add("Set-Cookie", "\(cookieName)=\(started.browserBinding); Path=\(cookiePath); Max-Age=\(SSOLogin.stateLifetime); HttpOnly; SameSite=Lax\(secure)")
            return HTTPResponse(status: 302, headers: headers)
        }
        router.addPublic("GET", "/api/auth/sso/callback") { ctx in
            var headers: HTTPHeaders = [:]
            headers.add("Set-Cookie", "\(cookieName)=; Path=\(cookiePath); Max-Age=0; HttpOnly; SameSite=Lax")
            do {
                let (ticket, _) = try ctx.stores.withStore {
                    try SSOLogin(store: $0).finish(code: ctx.query("code"), state: ctx.query("state"), providerError: ctx.query("error"),
                                                   browserBinding: cookie(cookieName, in: ctx.request), now: ctx.now)
                }
                headers["Location"] = "/#sso=\(ticket)"
                return HTTPResponse(status: 302, headers: headers)
            } catch let error as SSOError {
                var page = refusalPage(error)
                for (name, value) in headers { page.headers.add(name, value) }
                return page
            }
        }
        router.addPublic("POST", "/api/auth/sso/complete") { ctx in
            let body = try ctx.body(CompleteRequest.self)
            let outcome = try ctx.stores.withStore {
                try SSOLogin(store: $0).complete(ticket: body.ticket, tokens: ctx.tokens($0), client: ctx.request.remoteAddress, now: ctx.now)
            }
            switch outcome {
            case .signedIn(let bundle): return try JSONBody.response(bundle)
            case .secondFactor(let challenge): return try JSONBody.response(challenge)
            }
        }
    }

    /// The origin the browser opened the console at: the `--origin` when the request came through it, else
    /// `http://` and the `Host` the request guard accepted.
    static func ownOrigin(_ ctx: RequestContext) -> String {
        let host = ctx.request.header("host") ?? "127.0.0.1"
        if let origin = ctx.auth.relyingParty?.origin, origin.hasSuffix("://" + host) { return origin }
        return "http://" + host
    }

    /// The value of cookie `name` in the request's `Cookie` headers.
    static func cookie(_ name: String, in request: HTTPRequest) -> String? {
        for header in request.headers.values(for: "cookie") {
            for pair in header.split(separator: ";") {
                let trimmed = pair.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix(name + "=") { return String(trimmed.dropFirst(name.count + 1)) }
            }
        }
        return nil
    }

    /// A page that says why a sign-in was refused, with its code (also in `x-sso-refusal`), and a way back.
    static func refusalPage(_ error: SSOError) -> HTTPResponse {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Sign-in refused · Gatehouse</title><link rel="stylesheet" href="/console.css"></head>
            <body class="sso-refusal"><main class="login-card" role="main">
            <h1>Sign-in refused</h1>
            <p id="sso-refusal-message">\(escape(error.message.prefix(1).uppercased() + error.message.dropFirst()))</p>
            <p class="muted">Reason: <code id="sso-refusal-code">\(escape(error.code))</code></p>
            <p><a href="/">Back to the console's sign-in</a></p>
            </main></body></html>
            """
        return HTTPResponse(status: error.status, headers: ["Content-Type": "text/html; charset=utf-8", "x-sso-refusal": error.code], body: Array(html.utf8))
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
    }
}
