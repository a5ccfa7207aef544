import Foundation
import Gatehouse
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// Notices when the store file the console opened is removed or replaced while it runs.
///
/// The console's connections keep the file they opened: after `rm` or `mv other.sqlite auth.sqlite` they
/// would go on acknowledging writes into a file no path leads to any more, lost when the console stops.
/// So the console records the file's device and inode when it opens the store, and compares them with
/// what the path names now (one `stat`) before every request that may write and in `GET /api/health`.
/// While they differ, those requests are answered 503 `store_replaced`; once the same file is back at the
/// path (moved back, or the console restarted), they are served again. The answer names no path (the
/// caller may not be signed in); the console's log names it, once per change.
///
/// The store's `-wal` file is watched the same way. In WAL mode a commit is acknowledged once it is in the `-wal`
/// file; after `rm auth.sqlite-wal` the console's connections go on appending to a file no path leads to (the CLI on
/// the same store then sees a new, empty one), and every write acknowledged since is lost when the console stops.
/// SQLite deletes or recreates the `-wal` only when the last connection to the store closes; checkpoints (even with
/// `journal_size_limit` or `TRUNCATE`) truncate it in place, keeping its inode. The console keeps its connections
/// open, so a `-wal` that is missing or another file while it runs was removed or replaced from outside. Its identity
/// is recorded when the console opens the store (nothing is watched when there is none: a store in another journal
/// mode, or one read as immutable).
///
///     let watch = StoreFileWatch(path: "auth.sqlite")
///     if let error = watch.problem() { return JSONBody.error(error) }
final class StoreFileWatch: Sendable {
    /// A file's identity: the device and inode `stat(2)` reports.
    struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64

        /// The identity of the file at `path` (symbolic links followed), or nil when nothing is there.
        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// The store's path as the console was given it.
    let path: String
    /// The file the console opened.
    let opened: Identity?
    /// The store's `-wal` file as the console's connections opened it; nil when there was none.
    let openedWAL: Identity?
    /// Whether the last check found the file missing or replaced (the log says so once per change).
    private let reportedMissing = Locked(false)

    /// Records the identity of the file at `path` now.
    init(path: String) {
        self.path = path
        opened = Identity(path: path)
        openedWAL = opened == nil ? nil : Identity(path: path + "-wal")
    }

    /// Nil while the path still names the file the console opened (and its `-wal` file the one its connections
    /// write); otherwise the 503 to answer.
    func problem() -> APIError? {
        guard let opened else { return nil }
        let current = Identity(path: path)
        let currentWAL = openedWAL == nil ? nil : Identity(path: path + "-wal")
        let storeMissing = current != opened
        let walMissing = !storeMissing && currentWAL != openedWAL
        let missing = storeMissing || walMissing
        let changed = reportedMissing.withLock { reported -> Bool in
            defer { reported = missing }
            return reported != missing
        }
        let what = storeMissing
            ? "the store file \(current == nil ? "was removed" : "was replaced by another file")"
            : "the store's -wal file (which holds its latest commits) \(currentWAL == nil ? "was removed" : "was replaced by another file")"
        if changed {
            let line = missing
                ? "\(storeMissing ? "the store file \(path)" : "the store's -wal file \(path)-wal") was \((storeMissing ? current : currentWAL) == nil ? "removed" : "replaced by another file") since the console opened it; refusing writes until it is back or the console restarts\n"
                : "the store file \(path) and its -wal file are back; serving writes again\n"
            FileHandle.standardError.write(Data(OperatorText.visible(line).utf8))
        }
        guard missing else { return nil }
        return APIError(status: 503, code: "store_replaced",
                        message: "\(what) since the console opened it; "
                            + "changes are refused so that none is written into a file no path leads to",
                        fix: storeMissing
                            ? "restart the console (gatehouse serve) to open the store that is there now, or put the original file back"
                            : "stop the console and check the store (gatehouse health --deep); changes acknowledged since the -wal file went may be lost; then restart the console (gatehouse serve)")
    }
}
