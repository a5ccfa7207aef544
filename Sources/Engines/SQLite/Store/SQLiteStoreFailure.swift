import Gatehouse
import Storage

/// SQLite's failures in an operator's words (`StoreEngineFailure`): the words never include bound values or SQL, and
/// SQLite's own message is kept only where it names what is wrong with the file.
extension DatabaseError: StoreEngineFailure {
    public func gatehouseError(storePath: String?) -> GatehouseError { GatehouseError(storeFailure: self, storePath: storePath) }
}

extension GatehouseError {
    /// Describes a storage failure on the store at `storePath` (the path the error carries wins).
    public init(storeFailure error: DatabaseError, storePath: String? = nil) {
        let path = error.path ?? storePath ?? "the store"
        if error.isReadOnly && SQLDumpStoreEngine.claims(path) {
            // An offline copy (`SQLDumpStoreEngine`), loaded into memory read-only.
            self.init("the store \(path) is an offline copy (a SQL dump): it is read-only, and nothing was changed",
                      fix: "run write commands against the database itself (d1://ACCOUNT_ID/DATABASE_ID)", code: .readOnly)
        } else if error.isBusy {
            self.init("the store \(path) stayed locked by another process for \(Store.busyTimeout / 1000) s (SQLite code \(error.extendedCode))",
                      fix: "retry; if it persists, find the process holding it with `fuser \(path)`", code: .busy)
        } else if error.isReadOnly {
            self.init("the store \(path) is read-only for this user (the file, its -wal/-shm files, or its folder)",
                      fix: "run as the store's owner, or make the file and its folder writable", code: .readOnly)
        } else if error.isCorruption {
            self.init("\(path) is not a SQLite database, or it is damaged (\(error.message))",
                      fix: "check the path; restore the store from a backup if it was damaged", code: .notADatabase)
        } else if error.isDiskFull {
            self.init("the disk holding \(path) is full", fix: "free space and retry; nothing was written", code: .diskFull)
        } else if error.isCannotOpen {
            self.init("cannot open the store \(path) (\(error.message))", fix: "check the path and the folder's permissions", code: .cannotOpen)
        } else {
            self.init("the store \(path) answered: \(error.message) (SQLite code \(error.extendedCode))", code: .storeError)
        }
    }
}
