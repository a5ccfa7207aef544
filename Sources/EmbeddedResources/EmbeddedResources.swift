import Foundation

/// The files of `migrations/` and `Public/`, compiled into the binary by EmbedResourcesPlugin, so that one copied
/// binary is a working install. Paths keep their folder: `migrations/sqlite/0001_better_auth_core.sql`,
/// `Public/index.html`.
///
/// Text files are `StaticString`s in the binary's read-only data: nothing is decoded or copied until a file is
/// read, and a command that needs none of them (`--version`) never touches the table.
public enum EmbeddedResources {
    /// Every embedded file, sorted by path.
    public static var files: [EmbeddedFile] { generated }

    /// The files directly or indirectly under `folder` (`"migrations/sqlite"`), with paths relative to it.
    public static func files(under folder: String) -> [(relativePath: String, file: EmbeddedFile)] {
        let prefix = folder.hasSuffix("/") ? folder : folder + "/"
        return generated.compactMap { file in
            file.path.hasPrefix(prefix) ? (String(file.path.dropFirst(prefix.count)), file) : nil
        }
    }
}

/// One embedded file.
public struct EmbeddedFile: Sendable {
    /// Its path in the source tree, from the package's folder: `Public/js/app.js`.
    public let path: String
    private let content: Content

    private enum Content: Sendable {
        /// The file's UTF-8 bytes, exactly.
        case text(StaticString)
        /// A file that is not UTF-8 text.
        case base64(StaticString)
    }

    init(path: String, text: StaticString) { self.path = path; content = .text(text) }
    init(path: String, base64: StaticString) { self.path = path; content = .base64(base64) }

    /// The file's bytes, identical to the file's when it was built.
    public var bytes: [UInt8] {
        switch content {
        case .text(let text):
            return text.withUTF8Buffer { Array($0) }
        case .base64(let encoded):
            let text = encoded.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
            return Array(Data(base64Encoded: text) ?? Data())
        }
    }
}

/// How the binary was built; the fields are generated (`BuildInfo.swift` in the plugin's output).
public enum BuildInfo {}
