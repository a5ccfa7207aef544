/// Whether the scheduled runs still happen: the previous recorded run must be recent.
public struct TimerHealthCheck: HealthCheckProvider {
    public let group = "health"
    public init() {}

    public func checks(_ store: Store, _ context: HealthContext) throws -> [HealthCheck] {
        let last = try store.db.scalar("SELECT at FROM gatehouse_health_runs ORDER BY id DESC LIMIT 1").string.flatMap(Timestamp.init(iso8601:))
        guard let last else {
            return [HealthCheck(id: "health.last_run", status: .ok, summary: "no recorded run yet (the timer records with \(field: .record))")]
        }
        let age = Seconds(max(0, (context.now.milliseconds - last.milliseconds) / 1000))
        let sample = HealthSample(metric: "gatehouse_health_last_recorded_run_timestamp_seconds", value: Double(last.seconds),
                                  help: "When the previous recorded health run happened.")
        if age.value > 2 * context.expectedInterval.value {
            return [HealthCheck(id: "health.last_run", status: .warning,
                                summary: "the previous recorded run was \(age) ago (expected every \(context.expectedInterval))",
                                action: "check the timer: systemctl status gatehouse-health.timer (or the cron line)", samples: [sample])]
        }
        return [HealthCheck(id: "health.last_run", status: .ok, summary: "previous recorded run \(age) ago", samples: [sample])]
    }
}
