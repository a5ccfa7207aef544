import Gatehouse
import HTTPServer

/// The Sign in with Apple key ring and client secrets, over `AppleKeyRing`, `ClientSecretService`,
/// `ClientSecretInspector` and `AppleExport`:
///
/// - `GET /api/apple/keys` → {now, keys, active, warnings} (viewer)
/// - `POST /api/apple/keys` {pem, fileName?, keyId?, teamId?} → the staged key and warnings (admin)
/// - `POST /api/apple/keys/:id/activate` → self-test, then active; the previous key retires (admin)
/// - `POST /api/apple/keys/:id/revoke` → recorded as revoked, for good (admin)
/// - `POST /api/apple/keys/rollback` → the most recently retired key is active again (admin)
/// - `POST /api/apple/keys/:id/selftest` → {selfTest, passed} (admin: it opens the sealed key)
/// - `POST /api/apple/secret/mint` {clientId?, ttl?} → the minted secret, in this response only (admin)
/// - `POST /api/apple/secret/inspect` {token} → {inspection, acceptable} (viewer)
/// - `POST /api/apple/export` {password, format?} → the runtime's inputs, private key included,
///   after re-authentication (admin)
/// - `GET /api/apple/notifications?limit=N` → Apple's server-to-server notifications, newest first, as recorded
///   (no token is ever kept) (viewer; read-only: notifications arrive through their own listener or `ingest`)
///
/// The key material and the minted token are never stored or logged by the console; the request log
/// has only the method and path.
enum AppleRoutes {
    static func register(on router: inout Router) {
        router.add("GET", "/api/apple/keys", role: .viewer) { ctx in
            try JSONBody.response(try ctx.stores.withStore { store in
                let ring = AppleKeyRing(store: store)
                let keys = try ring.list()
                return AppleKeyListing(now: ctx.now, keys: keys, active: keys.first { $0.state == .active }, warnings: ring.warnings(keys))
            })
        }
        router.add("POST", "/api/apple/keys", role: .admin, factor: .stepUp) { ctx in
            let body = try ctx.body(AppleKeyImportRequest.self)
            let (keyID, teamID, actor) = (try body.keyID(), try body.teamID(), try ctx.actor)
            return try JSONBody.response(try UploadedKeyFile.with(pem: body.pem, fileName: body.fileName) { path in
                try ctx.stores.withStore { try AppleKeyRing(store: $0).importKey(file: path, keyID: keyID, teamID: teamID, actor: actor, now: ctx.now) }
            }, status: 201)
        }
        router.add("POST", "/api/apple/keys/rollback", role: .admin, factor: .stepUp, approval: .appleKeyActivate) { ctx in
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore { try AppleKeyRing(store: $0).rollback(actor: actor, now: ctx.now) })
        }
        router.add("POST", "/api/apple/keys/:id/activate", role: .admin, factor: .stepUp, approval: .appleKeyActivate) { ctx in
            let (id, actor) = (try keyID(ctx), try ctx.actor)
            return try JSONBody.response(try ctx.stores.withStore { try AppleKeyRing(store: $0).activate(id, actor: actor, now: ctx.now) })
        }
        router.add("POST", "/api/apple/keys/:id/revoke", role: .admin, factor: .stepUp, approval: .appleKeyRevoke) { ctx in
            /// `{"force": true}` is needed to revoke the active key (the page asks for it explicitly).
            struct RevokeRequest: Decodable { let force: Bool? }
            let (id, actor) = (try keyID(ctx), try ctx.actor)
            let force = ctx.request.body.isEmpty ? false : (try ctx.body(RevokeRequest.self).force ?? false)
            return try JSONBody.response(try ctx.stores.withStore { try AppleKeyRing(store: $0).revoke(id, force: force, actor: actor, now: ctx.now) })
        }
        router.add("POST", "/api/apple/keys/:id/selftest", role: .admin) { ctx in
            let id = try keyID(ctx)
            return try JSONBody.response(AppleSelfTestReport(try ctx.stores.withStore { try AppleKeyRing(store: $0).selfTest(id, now: ctx.now) }))
        }
        router.add("POST", "/api/apple/secret/mint", role: .admin, factor: .stepUp) { ctx in
            let body = try ctx.body(AppleSecretMintRequest.self)
            let actor = try ctx.actor
            return try JSONBody.response(try ctx.stores.withStore {
                try ClientSecretService(store: $0).mint(clientID: body.clientID, lifetime: body.ttl?.seconds ?? ClientSecretMinter.defaultLifetime,
                                                        actor: actor, now: ctx.now)
            })
        }
        router.add("POST", "/api/apple/secret/inspect", role: .viewer) { ctx in
            let body = try ctx.body(AppleSecretInspectRequest.self)
            return try JSONBody.response(AppleInspectionReport(try ctx.stores.withStore { try ClientSecretInspector(store: $0).inspect(body.token, now: ctx.now) }))
        }
        router.add("GET", "/api/apple/notifications", role: .viewer) { ctx in
            let limit = ctx.request.queryItems().last { $0.name == "limit" }.flatMap { Int($0.value) } ?? 200
            return try JSONBody.response(try ctx.stores.withStore { try AppleNotificationInbox.list(store: $0, limit: limit) })
        }
        router.add("POST", "/api/apple/export", role: .admin, factor: .stepUp) { ctx in
            let body = try ctx.body(AppleExportRequest.self)
            let format = try body.exportFormat()
            try ctx.reauthenticate(password: body.password)
            let actor = try ctx.actor
            let values = try ctx.stores.withStore { try AppleExport(store: $0).export(format: format, reveal: true, actor: actor, now: ctx.now) }
            return try JSONBody.response(try AppleExportResponse(values, format: format))
        }
    }

    /// The `:id` path parameter as a Key ID (400 naming what is wrong with it).
    static func keyID(_ ctx: RequestContext) throws -> KeyID {
        try KeyID(ctx.parameters["id"] ?? "")
    }
}
