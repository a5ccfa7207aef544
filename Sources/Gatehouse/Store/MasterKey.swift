import Foundation
import Storage
import JOSE

/// The 32-byte key that seals secrets at rest (AES-256-GCM). From `GATEHOUSE_MASTER_KEY` (64 hex
/// characters) or from a key file beside the store, created with mode 0600.
public struct MasterKey: Sendable {
    /// The key bytes. Never printed, never logged.
    let bytes: [UInt8]
    /// Where the key came from, for messages (`GATEHOUSE_MASTER_KEY` or a file path).
    public let source: String

    /// The key file that belongs to a store: `<store>.key` beside a SQLite file. A Postgres store (named by its
    /// redacted URI) has no folder of its own: its key file is `<host>_<port>_<database>.key` in
    /// `GATEHOUSE_KEY_DIR`, else `$XDG_CONFIG_HOME/gatehouse`, else `~/.config/gatehouse`, on the machine that runs
    /// Gatehouse — the key never goes to the database server.
    public static func defaultPath(forStore storePath: String) -> String {
        (try? StoreLocation(storePath))?.engine.masterKeyPath ?? storePath + ".key"
    }

    /// The folder on the operator's machine that holds the key files of stores on a server (Postgres, D1):
    /// `GATEHOUSE_KEY_DIR`, else `$XDG_CONFIG_HOME/gatehouse`, else `~/.config/gatehouse`.
    package static func operatorKeyFolder(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        environment["GATEHOUSE_KEY_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 + "/gatehouse" }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.config/gatehouse"
    }

    /// Loads the key from the environment or the key file; throws with a fix when it is missing or exposed.
    public static func load(storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> MasterKey {
        if let value = environment["GATEHOUSE_MASTER_KEY"], !value.isEmpty {
            guard let bytes = Hex.decode(value.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32 else {
                throw GatehouseError.invalid("GATEHOUSE_MASTER_KEY is not 64 hexadecimal characters (32 bytes)",
                                             fix: "generate one with `openssl rand -hex 32`")
            }
            return MasterKey(bytes: bytes, source: "GATEHOUSE_MASTER_KEY")
        }
        let path = defaultPath(forStore: storePath)
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            // A store on a server is named by its redacted URI here, which is no --store value to copy: `init` on the
            // same store, however it is given (GATEHOUSE_STORE, --store-file), creates the key file.
            let initCommand = StoreLocation.namesServer(storePath) ? "\(command: .`init`) on this store" : "\(command: .`init`, .option(.store, storePath))"
            throw GatehouseError.notFound("the master key file \(path) does not exist",
                                          fix: "run \(initCommand) (it creates the key file while the store holds no sealed keys), or set GATEHOUSE_MASTER_KEY")
        }
        try InputFile.requireRegular(path, what: "the master key file")
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        if mode & 0o077 != 0 {
            throw GatehouseError("the master key file \(path) is readable by other users (mode \(String(mode, radix: 8)))",
                                 fix: "chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path),
              let bytes = Hex.decode(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
              bytes.count == 32 else {
            throw GatehouseError("the master key file \(path) does not hold 64 hexadecimal characters",
                                 fix: "restore it from your backup; sealed keys cannot be opened without it")
        }
        return MasterKey(bytes: bytes, source: path)
    }

    /// What the store holds sealed under its master key, in words ("2 sealed Apple key(s) and 1 sealed TOTP
    /// secret(s)"), or nil when nothing: the Apple keys and the console admins' TOTP secrets.
    static func sealedHoldings(_ db: SQLDatabase) throws -> String? {
        var parts: [String] = []
        if try db.tableExists("gatehouse_apple_keys"), let keys = try db.scalar("SELECT count(*) FROM gatehouse_apple_keys").int64, keys > 0 {
            parts.append("\(keys) sealed Apple key(s)")
        }
        if try db.tableExists("gatehouse_admin_factors"),
           let secrets = try db.scalar("SELECT count(*) FROM gatehouse_admin_factors WHERE sealed_secret IS NOT NULL").int64, secrets > 0 {
            parts.append("\(secrets) sealed TOTP secret(s)")
        }
        if try db.tableExists("gatehouse_sso_config"), let secrets = try db.scalar("SELECT count(*) FROM gatehouse_sso_config").int64, secrets > 0 {
            parts.append("a sealed SSO client secret")
        }
        return parts.isEmpty ? nil : parts.joined(separator: " and ")
    }

    /// Refuses to go on when the store already holds sealed keys or secrets but neither its key file nor
    /// `GATEHOUSE_MASTER_KEY` is there: creating a new key would leave them sealed under a key that is lost, and
    /// split the ring across two keys.
    static func checkCustody(_ db: SQLDatabase, storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if let value = environment["GATEHOUSE_MASTER_KEY"], !value.isEmpty { return }
        let path = defaultPath(forStore: storePath)
        guard !FileManager.default.fileExists(atPath: path), let sealed = try sealedHoldings(db) else { return }
        throw GatehouseError("the store holds \(sealed) but its master key file \(path) is missing; nothing was changed",
                             fix: "restore \(path) from the backup taken with the store (mode 0600), or set GATEHOUSE_MASTER_KEY to the key's 64 hex characters; a new key could not open the sealed ones",
                             code: .masterKeyMissing)
    }

    /// Refuses a master key (from `GATEHOUSE_MASTER_KEY` or the key file) that opens none of the store's sealed Apple
    /// keys: `init` would otherwise report the store "up to date" while nothing sealed in it can be used. One key
    /// that opens is enough (a row altered by hand does not open under any key). A store without sealed keys, or
    /// without a loadable key, passes.
    static func checkOpensSealed(_ db: SQLDatabase, storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard let holdings = try sealedHoldings(db) else { return }
        let rows = try db.tableExists("gatehouse_apple_keys") ? try db.rows("SELECT key_id, fingerprint, sealed_p8 FROM gatehouse_apple_keys") : []
        let secrets = try db.tableExists("gatehouse_admin_factors")
            ? try db.rows("SELECT id, admin_id, sealed_secret FROM gatehouse_admin_factors WHERE sealed_secret IS NOT NULL") : []
        // A key that cannot be loaded at all (missing: `checkCustody`; readable by others, malformed) is the business
        // of the commands that use it, which say so: init asks only whether a loadable key is the right one.
        guard let key = try? load(storePath: storePath, environment: environment) else { return }
        for row in rows {
            guard let keyID = row["key_id"].string, let fingerprint = row["fingerprint"].string, let sealed = try? row.blob("sealed_p8") else { continue }
            let associatedData = Array("gatehouse_apple_keys:\(keyID):\(fingerprint)".utf8)
            if (try? AESGCM.open(sealed, key: key.bytes, associatedData: associatedData)) != nil { return }
        }
        for row in secrets {
            guard let id = row["id"].string, let adminID = row["admin_id"].int64, let sealed = try? row.blob("sealed_secret") else { continue }
            if (try? AESGCM.open(sealed, key: key.bytes, associatedData: SecondFactors.associatedData(id: id, adminID: adminID))) != nil { return }
        }
        if try db.tableExists("gatehouse_sso_config"),
           let row = try db.row("SELECT issuer, client_id, sealed_client_secret FROM gatehouse_sso_config WHERE id = 1"),
           let issuer = row["issuer"].string, let clientID = row["client_id"].string, let sealed = try? row.blob("sealed_client_secret"),
           (try? AESGCM.open(sealed, key: key.bytes, associatedData: SSOConfiguration.associatedData(SSOSettings(issuer: issuer, clientID: clientID)))) != nil {
            return
        }
        let other = key.source == "GATEHOUSE_MASTER_KEY" ? "unset it to use the key file \(defaultPath(forStore: storePath)), or set it to the key the store was sealed with" : "restore \(key.source) from the backup taken with the store, or set GATEHOUSE_MASTER_KEY to the key it was sealed with"
        throw GatehouseError("the master key from \(key.source) does not open the store's \(holdings): it is not the key they were sealed with; nothing was changed",
                             fix: other, code: .unsealFailed)
    }

    /// Creates the key file for a store if neither it nor `GATEHOUSE_MASTER_KEY` exists. Returns the
    /// path it created, or nil when a key was already there.
    public static func createIfMissing(storePath: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        if let value = environment["GATEHOUSE_MASTER_KEY"], !value.isEmpty { return nil }
        let path = defaultPath(forStore: storePath)
        if FileManager.default.fileExists(atPath: path) { return nil }
        if (try? StoreLocation(storePath))?.engine.createsPrivateKeyFolder ?? StoreLocation.namesServer(storePath) {
            // The key folder of server stores is the operator's own: made private when it is first needed.
            try? FileManager.default.createDirectory(atPath: FileStatus.directory(of: path), withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
        }
        let text = Hex.encode(try SecureRandom.bytes(32)) + "\n"
        // O_EXCL: two concurrent inits cannot both write a key; the file is born with mode 0600.
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd < 0 {
            if errno == EEXIST { return nil }
            throw GatehouseError("cannot create the master key file \(path): \(String(cString: strerror(errno)))",
                                 fix: "check that the store's folder is writable")
        }
        defer { close(fd) }
        let written = text.withCString { write(fd, $0, strlen($0)) }
        guard written == text.utf8.count, fsync(fd) == 0 else {
            unlink(path)
            throw GatehouseError("cannot write the master key file \(path)", fix: "check free disk space")
        }
        return path
    }
}
