import Foundation

/// A file that holds a store's location — in practice a `postgresql://` URI with its password — for
/// `--store-file FILE` and `GATEHOUSE_STORE_FILE`, so that the password is in neither `argv` (which `ps` shows every
/// user) nor a unit file's `Environment=` line (which `systemctl show` prints).
///
/// The file must be a regular file readable by its owner only (mode 0600 or 0400, as `chmod` and systemd's
/// `LoadCredential=` make them): the same rule as the master key file. Nothing it holds is ever quoted in an error.
///
///     let text = try StoreLocationFile.read("/etc/gatehouse/store-uri")   // "postgresql://ops:…@db/auth"
public enum StoreLocationFile {
    /// The longest file read: a URI is under 4 KB (`PostgresURI.maximumLength`).
    static let maximumSize = 8192

    /// The location the file at `path` holds: its first line, without surrounding spaces. Throws when the file is
    /// missing, not a regular file, readable by other users, empty, longer than one line or too long.
    public static func read(_ path: String, option: String) throws -> String {
        try InputFile.requireRegular(path, what: "the store file (\(option))")
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else {
            throw GatehouseError.notFound("the store file \(path) (\(option)) does not exist or cannot be read",
                                          fix: "write the store's URI into it (one line, mode 0600), or pass \(field: .store)")
        }
        let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0
        if mode & 0o077 != 0 {
            throw GatehouseError("the store file \(path) (\(option)) is readable by other users (mode \(String(mode, radix: 8))); it may hold a password",
                                 fix: "chmod 600 \(path)")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw GatehouseError("the store file \(path) (\(option)) cannot be read by this user", fix: "run as its owner")
        }
        guard data.count <= maximumSize else {
            throw GatehouseError.invalid("the store file \(path) (\(option)) is \(data.count) bytes; a store URI is one line under 4 KB",
                                         fix: "write only the store's URI into it")
        }
        let lines = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard lines.count == 1, let location = lines.first else {
            throw GatehouseError.invalid("the store file \(path) (\(option)) holds \(lines.isEmpty ? "nothing" : "\(lines.count) lines"); it must hold the store's URI on one line",
                                         fix: "write only the store's URI into it, e.g. postgresql://USER:PASSWORD@HOST/DATABASE")
        }
        return location
    }
}
