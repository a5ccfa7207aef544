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
///     let watch = StoreFileWatch(path: "auth.sqlite")
///     if let error = watch.problem() { return JSONBody.error(error) }
final class StoreFileWatch: @unchecked Sendable {
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
    /// Whether the last check found the file missing or replaced (the log says so once per change).
    private let reportedMissing = Locked(false)

    /// Records the identity of the file at `path` now.
    init(path: String) {
        self.path = path
        opened = Identity(path: path)
    }

    /// Nil while the path still names the file the console opened; otherwise the 503 to answer.
    func problem() -> APIError? {
        guard let opened else { return nil }
        let current = Identity(path: path)
        let missing = current != opened
        let changed = reportedMissing.withLock { reported -> Bool in
            defer { reported = missing }
            return reported != missing
        }
        if changed {
            let line = missing
                ? "the store file \(path) was \(current == nil ? "removed" : "replaced by another file") since the console opened it; refusing writes until it is back or the console restarts\n"
                : "the store file \(path) is back; serving writes again\n"
            FileHandle.standardError.write(Data(OperatorText.visible(line).utf8))
        }
        guard missing else { return nil }
        return APIError(status: 503, code: "store_replaced",
                        message: "the store file \(current == nil ? "was removed" : "was replaced by another file") since the console opened it; "
                            + "changes are refused so that none is written into a file no path leads to",
                        fix: "restart the console (gatehouse serve) to open the store that is there now, or put the original file back")
    }
}
