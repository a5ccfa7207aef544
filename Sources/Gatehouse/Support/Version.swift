/// The version `gatehouse --version` prints and `/api/status` reports.
public enum GatehouseVersion {
    public static let current = "0.1.0"
}
