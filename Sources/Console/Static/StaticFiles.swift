import EmbeddedResources
import Foundation
import Gatehouse
import HTTPServer

/// The console's static files, read once at start-up from `Public/` (or the binary's own copy of it) into memory.
/// Requests are served from this allowlist by exact path: a request path is never joined onto the disk.
struct StaticFiles: Sendable {
    struct File: Sendable {
        let contentType: String
        let body: [UInt8]
    }

    private let files: [String: File]

    static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "ico": "image/x-icon", "json": "application/json", "txt": "text/plain; charset=utf-8",
    ]

    /// Loads regular files with known types under `directory` (no dotfiles, no symlinks out of it), or, for
    /// `(embedded)/Public` (`ResourceLocator.publicDirectory()` when no folder is found), the binary's own copies.
    init(directory: String) throws {
        var files: [String: File] = [:]
        if let folder = ResourceLocator.embeddedFolder(directory) {
            for (relative, file) in EmbeddedResources.files(under: folder) {
                let name = relative.split(separator: "/").last.map(String.init) ?? relative
                guard !relative.split(separator: "/").contains(where: { $0.hasPrefix(".") }),
                      let dot = name.lastIndex(of: "."), let type = Self.types[name[name.index(after: dot)...].lowercased()] else { continue }
                files["/" + relative] = File(contentType: type, body: file.bytes)
            }
            guard !files.isEmpty else { throw CocoaError(.fileReadNoSuchFile) }
            if let index = files["/index.html"] { files["/"] = index }
            self.files = files
            return
        }
        let root = URL(fileURLWithPath: directory).standardizedFileURL.resolvingSymlinksInPath()
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey, .isSymbolicLinkKey],
                                                              options: [.skipsHiddenFiles]) else { throw CocoaError(.fileReadNoSuchFile) }
        for case let url as URL in enumerator {
            let values = try url.resourceValues(forKeys: [.isRegularFileKey, .isSymbolicLinkKey])
            guard values.isRegularFile == true, values.isSymbolicLink != true,
                  let type = Self.types[url.pathExtension.lowercased()] else { continue }
            let relative = url.standardizedFileURL.path.dropFirst(root.path.count)
            guard relative.hasPrefix("/") else { continue }
            files[String(relative)] = File(contentType: type, body: Array(try Data(contentsOf: url)))
        }
        if let index = files["/index.html"] { files["/"] = index }
        self.files = files
    }

    /// The file for an exact request path.
    func file(for path: String) -> File? { files[path] }

    /// Every served path, for tests.
    var paths: [String] { files.keys.sorted() }
}
