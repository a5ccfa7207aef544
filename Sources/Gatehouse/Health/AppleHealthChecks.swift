/// Apple's signing inputs: the master key opens every sealed key, the active key passes its self-test,
/// the ring's lifecycle is tidy, and every tracked (static) client secret is far from expiry and under
/// Apple's cap.
public struct AppleHealthChecks: HealthCheckProvider {
    public let group = "apple"
    /// A retired key should be revoked in Apple's portal within this long.
    public static let retiredGrace = Seconds(14 * 86_400)
    /// A staged key left this long was probably forgotten.
    public static let stagedGrace = Seconds(7 * 86_400)
    /// Keys do not expire, but one older than this is due for a planned rotation.
    public static let keyAgeWarning = Seconds(365 * 86_400)

    /// Whether Apple is live on any platform: without an active key that is an outage, before it a note.
    let isAppleLive: @Sendable (Store, Timestamp) throws -> Bool

    public init(isAppleLive: @escaping @Sendable (Store, Timestamp) throws -> Bool = { _, _ in false }) {
        self.isAppleLive = isAppleLive
    }

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        let ring = AppleKeyRing(store: store)
        let keys = try ring.list()
        var checks: [HealthCheck] = []
        checks.append(try sealedKeys(ring, keys, context))
        checks.append(try activeKey(ring, keys, store, context))
        checks += lifecycle(keys, context)
        checks += try trackedSecrets(store, keys, context)
        return checks
    }

    func sealedKeys(_ ring: AppleKeyRing, _ keys: [AppleKey], _ context: HealthContext) throws -> HealthCheck {
        guard !keys.isEmpty else { return HealthCheck(id: "apple.master_key", status: .ok, summary: "no keys in the ring yet") }
        do { _ = try MasterKey.load(storePath: ring.store.path) } catch let error as GatehouseError {
            return HealthCheck(id: "apple.master_key", status: .critical, summary: error.message, action: error.fix)
        }
        let unopened = try keys.filter { key in
            try ring.selfTest(key.keyID, now: context.now).checks.contains { $0.code == "unseal_failed" }
        }
        guard unopened.isEmpty else {
            return HealthCheck(id: "apple.master_key", status: .critical,
                               summary: "the master key does not open \(unopened.count) sealed key(s): \(unopened.map(\.keyID.rawValue).joined(separator: ", "))",
                               action: "restore the master key file that sealed them (or GATEHOUSE_MASTER_KEY); re-import the .p8 if it is lost")
        }
        return HealthCheck(id: "apple.master_key", status: .ok, summary: "the master key opens all \(keys.count) sealed key(s)")
    }

    func activeKey(_ ring: AppleKeyRing, _ keys: [AppleKey], _ store: Store, _ context: HealthContext) throws -> HealthCheck {
        guard let active = keys.first(where: { $0.state == .active }) else {
            if try isAppleLive(store, context.now) {
                return HealthCheck(id: "apple.active_key", status: .critical, summary: "Apple is live but no key is active: client secrets cannot be minted",
                                   action: "\(run: .appleKeyRollback), or import and activate a key (ops/runbooks/rotate-apple-key.md)")
            }
            return HealthCheck(id: "apple.active_key", status: .ok, summary: "no active key (Apple is not live yet: reported, not alarmed)")
        }
        let test = try ring.selfTest(active.keyID, now: context.now)
        guard test.passed else {
            let failure = test.checks.first { $0.severity == .error }
            return HealthCheck(id: "apple.active_key", status: .critical,
                               summary: "the active key \(active.keyID) fails its self-test: \(failure?.message ?? "?")",
                               action: failure?.fix ?? "\(run: .appleKeySelftest, "\(active.keyID)")")
        }
        return HealthCheck(id: "apple.active_key", status: .ok, summary: "active key \(active.keyID) passes its self-test")
    }

    func lifecycle(_ keys: [AppleKey], _ context: HealthContext) -> [HealthCheck] {
        func age(_ time: Timestamp?) -> Int64 { time.map { (context.now.milliseconds - $0.milliseconds) / 1000 } ?? 0 }
        var checks: [HealthCheck] = []
        if let active = keys.first(where: { $0.state == .active }) {
            let days = age(active.activatedAt ?? active.importedAt) / 86_400
            let gauge = HealthGauge(value: Double(age(active.activatedAt ?? active.importedAt)) / 86_400,
                                    warning: Double(Self.keyAgeWarning.value / 86_400), critical: nil, lowerIsWorse: false)
            checks.append(age(active.activatedAt ?? active.importedAt) > Self.keyAgeWarning.value
                ? HealthCheck(id: "apple.key_age", status: .warning, summary: "the active key \(active.keyID) has been active for \(days) days",
                              action: "plan a rotation: ops/runbooks/rotate-apple-key.md", gauge: gauge)
                : HealthCheck(id: "apple.key_age", status: .ok, summary: "the active key \(active.keyID) has been active for \(days) days", gauge: gauge))
        }
        let unrevoked = keys.filter { $0.state == .retired && age($0.retiredAt) > Self.retiredGrace.value }
        if !unrevoked.isEmpty {
            checks.append(HealthCheck(id: "apple.retired_unrevoked", status: .warning,
                                      summary: "retired more than \(Self.retiredGrace) ago but not revoked: \(unrevoked.map(\.keyID.rawValue).joined(separator: ", "))",
                                      action: "revoke it in Apple's portal, then: \(run: .appleKeyRevoke, "<KEYID>")"))
        }
        let stale = keys.filter { $0.state == .staged && age($0.importedAt) > Self.stagedGrace.value }
        if !stale.isEmpty {
            checks.append(HealthCheck(id: "apple.staged_unused", status: .warning,
                                      summary: "imported more than \(Self.stagedGrace) ago and never activated: \(stale.map(\.keyID.rawValue).joined(separator: ", "))",
                                      action: "activate it (\(run: .appleKeyActivate, "<KEYID>")) or revoke it"))
        }
        let live = keys.filter(\.isLive)
        if live.count > AppleKeyRing.maxLiveKeys {
            checks.append(HealthCheck(id: "apple.live_keys", status: .warning,
                                      summary: "\(live.count) keys are live; Apple allows \(AppleKeyRing.maxLiveKeys) per primary App ID",
                                      action: "revoke the oldest in Apple's portal, then: \(run: .appleKeyRevoke, "<KEYID>")"))
        }
        return checks
    }

    /// The most recently tracked secret per client id is the deployed one; earlier ones were replaced.
    func trackedSecrets(_ store: Store, _ keys: [AppleKey], _ context: HealthContext) throws -> [HealthCheck] {
        let tracked = try ClientSecretService(store: store).tracked()
        var newest: [String: ClientSecretService.Tracked] = [:]
        for secret in tracked where (newest[secret.clientID]?.id ?? .min) < secret.id {
            newest[secret.clientID] = secret
        }
        return newest.values.sorted { $0.expiresAt < $1.expiresAt }.map { secret in
            let id = "apple.secret.\(secret.clientID)"
            let sample = HealthSample(metric: "gatehouse_secret_expiry_timestamp_seconds", labels: ["kind": "tracked", "key_id": secret.keyID],
                                      value: Double(secret.expiresAt.seconds), help: "When each tracked (static) Apple client secret expires.")
            let gauge = HealthGauge.daysLeft(until: secret.expiresAt, now: context.now, warning: Double(context.warnDays), critical: Double(context.critDays))
            let lifetime = (secret.expiresAt.milliseconds - secret.issuedAt.milliseconds) / 1000
            let signer = keys.first { $0.keyID.rawValue == secret.keyID }
            if signer == nil || signer?.state == .revoked {
                return HealthCheck(id: id, status: .critical,
                                   summary: "the deployed secret for \(secret.clientID) is signed by key \(secret.keyID), which is \(signer == nil ? "not in the ring" : "revoked"): Apple answers invalid_client",
                                   action: "mint one with the active key, deploy it, track it, and untrack the old one (\(run: .appleSecretUntrack, "<FINGERPRINT>"))", samples: [sample], gauge: gauge)
            }
            if lifetime > ClientSecretMinter.maxLifetimeSeconds {
                return HealthCheck(id: id, status: .critical,
                                   summary: "the deployed secret for \(secret.clientID) has a lifetime of \(lifetime) s, over Apple's cap of \(ClientSecretMinter.maxLifetimeSeconds) s: Apple answers invalid_client",
                                   action: "mint one within the cap (\(run: .appleSecretMint, .option(.ttl, "180d"))), deploy it, then track it", samples: [sample], gauge: gauge)
            }
            let days = (secret.expiresAt.milliseconds - context.now.milliseconds) / 86_400_000
            let status = context.expiryStatus(secret.expiresAt)
            let summary = secret.expiresAt <= context.now
                ? "the deployed secret for \(secret.clientID) (key \(secret.keyID)) expired at \(secret.expiresAt.iso8601)"
                : "the deployed secret for \(secret.clientID) (key \(secret.keyID)) expires in \(days) days (\(secret.expiresAt.iso8601))"
            return HealthCheck(id: id, status: status, summary: summary,
                               action: status == .ok ? nil : "mint, deploy and track a new secret (or switch the runtime to minting per request and untrack this one): ops/runbooks/rotate-apple-key.md",
                               samples: [sample], gauge: gauge)
        }
    }
}
