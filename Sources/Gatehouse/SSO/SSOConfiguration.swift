import JOSE
import Storage

/// The console's single sign-on settings in the store (`gatehouse_sso_config`, one row): set, read, disable. The client
/// secret is sealed with AES-256-GCM under the master key, bound to the issuer and client id; it is opened only to
/// exchange a sign-in's code, and never returned, printed or audited.
///
///     let sso = SSOConfiguration(store: store)
///     try sso.set(settings, secret: try SSOClientSecret(readFrom: "secret.txt", option: "--client-secret-file"), actor: actor, now: .now())
public struct SSOConfiguration {
    public let store: Store
    private let suppliedMasterKey: MasterKey?

    public init(store: Store, masterKey: MasterKey? = nil) {
        self.store = store
        self.suppliedMasterKey = masterKey
    }

    private static let columns = "issuer, client_id, redirect_uri, admin_group, support_group, viewer_group, groups_claim, allowed_domain, password_login, updated_at, updated_by"

    /// The settings, or nil when single sign-on is not set up.
    public func current() throws -> SSOSettings? {
        guard let row = try store.db.row("SELECT \(Self.columns) FROM gatehouse_sso_config WHERE id = 1") else { return nil }
        var settings = SSOSettings(issuer: try row.string("issuer"), clientID: try row.string("client_id"), redirectURI: row["redirect_uri"].string,
                                   adminGroup: row["admin_group"].string, supportGroup: row["support_group"].string,
                                   viewerGroup: row["viewer_group"].string, groupsClaim: try row.string("groups_claim"),
                                   allowedDomain: row["allowed_domain"].string, passwordLogin: row.bool("password_login"))
        settings.updatedAt = row["updated_at"].string.flatMap(Timestamp.init(iso8601:))
        settings.updatedBy = row["updated_by"].string
        return settings
    }

    /// Whether the console refuses passwords (`--password-login off`).
    public func passwordLoginDisabled() throws -> Bool {
        try store.db.scalar("SELECT password_login FROM gatehouse_sso_config WHERE id = 1").int64 == 0
    }

    /// Sets (or replaces) the provider; audited as `sso.set` with the settings, never the secret. Returns the settings
    /// as stored and whether there were some before.
    @discardableResult
    public func set(_ settings: SSOSettings, secret: SSOClientSecret, actor: Actor, now: Timestamp) throws -> (settings: SSOSettings, replaced: Bool) {
        let checked = try settings.validated()
        let master = try masterKey()
        let sealed = try AESGCM.seal(secret.bytes, key: master.bytes, associatedData: Self.associatedData(checked))
        let replaced: Bool = try store.db.write {
            let existed = try store.db.row("SELECT 1 FROM gatehouse_sso_config WHERE id = 1") != nil
            try store.db.execute("DELETE FROM gatehouse_sso_config WHERE id = 1")
            try store.db.execute("""
                INSERT INTO gatehouse_sso_config (id, issuer, client_id, sealed_client_secret, redirect_uri, admin_group, support_group, viewer_group,
                    groups_claim, allowed_domain, password_login, updated_at, updated_by) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [checked.issuer, checked.clientID, sealed, checked.redirectURI, checked.adminGroup, checked.supportGroup, checked.viewerGroup,
                      checked.groupsClaim, checked.allowedDomain, checked.passwordLogin ? 1 : 0, now.iso8601, actor.name])
            var details: [String: AuditValue] = ["issuer": .string(checked.issuer), "client_id": .string(checked.clientID),
                                                 "groups_claim": .string(checked.groupsClaim), "local_login": .string(checked.passwordLogin ? "on" : "off"),
                                                 "replaced": .bool(existed)]
            for (key, value) in [("admin_group", checked.adminGroup), ("support_group", checked.supportGroup), ("viewer_group", checked.viewerGroup),
                                 ("allowed_domain", checked.allowedDomain), ("redirect_uri", checked.redirectURI)] {
                if let value { details[key] = .string(value) }
            }
            try store.audit.append(store.db, actor: actor, action: "sso.set", subject: checked.issuer, details: details, at: now)
            return existed
        }
        OIDCProviderCache.shared.forget(issuer: checked.issuer)
        return (try current() ?? checked, replaced)
    }

    /// Removes the provider (password login is then the console's only way in again); audited as `sso.disable`.
    /// Returns whether there was one. SSO admins stay listed, and cannot sign in until single sign-on is set again.
    @discardableResult
    public func disable(actor: Actor, now: Timestamp) throws -> Bool {
        try store.db.write {
            guard let row = try store.db.row("SELECT issuer FROM gatehouse_sso_config WHERE id = 1") else { return false }
            try store.db.execute("DELETE FROM gatehouse_sso_config WHERE id = 1")
            try store.db.execute("DELETE FROM gatehouse_sso_logins")
            try store.audit.append(store.db, actor: actor, action: "sso.disable", subject: try row.string("issuer"), at: now)
            return true
        }
    }

    /// Opens the sealed client secret. Internal: only the code exchange sees it.
    func clientSecret(for settings: SSOSettings) throws -> SSOClientSecret {
        let master = try masterKey()
        guard let sealed = try store.db.row("SELECT sealed_client_secret FROM gatehouse_sso_config WHERE id = 1").map({ try $0.blob("sealed_client_secret") }) else {
            throw SSOError(.notConfigured)
        }
        do {
            return SSOClientSecret(bytes: try AESGCM.open(sealed, key: master.bytes, associatedData: Self.associatedData(settings)))
        } catch {
            throw GatehouseError("cannot open the sealed SSO client secret: the master key from \(master.source) is not the one it was sealed with, or the row was altered",
                                 fix: "use the master key the store was created with, or set the secret again with \(command: .ssoSet)", code: .unsealFailed)
        }
    }

    /// Binds a sealed secret to its provider and client.
    static func associatedData(_ settings: SSOSettings) -> [UInt8] {
        Array("gatehouse_sso_config:\(settings.issuer):\(settings.clientID)".utf8)
    }

    private func masterKey() throws -> MasterKey {
        if let suppliedMasterKey { return suppliedMasterKey }
        do {
            return try MasterKey.load(storePath: store.path)
        } catch let error as GatehouseError where error.code == .notFound {
            try MasterKey.checkCustody(store.db, storePath: store.path)
            throw error
        }
    }
}
