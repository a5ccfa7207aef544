import Foundation
import Storage
import JOSE
import EmbeddedResources

/// One engine's migrations, shipped in `migrations/<folder>/` (`SQLDialect.migrationsFolder`): files named
/// `NNNN_name.sql`, numbered from 1 with no gap. Every folder holds the same ids and names for the same purposes.
///
/// A migration may start with `-- gatehouse:unless-table NAME`: it is then recorded without running
/// when that table already exists (Better Auth created it), so an existing database is never altered.
public struct MigrationCatalog: Sendable {
    /// The directory read.
    public let directory: String
    /// The migrations, in order.
    public let migrations: [Migration]
    /// Migration id → the table whose presence means "skip". Read from the scripts when asked: only
    /// `Store.initialize` needs it, and every other command opens the store without building it.
    public var unlessTable: [Int: String] {
        var unless: [Int: String] = [:]
        for migration in migrations {
            if let first = migration.sql.split(separator: "\n", maxSplits: 1).first, first.hasPrefix(Self.unlessDirective) {
                unless[migration.id] = Self.trimmingSpaces(first.dropFirst(Self.unlessDirective.count))
            }
        }
        return unless
    }

    static let unlessDirective = "-- gatehouse:unless-table "

    /// Whether a migration runs or is only recorded, on any engine: one whose `unless-table` exists (a Better Auth
    /// table under its `configuration` name) is recorded without running.
    package func shouldRun(configuration: StoreConfiguration) -> (Migration, SQLDatabase) throws -> Bool {
        let unless = unlessTable
        return { migration, db in
            guard let table = unless[migration.id] else { return true }
            let physical = StoreConfiguration.betterAuthTables.contains(table) ? configuration.tableName(table) : table
            return try !db.tableExists(physical)
        }
    }

    /// Reads and checks a migrations directory: a folder, or the binary's own copy of one
    /// (`(embedded)/migrations/sqlite`, see `ResourceLocator`), checked the same way.
    public static func load(directory: String) throws -> MigrationCatalog {
        let files: [(name: String, bytes: [UInt8]?)]
        if let folder = ResourceLocator.embeddedFolder(directory) {
            // Only the folder's own .sql files, as a directory listing would give them.
            files = EmbeddedResources.files(under: folder)
                .filter { $0.relativePath.hasSuffix(".sql") && !$0.relativePath.contains("/") }
                .map { ($0.relativePath, $0.file.bytes) }
        } else {
            guard let names = sqlFileNames(in: directory) else {
                throw GatehouseError("cannot read the migrations folder \(directory)", fix: "check that it exists and is readable")
            }
            files = names.map { ($0, contents(of: directory + "/" + $0)) }
        }
        var migrations: [Migration] = []
        for (name, bytes) in files {
            let stem = String(name.dropLast(4))
            let parts = stem.split(separator: "_", maxSplits: 1)
            guard parts.count == 2, parts[0].count == 4, let id = Int(parts[0]), id > 0,
                  parts[1].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw GatehouseError.invalid("migration file \(name) in \(directory) is not named NNNN_name.sql",
                                             fix: "rename it with a four-digit number, e.g. 0007_\(stem).sql")
            }
            guard let bytes, let sql = utf8Text(bytes) else {
                throw GatehouseError.invalid("migration file \(name) cannot be read as UTF-8 text")
            }
            if let duplicate = migrations.first(where: { $0.id == id }) {
                throw GatehouseError.invalid("migrations \(duplicate.name) and \(stem) share the number \(id)",
                                             fix: "give \(stem) the next free number")
            }
            migrations.append(Migration(id: id, name: stem, sql: sql, checksum: SHA256.Portable.hex(bytes)))
        }
        guard !migrations.isEmpty else {
            throw GatehouseError.invalid("the migrations folder \(directory) holds no .sql files", fix: "point GATEHOUSE_MIGRATIONS at Gatehouse's migrations/ (it holds sqlite/ and postgres/)")
        }
        for (index, migration) in migrations.enumerated() where migration.id != index + 1 {
            throw GatehouseError.invalid("the migrations in \(directory) have a gap: \(migration.name) follows number \(index)",
                                         fix: "number migrations 1, 2, 3, ... without gaps; restore the missing file")
        }
        return MigrationCatalog(directory: directory, migrations: migrations)
    }

    // Every command opens the store and so loads this catalog: the helpers below use plain POSIX calls and
    // byte loops, because FileManager, Data and Foundation's string functions cost more than the work on first
    // use in a process (runtime type lookups in a large static binary). Fast path kept for ops/bench's cold-start and `users show` /
    // `users search` rows (< 20 ms; ≤ 3× the sqlite3 shell).

    /// `text` without leading and trailing spaces and tabs (what `.whitespaces` trims).
    static func trimmingSpaces(_ text: Substring) -> String {
        func isSpace(_ character: Character) -> Bool { character.isWhitespace && !character.isNewline }
        var start = text.startIndex, end = text.endIndex
        while start < end, isSpace(text[start]) { start = text.index(after: start) }
        while end > start, isSpace(text[text.index(before: end)]) { end = text.index(before: end) }
        return String(text[start..<end])
    }

    /// The bytes as text, or nil when they are not valid UTF-8.
    static func utf8Text(_ bytes: [UInt8]) -> String? {
        var text = String(decoding: bytes, as: UTF8.self)
        // Decoding replaces invalid sequences with U+FFFD, so valid input is exactly what round-trips.
        let roundTrips = text.withUTF8 { utf8 in
            utf8.count == bytes.count && (bytes.isEmpty || memcmp(utf8.baseAddress!, bytes, bytes.count) == 0)
        }
        return roundTrips ? text : nil
    }

    /// The names of the `.sql` files in `directory`, sorted; nil when it cannot be read.
    static func sqlFileNames(in directory: String) -> [String]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".sql") { names.append(name) }
        }
        return names.sorted()
    }

    /// A file's bytes; nil when it cannot be read.
    static func contents(of path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
