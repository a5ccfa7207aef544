import Foundation

/// Finds the directories Gatehouse ships beside its binary: `migrations/` and `Public/`.
///
/// In order: an environment variable (`GATEHOUSE_MIGRATIONS`, `GATEHOUSE_PUBLIC`); `../share/gatehouse/<name>`
/// next to an installed binary; the source checkout the binary was built in (walking up from the
/// binary to the folder holding `Package.swift`).
public enum ResourceLocator {
    /// The directory of migrations.
    public static func migrationsDirectory() throws -> String {
        try locate("migrations", environment: "GATEHOUSE_MIGRATIONS")
    }

    /// The directory of the console's static files.
    public static func publicDirectory() throws -> String {
        try locate("Public", environment: "GATEHOUSE_PUBLIC")
    }

    static func locate(_ name: String, environment variable: String) throws -> String {
        let files = FileManager.default
        if let explicit = ProcessInfo.processInfo.environment[variable], !explicit.isEmpty {
            var isDirectory: ObjCBool = false
            guard files.fileExists(atPath: explicit, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw GatehouseError.invalid("\(variable)=\(explicit) is not a directory", fix: "point \(variable) at Gatehouse's \(name) folder, or unset it")
            }
            return explicit
        }
        var directory = URL(fileURLWithPath: executablePath()).resolvingSymlinksInPath().deletingLastPathComponent()
        let installed = directory.appendingPathComponent("../share/gatehouse/\(name)").standardizedFileURL.path
        if files.fileExists(atPath: installed) { return installed }
        for _ in 0..<8 {
            let candidate = directory.appendingPathComponent(name).path
            if files.fileExists(atPath: directory.appendingPathComponent("Package.swift").path), files.fileExists(atPath: candidate) {
                return candidate
            }
            directory.deleteLastPathComponent()
        }
        throw GatehouseError("cannot find Gatehouse's \(name) folder next to the binary",
                             fix: "set \(variable) to its path (it is \(name)/ in the source checkout)")
    }

    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}
