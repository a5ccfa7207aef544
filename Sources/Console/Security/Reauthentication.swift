import Gatehouse

/// The body a route that reveals or exports a secret asks for: the signed-in admin's password again.
public struct ReauthenticationBody: Decodable, Sendable {
    public let password: String
}

extension RequestContext {
    /// Checks the signed-in admin's password again before revealing or exporting a secret (an Apple
    /// key, a minted client secret). A wrong password answers 403 `reauthentication_failed` and counts
    /// as a failed login (throttled, audited); the session itself stays valid. An SSO admin, who has no password here,
    /// passes with a sign-in through the provider within the step-up window, else 403 `reauthentication_needed`.
    ///
    ///     router.add("POST", "/api/apple/keys/:id/export", role: .admin) { ctx in
    ///         try ctx.reauthenticate(password: try ctx.body(ExportRequest.self).password)
    ///         ...
    ///     }
    public func reauthenticate(password: String) throws {
        let session = try requireSession()
        do {
            try stores.withStore {
                try tokens($0).reauthenticate(session, password: AdminPassword(presented: password), client: request.remoteAddress, now: now,
                                              freshSignIn: auth.stepUpWindow)
            }
        } catch LoginError.invalidCredentials {
            throw APIError(status: 403, code: "reauthentication_failed", message: "the password is wrong; this action needs your password again")
        }
    }
}
