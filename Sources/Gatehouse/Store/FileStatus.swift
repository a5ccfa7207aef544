#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat(2)` says about a path: whether it exists, is a directory, and its size.
///
///     if let status = FileStatus(path), status.isDirectory { … }
///
/// Opening the store asks this of a few paths at every start. Foundation's `FileManager.attributesOfItem`
/// also resolves the owner's and group's names (reading /etc/passwd and /etc/group through NSS) and
/// builds a dictionary of them; a `stat` is all these checks need.
package struct FileStatus {
    /// Whether the path is a directory (symbolic links followed).
    package let isDirectory: Bool
    /// The size in bytes.
    package let size: Int64

    /// The status of `path`, or nil when it does not exist (or cannot be looked at).
    package init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
        size = Int64(info.st_size)
    }

    /// Whether something exists at `path`.
    static func exists(_ path: String) -> Bool { FileStatus(path) != nil }

    /// Whether `path` lies on a filesystem mounted read-only.
    package static func isOnReadOnlyFilesystem(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// Whether this process may read `path`.
    package static func isReadable(_ path: String) -> Bool { access(path, R_OK) == 0 }

    /// The folder holding `path`, made absolute against the current directory: `/srv/gh/auth.sqlite` → `/srv/gh`.
    static func directory(of path: String) -> String {
        var absolute = path
        if !path.hasPrefix("/") {
            var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            if getcwd(&buffer, buffer.count) != nil {
                let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                absolute = (cwd == "/" ? "" : cwd) + "/" + path
            }
        }
        while absolute.count > 1 && absolute.hasSuffix("/") { absolute.removeLast() }
        guard let slash = absolute.lastIndex(of: "/") else { return "." }
        return slash == absolute.startIndex ? "/" : String(absolute[..<slash])
    }
}
