import Foundation
import Storage

/// The file a sending team hands to a recipient that runs its own store: per Apple's rule, only the app's own user id
/// and the transfer identifier of each user — never the team-scoped sub or the relay address.
///
///     {"format": "gatehouse-apple-transfer/1", "fromTeam": "OLDTEAM123", "toTeam": "NEWTEAM123", "clientId": "com.example.app",
///      "transferredAt": "2026-12-01T00:00:00.000Z", "users": [{"userId": "u1…", "transferSub": "001234.…"}]}
public struct AppleTransferFile: Sendable, Codable {
    public static let format = "gatehouse-apple-transfer/1"
    /// The largest file `import` reads (10 million users fit).
    public static let maxBytes = 1 << 30

    public let format: String
    public let fromTeam: String
    public let toTeam: String
    public let clientId: String
    public let transferredAt: String
    public let users: [User]

    public struct User: Sendable, Codable, Equatable {
        public let userId: String
        public let transferSub: String
    }

    /// What `import` did.
    public struct ImportResult: Sendable, Codable {
        public let transferId: Int64
        public let created: Bool
        public let users: Int
        public let accounts: Int
        /// Users of the file this store has no Apple account for (their ids, at most 100).
        public let withoutAccount: [String]
        public let withoutAccountCount: Int
    }
}

extension AppleTransferStore {
    /// Writes the transfer's collected identifiers to `path` (mode 0600, written whole or not at all), page by page
    /// so that memory stays flat however many users there are. Returns how many users.
    @discardableResult
    public func export(to path: String, actor: Actor, now: Timestamp = .now()) throws -> Int {
        let transfer = try required()
        guard try store.db.row("SELECT 1 AS one FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ? AND transfer_sub IS NOT NULL LIMIT 1", [transfer.id]) != nil else {
            throw GatehouseError.invalid("no transfer identifier is collected yet", fix: "run `gatehouse apple transfer collect` first")
        }
        // A user with more than one collected account is written once, with its first account's identifier (account
        // id order): such users are few, so only they are remembered.
        let several = Set(try store.db.rows("""
            SELECT user_id FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ? AND transfer_sub IS NOT NULL GROUP BY user_id HAVING count(*) > 1
            """, [transfer.id]).compactMap { $0.optionalString("user_id") })
        struct Header: Encodable { let format: String, fromTeam: String, toTeam: String, clientId: String, transferredAt: String }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // The header's fields sort before "users", so the file reads as `AppleTransferFile` encoded whole.
        var head = String(decoding: try encoder.encode(Header(format: AppleTransferFile.format, fromTeam: transfer.fromTeam.rawValue, toTeam: transfer.toTeam.rawValue,
                                                              clientId: transfer.clientID, transferredAt: transfer.transferredAt.iso8601)), as: UTF8.self)
        head.removeLast()
        let file = try PrivateFile.Stream(path: path)
        file.append(head + ",\"users\":[")
        let page = 5_000
        var written = Set<String>(), users = 0, after = ""
        while true {
            let rows = try store.db.rows("""
                SELECT account_id, user_id, transfer_sub FROM gatehouse_apple_transfer_accounts
                WHERE transfer_id = ? AND transfer_sub IS NOT NULL AND account_id > ? ORDER BY account_id LIMIT \(page)
                """, [transfer.id, after])
            guard let last = rows.last?.optionalString("account_id") else { break }
            after = last
            for row in rows {
                guard let user = row.optionalString("user_id"), let sub = row.optionalString("transfer_sub") else { continue }
                if several.contains(user) && !written.insert(user).inserted { continue }
                file.append((users == 0 ? "" : ",") + String(decoding: try encoder.encode(AppleTransferFile.User(userId: user, transferSub: sub)), as: UTF8.self))
                users += 1
            }
            if rows.count < page { break }
        }
        file.append("]}")
        try file.commit()
        try store.audit.append(store.db, actor: actor, action: "apple.transfer.export", subject: transfer.toTeam.rawValue, details: [
            "transfer_id": .int(transfer.id), "users": .int(Int64(users)), "file": .string(path),
        ], at: now)
        return users
    }

    /// Users decoded from an import file at a time.
    static let importBatch = 5_000

    /// Reads a sending team's file into this (the recipient's) store: the transfer is recorded from the file when none
    /// is open, and each user's Apple accounts get a row with the file's transfer identifier, ready for `exchange`.
    public func importFile(_ path: String, actor: Actor, now: Timestamp = .now()) throws -> AppleTransferFile.ImportResult {
        try InputFile.requireRegular(path, what: "the transfer file")
        let exported = "pass the file `gatehouse apple transfer export --out FILE` wrote on the sending team's store, as it wrote it"
        // A refusal that names the file and what is wrong in it.
        func bad(_ problem: String) -> GatehouseError { GatehouseError.invalid("the transfer file \(path): \(problem)", fix: exported) }
        // The size first: a file too large is refused before any of it is read.
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber, size.int64Value > Int64(AppleTransferFile.maxBytes) {
            throw bad("it is \(size.int64Value) bytes, over the \(AppleTransferFile.maxBytes >> 20) MiB an import reads")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else { throw GatehouseError.notFound("cannot read the transfer file \(path)", fix: "check the path") }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: AppleTransferFile.maxBytes + 1)) ?? Data()
        guard data.count <= AppleTransferFile.maxBytes else { throw bad("it is over the \(AppleTransferFile.maxBytes >> 20) MiB an import reads") }
        func notATransferFile(_ error: Error) -> GatehouseError {
            let problem = (error as? AppleTransferFileReader.Malformed).map { ": \($0.problem)" } ?? ""
            return GatehouseError.invalid("\(path) is not a transfer file (JSON with format, fromTeam, toTeam, clientId, transferredAt, users)\(problem)", fix: exported)
        }
        let file: AppleTransferFileReader
        do { file = try AppleTransferFileReader(data) } catch { throw notATransferFile(error) }
        guard file.header.format == AppleTransferFile.format else {
            throw bad("its format is \"\(OperatorText.visible(String(file.header.format.prefix(40))))\"; this Gatehouse reads \(AppleTransferFile.format)")
        }
        func team(_ field: String, _ text: String) throws -> TeamID {
            do { return try TeamID(text) } catch let error as GatehouseError { throw bad("\(field): \(error.message)") }
        }
        let fromTeam = try team("fromTeam", file.header.fromTeam), toTeam = try team("toTeam", file.header.toTeam)
        guard fromTeam != toTeam else { throw bad("its sending and recipient teams (fromTeam, toTeam) are both \(toTeam)") }
        guard let transferredAt = AppleTransfer.date(file.header.transferredAt) else {
            throw bad("transferredAt \"\(OperatorText.visible(String(file.header.transferredAt.prefix(40)), keepLineBreaks: false))\" is not a time")
        }
        let clientID: String
        do { clientID = try ProviderConfiguration.identifier(file.header.clientId, option: "clientId", kind: "client id", empty: false) ?? "" }
        catch let error as GatehouseError { throw bad(error.message) }
        // Every entry is read and checked before anything is written; then read again, batch by batch, to write.
        do {
            try file.batches(of: Self.importBatch) { users in
                for user in users where user.userId.isEmpty || user.userId.count > 255 || user.transferSub.isEmpty || user.transferSub.count > 255
                    || !user.transferSub.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) {
                    throw bad("it holds an entry that is not a user id and a transfer identifier (user \"\(OperatorText.visible(String(user.userId.prefix(40))))\")")
                }
            }
        } catch let error as AppleTransferFileReader.Malformed { throw notATransferFile(error) }
        var transfer = try latest()
        var created = false
        if let open = transfer, open.isOpen(at: now) {
            guard open.fromTeam == fromTeam, open.toTeam == toTeam else {
                throw GatehouseError.conflict("this store's open transfer is from \(open.fromTeam) to \(open.toTeam); the file's is from \(fromTeam) to \(toTeam)",
                                              fix: "import the file of the open transfer, or wait for it to close")
            }
        } else {
            let deadline = transferredAt.adding(seconds: AppleTransfer.window.value)
            guard deadline > now else {
                throw GatehouseError.invalid("the file's transfer (\(transferredAt.iso8601)) closed on \(deadline.iso8601)", fix: "TN3159: transfer the app back and start again")
            }
            let id: Int64 = try store.change(actor: actor, action: "apple.transfer.start", subject: toTeam.rawValue, details: [
                "from_team": .string(fromTeam.rawValue), "to_team": .string(toTeam.rawValue), "client_id": .string(clientID),
                "transferred_at": .string(transferredAt.iso8601), "deadline": .string(deadline.iso8601), "imported_from": .string(path),
            ]) {
                let id = try store.db.nextID(in: "gatehouse_apple_transfers")
                try store.db.execute("""
                    INSERT INTO gatehouse_apple_transfers (id, from_team, to_team, client_id, transferred_at, deadline_at, recipient_elsewhere, imported, started_at, started_by)
                    VALUES (?, ?, ?, ?, ?, ?, 0, 1, ?, ?)
                    """, [id, fromTeam.rawValue, toTeam.rawValue, clientID, transferredAt.iso8601, deadline.iso8601, now.iso8601, actor.name])
                return id
            }
            transfer = try latest()
            created = transfer?.id == id
        }
        guard let transfer else { throw GatehouseError("the transfer just recorded cannot be read back") }
        let account = store.schema.account
        var accounts = 0, without: [String] = [], withoutCount = 0
        let check = AppleTransferCheck(store: store)
        try file.batches(of: Self.importBatch) { batch in for chunk in batch.chunked(by: AppleTransferPlanner.readChunk) {
            let rows = try store.db.rows("""
                SELECT \(account.col(.id)) AS id, \(account.col(.accountId)) AS sub, \(account.col(.userId)) AS user_id FROM \(account.sql)
                WHERE \(account.col(.providerId)) = 'apple' AND \(account.col(.userId)) IN (\(check.marks(chunk.count)))
                """, chunk.map(\.userId))
            var byUser: [String: [(String, String)]] = [:]
            for row in rows {
                guard let id = row.optionalString("id"), let sub = row.optionalString("sub"), let user = row.optionalString("user_id") else { continue }
                byUser[user, default: []].append((id, sub))
            }
            var statements: [SQLStatement] = []
            for user in chunk {
                guard let owned = byUser[user.userId] else {
                    withoutCount += 1
                    if without.count < 100 { without.append(user.userId) }
                    continue
                }
                for (id, sub) in owned {
                    statements.append(SQLStatement("DELETE FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ? AND account_id = ? AND applied_plan IS NULL", [transfer.id, id]))
                    statements.append(SQLStatement("""
                        INSERT INTO gatehouse_apple_transfer_accounts (transfer_id, account_id, user_id, old_sub, transfer_sub, updated_at)
                        SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM gatehouse_apple_transfer_accounts WHERE transfer_id = ? AND account_id = ?)
                        """, [transfer.id, id, user.userId, sub, user.transferSub, now.iso8601, transfer.id, id]))
                    accounts += 1
                }
            }
            if !statements.isEmpty { try store.db.write { _ = try store.db.batch(statements) } }
        } }
        try store.audit.append(store.db, actor: actor, action: "apple.transfer.import", subject: toTeam.rawValue, details: [
            "transfer_id": .int(transfer.id), "users": .int(Int64(file.count)), "accounts": .int(Int64(accounts)),
            "without_account": .int(Int64(withoutCount)), "file": .string(path),
        ], at: now)
        return AppleTransferFile.ImportResult(transferId: transfer.id, created: created, users: file.count, accounts: accounts,
                                              withoutAccount: without, withoutAccountCount: withoutCount)
    }
}

/// A file only its owner reads (mode 0600), written whole or not at all: to a temporary name beside it, then renamed.
public enum PrivateFile {
    /// A file written piece by piece (a plan of a million accounts is never held whole), then `commit`ted in place;
    /// dropped without a commit, nothing is left.
    public final class Stream {
        let path: String
        let temporary: String
        private var fd: Int32
        private var failed = false

        public init(path: String) throws {
            self.path = path
            temporary = path + ".tmp-\(getpid())"
            fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw GatehouseError.invalid("cannot write \(path): \(String(cString: strerror(errno)))", fix: "check the folder exists and is writable") }
            _ = fchmod(fd, 0o600)
        }

        deinit {
            if fd >= 0 { close(fd); unlink(temporary) }
        }

        public func append(_ data: Data) {
            guard !failed else { return }
            data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                    if written <= 0 { failed = true; return }
                    offset += written
                }
            }
        }

        public func append(_ text: String) { append(Data(text.utf8)) }

        public func commit() throws {
            let synced = !failed && fsync(fd) == 0
            close(fd)
            fd = -1
            guard synced, rename(temporary, path) == 0 else {
                unlink(temporary)
                throw GatehouseError.invalid("cannot write \(path): \(String(cString: strerror(errno)))", fix: "check the disk has room and the folder is writable")
            }
        }
    }

    public static func write(_ data: Data, to path: String) throws {
        let temporary = path + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw GatehouseError.invalid("cannot write \(path): \(String(cString: strerror(errno)))", fix: "check the folder exists and is writable") }
        var ok = fchmod(fd, 0o600) == 0
        data.withUnsafeBytes { buffer in
            var offset = 0
            while ok && offset < buffer.count {
                let written = Foundation.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { ok = false } else { offset += written }
            }
        }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw GatehouseError.invalid("cannot write \(path): \(String(cString: strerror(errno)))", fix: "check the disk has room and the folder is writable")
        }
    }
}
