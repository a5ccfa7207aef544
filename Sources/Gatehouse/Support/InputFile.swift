#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files an operator names: the store, a `.p8`, a password file, a JWKS document, `gatehouse.json`, the master key.
///
/// Each must be a regular file. A FIFO blocks the first read until some other process writes to it (forever, in a
/// timer's run); a character device such as `/dev/zero` or `/dev/urandom` never ends; a socket cannot be read at all.
///
///     try InputFile.requireRegular("/tmp/fifo", what: "the key file")   // throws: "… is a FIFO (named pipe) …"
public enum InputFile {
    /// Throws when something exists at `path` (links followed) that is not a regular file or a folder (folders
    /// have messages of their own at each caller). A missing path passes: callers say how to create it.
    public static func requireRegular(_ path: String, what: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        let kind: String
        switch info.st_mode & S_IFMT {
        case S_IFREG, S_IFDIR: return
        case S_IFIFO: kind = "a FIFO (named pipe)"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        throw GatehouseError.invalid("\(what) \(path) is \(kind), not a file; Gatehouse reads only regular files",
                                     fix: "save the content to a file first and pass that file's path")
    }
}
