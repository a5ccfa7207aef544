import Foundation
import Gatehouse

/// A `.p8` uploaded through the console, handed to `AppleKeyRing.importKey(file:)` as the file the
/// ring reads: written with mode 0600 into a fresh 0700 folder (memory-backed `/dev/shm` where the
/// machine has it), named as the admin's file was named, and removed as soon as the import returns.
/// The ring alone validates, seals and records the key; this type only moves bytes.
///
///     let result = try UploadedKeyFile.with(pem: body.pem, fileName: body.fileName) { path in
///         try ring.importKey(file: path, keyID: nil, teamID: nil, actor: actor, now: now)
///     }
enum UploadedKeyFile {
    /// The name used when the upload gives none (or one that is not a plain file name).
    static let fallbackName = "the uploaded key"

    /// Runs `body` with the path of a private file holding `pem`; the file is gone when it returns.
    static func with<T>(pem: String, fileName: String?, _ body: (String) throws -> T) throws -> T {
        let parent = FileManager.default.isWritableFile(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let folder = (parent as NSString).appendingPathComponent("gatehouse-upload-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw APIError(status: 500, code: "internal", message: "the console could not stage the uploaded key for import")
        }
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = (folder as NSString).appendingPathComponent(safeName(fileName))
        guard FileManager.default.createFile(atPath: path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw APIError(status: 500, code: "internal", message: "the console could not stage the uploaded key for import")
        }
        return try body(path)
    }

    /// The last path component of `fileName` when it is a plain name of at most 100 safe characters.
    static func safeName(_ fileName: String?) -> String {
        guard let name = fileName?.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init),
              !name.hasPrefix("."), (1...100).contains(name.utf8.count),
              name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._- ".unicodeScalars.contains($0)) })
        else { return fallbackName }
        return name
    }
}
