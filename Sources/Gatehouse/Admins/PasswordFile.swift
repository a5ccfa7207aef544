import Foundation

/// Reads an admin password from a file (or standard input for `-`): the first line, without its line
/// end. Errors name the file, never its contents.
public enum PasswordFile {
    /// The password in `path`, checked like any new admin password.
    public static func read(_ path: String, option: String) throws -> AdminPassword {
        let data: Data
        if path == "-" {
            data = FileHandle.standardInput.readDataToEndOfFile()
        } else {
            try InputFile.requireRegular(path, what: option)
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw GatehouseError.notFound("cannot read \(option) \(path)", fix: "check the path and that this user can read it")
            }
            data = contents
        }
        guard data.count <= 64 * 1024, let text = String(data: data, encoding: .utf8) else {
            throw GatehouseError.invalid("\(option) \(path) is not a UTF-8 text file holding a password")
        }
        var line = Substring(text)
        if let end = line.firstIndex(where: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) { line = line[..<end] }
        guard !line.isEmpty else {
            throw GatehouseError.invalid("\(option) \(path) is empty", fix: "put the password alone on the first line")
        }
        do {
            return try AdminPassword(String(line))
        } catch let error as GatehouseError {
            throw GatehouseError.invalid("\(option) \(path): \(error.message)", fix: error.fix)
        }
    }
}
