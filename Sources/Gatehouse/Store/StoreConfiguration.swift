import Foundation

/// Settings that belong to one store rather than one command: the names Better Auth's tables
/// have in this database (Better Auth lets an app rename them).
///
/// Read from `--config FILE`, `GATEHOUSE_CONFIG`, or `gatehouse.json` beside the store:
///
///     { "tables": { "user": "auth_user", "session": "auth_session", "account": "auth_account" } }
public struct StoreConfiguration: Sendable, Equatable {
    /// Better Auth's logical table names and the names they have in this database.
    public var tables: [String: String]

    /// Better Auth's four core tables.
    public static let betterAuthTables = ["user", "session", "account", "verification"]

    public init(tables: [String: String] = [:]) { self.tables = tables }

    /// The physical name of a Better Auth table.
    public func tableName(_ logical: String) -> String { tables[logical] ?? logical }

    /// Loads the configuration for a store: an explicit file must exist; the implicit one (beside a store file; a
    /// Postgres store, `storePath` nil, has no "beside") may not.
    public static func load(storePath: String?, explicitPath: String?) throws -> StoreConfiguration {
        guard let path = explicitPath ?? storePath.map({ FileStatus.directory(of: $0) + "/gatehouse.json" }) else { return StoreConfiguration() }
        guard FileStatus.exists(path) else {
            if let explicitPath {
                throw GatehouseError.invalid("configuration file \(explicitPath) does not exist",
                                             fix: "create it, or drop \(field: .config) / GATEHOUSE_CONFIG")
            }
            return StoreConfiguration()
        }
        try InputFile.requireRegular(path, what: "the configuration file")
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GatehouseError.invalid("configuration file \(path) cannot be read", fix: "check its permissions")
        }
        return try parse(data, source: path)
    }

    /// Parses the JSON form, refusing unknown keys with the list of valid ones.
    public static func parse(_ data: Data, source: String) throws -> StoreConfiguration {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw GatehouseError.invalid("configuration file \(source) is not a JSON object",
                                         fix: #"write it as {"tables": {"user": "auth_user"}}"#)
        }
        for key in object.keys where key != "tables" {
            throw GatehouseError.invalid("configuration file \(source) has an unknown key \"\(key)\"", fix: "valid keys: tables")
        }
        var tables: [String: String] = [:]
        if let raw = object["tables"] {
            guard let mapping = raw as? [String: Any] else {
                throw GatehouseError.invalid("\"tables\" in \(source) must be an object of table names")
            }
            for (logical, value) in mapping {
                guard betterAuthTables.contains(logical) else {
                    throw GatehouseError.invalid("\"tables\" in \(source) names an unknown Better Auth table \"\(logical)\"",
                                                 fix: "valid names: \(betterAuthTables.joined(separator: ", "))")
                }
                guard let name = value as? String, !name.isEmpty, name.utf8.count <= 128 else {
                    throw GatehouseError.invalid("\"tables.\(logical)\" in \(source) must be a non-empty table name")
                }
                tables[logical] = name
            }
        }
        return StoreConfiguration(tables: tables)
    }
}
