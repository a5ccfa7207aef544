import Foundation
import Storage

/// The migrations shipped in `migrations/`: files named `NNNN_name.sql`, numbered from 1 with no gap.
///
/// A migration may start with `-- gatehouse:unless-table NAME`: it is then recorded without running
/// when that table already exists (Better Auth created it), so an existing database is never altered.
public struct MigrationCatalog: Sendable {
    /// The directory read.
    public let directory: String
    /// The migrations, in order.
    public let migrations: [Migration]
    /// Migration id → the table whose presence means "skip".
    public let unlessTable: [Int: String]

    /// Reads and checks a migrations directory.
    public static func load(directory: String) throws -> MigrationCatalog {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }.sorted()
        } catch {
            throw GatehouseError("cannot read the migrations folder \(directory)", fix: "check that it exists and is readable")
        }
        var migrations: [Migration] = []
        var unless: [Int: String] = [:]
        for name in names {
            let stem = String(name.dropLast(4))
            let parts = stem.split(separator: "_", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 4, let id = Int(parts[0]), id > 0,
                  parts[1].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw GatehouseError.invalid("migration file \(name) in \(directory) is not named NNNN_name.sql",
                                             fix: "rename it with a four-digit number, e.g. 0007_\(stem).sql")
            }
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                  let sql = String(validating: data, as: UTF8.self) else {
                throw GatehouseError.invalid("migration file \(name) cannot be read as UTF-8 text")
            }
            if let duplicate = migrations.first(where: { $0.id == id }) {
                throw GatehouseError.invalid("migrations \(duplicate.name) and \(stem) share the number \(id)",
                                             fix: "give \(stem) the next free number")
            }
            migrations.append(Migration(id: id, name: stem, sql: sql, checksum: MigrationChecksum.hex(Array(data))))
            if let first = sql.split(separator: "\n", maxSplits: 1).first, first.hasPrefix("-- gatehouse:unless-table ") {
                unless[id] = trimmingSpaces(first.dropFirst("-- gatehouse:unless-table ".count))
            }
        }
        guard !migrations.isEmpty else {
            throw GatehouseError.invalid("the migrations folder \(directory) holds no .sql files", fix: "point GATEHOUSE_MIGRATIONS at Gatehouse's migrations/")
        }
        for (index, migration) in migrations.enumerated() where migration.id != index + 1 {
            throw GatehouseError.invalid("the migrations in \(directory) have a gap: \(migration.name) follows number \(index)",
                                         fix: "number migrations 1, 2, 3, ... without gaps; restore the missing file")
        }
        return MigrationCatalog(directory: directory, migrations: migrations, unlessTable: unless)
    }

    /// `text` without leading and trailing spaces and tabs (what `.whitespaces` trims), in plain Swift:
    /// Foundation's `trimmingCharacters` bridges through NSString, slow the first time in a process.
    static func trimmingSpaces(_ text: Substring) -> String {
        let isSpace = { (character: Character) in character.isWhitespace && !character.isNewline }
        return String(text.drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
