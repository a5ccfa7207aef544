import Storage
import Foundation

/// Finds the directories Gatehouse ships beside its binary: `migrations/` and `Public/`.
///
/// In order: an environment variable (`GATEHOUSE_MIGRATIONS`, `GATEHOUSE_PUBLIC`); `../share/gatehouse/<name>`
/// next to an installed binary; the source checkout the binary was built in (walking up from the
/// binary to the folder holding `Package.swift`).
public enum ResourceLocator {
    /// The directory of one engine's migrations: `migrations/sqlite` or `migrations/postgres`.
    /// `GATEHOUSE_MIGRATIONS` names the folder that holds both.
    public static func migrationsDirectory(for engine: MigrationCatalog.Engine = .sqlite) throws -> String {
        let root = try locate("migrations", environment: "GATEHOUSE_MIGRATIONS")
        let directory = root + "/" + engine.rawValue
        guard FileStatus(directory)?.isDirectory == true else {
            throw GatehouseError.invalid("the migrations folder \(root) has no \(engine.rawValue)/ folder",
                                         fix: "point GATEHOUSE_MIGRATIONS at Gatehouse's migrations/, which holds sqlite/ and postgres/")
        }
        return directory
    }

    /// The directory of the console's static files.
    public static func publicDirectory() throws -> String {
        try locate("Public", environment: "GATEHOUSE_PUBLIC")
    }

    static func locate(_ name: String, environment variable: String) throws -> String {
        if let explicit = getenv(variable).map({ String(cString: $0) }), !explicit.isEmpty {
            guard FileStatus(explicit)?.isDirectory == true else {
                throw GatehouseError.invalid("\(variable)=\(explicit) is not a directory", fix: "point \(variable) at Gatehouse's \(name) folder, or unset it")
            }
            return explicit
        }
        // Plain path strings and stat: this runs at every start, and Foundation's URL is slow to first use.
        var directory = parent(of: executablePath())
        // `<bin>/../share/gatehouse/<name>`; the binary's folder is already free of links and dots.
        let installed = (parent(of: directory) == "/" ? "" : parent(of: directory)) + "/share/gatehouse/\(name)"
        if FileStatus.exists(installed) { return installed }
        for _ in 0..<8 {
            let candidate = directory + "/" + name
            if FileStatus.exists(directory + "/Package.swift"), FileStatus.exists(candidate) {
                return candidate
            }
            directory = parent(of: directory)
        }
        throw GatehouseError("cannot find Gatehouse's \(name) folder next to the binary",
                             fix: "set \(variable) to its path (it is \(name)/ in the source checkout)")
    }

    /// The running binary's path with every symbolic link resolved.
    static func executablePath() -> String {
        for path in ["/proc/self/exe", CommandLine.arguments[0]] {
            if let resolved = realpath(path, nil) {
                defer { free(resolved) }
                return String(cString: resolved)
            }
        }
        return CommandLine.arguments[0]
    }

    /// `/a/b/c` → `/a/b`; `/a` → `/`.
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

}
