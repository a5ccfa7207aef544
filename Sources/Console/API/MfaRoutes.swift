import Gatehouse
import HTTPServer

/// The signed-in admin's own second factors, over `SecondFactors` (any role manages their own):
///
/// - `GET /api/auth/mfa` → {required, factors, methods, recoveryCodesLeft} (open during enrolment)
/// - `POST /api/auth/mfa/totp` {password, name?} → {id, secret, otpauthUri}: a pending TOTP factor; the secret is in
///   this response only (open during enrolment; step-up when the admin has a factor already)
/// - `POST /api/auth/mfa/totp/confirm` {code} → {recoveryCodes}: 10 single-use codes, shown once; the login's factor
///   check is now (open during enrolment)
/// - `POST /api/auth/mfa/factors/:id/rename` {name} → the factor
/// - `POST /api/auth/mfa/factors/:id/remove` → {removed} (step-up)
/// - `POST /api/auth/mfa/recovery-codes` → {recoveryCodes}: a new set; the old one stops working (step-up)
///
/// Every change is audited by `SecondFactors`.
enum MfaRoutes {
    struct EnrolRequest: Decodable {
        let password: String
        let name: String?
    }

    struct ConfirmRequest: Decodable {
        let code: String
    }

    struct RenameRequest: Decodable {
        let name: String
    }

    struct Overview: Encodable {
        let required: Bool
        let factors: [AdminFactor]
        let methods: [SecondFactorMethod]
        let recoveryCodesLeft: Int
    }

    struct RecoveryCodes: Encodable {
        let recoveryCodes: [String]
    }

    struct Removed: Encodable {
        let removed: String
    }

    static func register(on router: inout Router) {
        router.add("GET", "/api/auth/mfa", role: .viewer, factor: .enrolment) { ctx in
            let admin = try ctx.admin
            return try JSONBody.response(try ctx.stores.withStore { store in
                let factors = ctx.tokens(store).factors
                return Overview(required: try factors.isRequired(), factors: try factors.factors(of: admin), methods: try factors.methods(of: admin),
                                recoveryCodesLeft: try factors.recoveryCodesLeft(admin))
            })
        }
        router.add("POST", "/api/auth/mfa/totp", role: .viewer, factor: [.enrolment, .stepUp]) { ctx in
            let body = try ctx.body(EnrolRequest.self)
            try ctx.reauthenticate(password: body.password)
            let (admin, actor) = (try ctx.admin, try ctx.actor)
            return try JSONBody.response(try ctx.stores.withStore { try ctx.tokens($0).factors.enrolTOTP(admin, name: body.name, actor: actor, now: ctx.now) })
        }
        router.add("POST", "/api/auth/mfa/totp/confirm", role: .viewer, factor: .enrolment) { ctx in
            let body = try ctx.body(ConfirmRequest.self)
            let session = try ctx.requireSession()
            let codes = try ctx.stores.withStore { store in
                let tokens = ctx.tokens(store)
                let codes = try tokens.factors.confirmTOTP(session.admin, code: body.code, actor: session.actor, now: ctx.now)
                try tokens.markFactorChecked(session, now: ctx.now)
                return codes
            }
            return try JSONBody.response(RecoveryCodes(recoveryCodes: codes))
        }
        router.add("POST", "/api/auth/mfa/factors/:id/rename", role: .viewer) { ctx in
            let body = try ctx.body(RenameRequest.self)
            let (admin, actor, id) = (try ctx.admin, try ctx.actor, ctx.parameters["id"] ?? "")
            return try JSONBody.response(try ctx.stores.withStore { try ctx.tokens($0).factors.rename(admin, factor: id, to: body.name, actor: actor, now: ctx.now) })
        }
        router.add("POST", "/api/auth/mfa/factors/:id/remove", role: .viewer, factor: .stepUp) { ctx in
            let (admin, actor, id) = (try ctx.admin, try ctx.actor, ctx.parameters["id"] ?? "")
            try ctx.stores.withStore { try ctx.tokens($0).factors.remove(admin, factor: id, actor: actor, now: ctx.now) }
            return try JSONBody.response(Removed(removed: id))
        }
        router.add("POST", "/api/auth/mfa/recovery-codes", role: .viewer, factor: .stepUp) { ctx in
            let (admin, actor) = (try ctx.admin, try ctx.actor)
            return try JSONBody.response(RecoveryCodes(recoveryCodes: try ctx.stores.withStore {
                try ctx.tokens($0).factors.regenerateRecoveryCodes(admin, actor: actor, now: ctx.now)
            }))
        }
    }
}
