import EmbeddedResources
import Storage
import Foundation

/// Finds the files Gatehouse ships: `migrations/` and `Public/`.
///
/// In order, first found wins:
/// 1. an environment variable (`GATEHOUSE_MIGRATIONS`, `GATEHOUSE_PUBLIC`): development and tests point at a folder;
/// 2. the source checkout the binary was built in (walking up from the binary to the folder holding `Package.swift`),
///    so a developer's edit is read without a rebuild;
/// 3. the copies compiled into the binary (`EmbeddedResources`), byte for byte the files it was built from: an
///    installed or copied binary needs nothing beside it.
///
/// No `share/gatehouse` folder beside an installed binary is read: a stale one from an older install
/// would otherwise win over the binary's own copies, and a migrations folder that does not match the binary is how
/// a store gets a migration its code does not know.
///
/// The embedded copies are named by a pseudo-directory, `(embedded)/migrations/sqlite`, which
/// `MigrationCatalog.load(directory:)` and the console's `StaticFiles(directory:)` recognise; messages that name the
/// folder then say where the files came from.
public enum ResourceLocator {
    /// The pseudo-directory that names the binary's own copies.
    public static let embeddedRoot = "(embedded)"

    /// The folder under the binary's own copies that `directory` names (`migrations/sqlite` for
    /// `(embedded)/migrations/sqlite`); nil for a real directory.
    public static func embeddedFolder(_ directory: String) -> String? {
        directory.hasPrefix(embeddedRoot + "/") ? String(directory.dropFirst(embeddedRoot.count + 1)) : nil
    }

    /// The directory of one engine's migrations, `migrations/<folder>` (`SQLDialect.migrationsFolder`: `sqlite`,
    /// `postgres`). `GATEHOUSE_MIGRATIONS` names the folder that holds them all.
    public static func migrationsDirectory(for folder: String) throws -> String {
        let root = try locate("migrations", environment: "GATEHOUSE_MIGRATIONS")
        let directory = root + "/" + folder
        if let folder = embeddedFolder(directory) {
            guard !EmbeddedResources.files(under: folder).isEmpty else {
                throw GatehouseError("this binary carries no \(folder) migrations",
                                     fix: "point GATEHOUSE_MIGRATIONS at Gatehouse's migrations/, which holds a folder for each engine")
            }
            return directory
        }
        guard FileStatus(directory)?.isDirectory == true else {
            throw GatehouseError.invalid("the migrations folder \(root) has no \(folder)/ folder",
                                         fix: "point GATEHOUSE_MIGRATIONS at Gatehouse's migrations/, which holds a folder for each engine")
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
        for _ in 0..<8 {
            let candidate = directory + "/" + name
            if FileStatus.exists(directory + "/Package.swift"), FileStatus.exists(candidate) {
                return candidate
            }
            directory = parent(of: directory)
        }
        return embeddedRoot + "/" + name
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
