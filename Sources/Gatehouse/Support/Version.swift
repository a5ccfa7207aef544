import EmbeddedResources

/// The version `gatehouse --version` prints and `/api/status` reports.
public enum GatehouseVersion {
    /// The release's version; the Debian package takes its version from here (`ops/package`).
    public static let current = "0.1.0"
    /// The git commit the binary was built from (`GATEHOUSE_BUILD_COMMIT` at build time wins), or "unknown".
    public static var commit: String { BuildInfo.commit }
    /// The build's date: the commit's, or `SOURCE_DATE_EPOCH`'s (ISO-8601 UTC), so one commit builds one binary;
    /// "unknown" outside git.
    public static var buildDate: String { BuildInfo.date }
}
