/// `google.risc`: with Google sign-in configured, Google's Cross-Account Protection events must be reaching the
/// store — the stream enabled at Google, and an event or a verification seen in the last `quietDays` days (Google's
/// Project Checkup flags an app that does not receive them). Warns otherwise.
public struct GoogleRISCHealthCheck: HealthCheckProvider {
    public let group = "google"
    public static let quietDays = 30
    public init() {}

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        guard !(try GoogleRISCVerifier.audiences(in: store)).isEmpty else {
            return [HealthCheck(id: "google.risc", status: .ok, summary: "Google sign-in has no client id configured: no Cross-Account Protection stream is expected")]
        }
        let stream = try store.db.row("SELECT status FROM gatehouse_google_risc_stream WHERE id = 1")
        let last = try store.db.scalar("SELECT max(received_at) FROM gatehouse_google_events").string.flatMap(Timestamp.init(iso8601:))
        let setup = "ops/runbooks/google-risc.md: `gatehouse google risc stream update --url URL`, `stream enable`, `stream verify`"
        guard stream?.optionalString("status") == "enabled" else {
            return [HealthCheck(id: "google.risc", status: .warning, summary: "Google's Cross-Account Protection stream is not enabled: Google's security events about your users are not received",
                                action: setup)]
        }
        let quiet = context.now.adding(seconds: -Int64(Self.quietDays) * 86_400)
        guard let last, last >= quiet else {
            return [HealthCheck(id: "google.risc", status: .warning,
                                summary: last.map { "no Google security event or verification since \($0.iso8601) (over \(Self.quietDays) days)" } ?? "no Google security event or verification has ever been received",
                                action: "check the receiver and the proxy in front of it, then `gatehouse google risc stream verify` (\(setup))")]
        }
        return [HealthCheck(id: "google.risc", status: .ok, summary: "the stream is enabled; last Google security event or verification at \(last.iso8601)")]
    }
}
