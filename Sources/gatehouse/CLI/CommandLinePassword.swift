import Foundation

/// Hides a password given on the command line (`--store postgresql://ops:s3cret@db/auth`) from other users.
///
/// `ps` and `/proc/PID/cmdline` read a process's arguments from its own memory, where they stay for as long as it
/// runs — for `gatehouse serve`, weeks. The parser has its own copies, so the password's bytes in `argv` are
/// overwritten with `*` as soon as the command line is parsed: from then on `ps` shows
/// `postgresql://ops:******@db/auth`. Until then (a few milliseconds) anyone may have read it, which is why a
/// warning recommends `GATEHOUSE_STORE` or `--store-file` instead.
///
///     if CommandLinePassword.hide() { output.error("gatehouse: warning: …") }
enum CommandLinePassword {
    /// Overwrites the password of every `postgres://` / `postgresql://` URI among the process's arguments (alone or
    /// as `--store=URI`) with `*` in place; returns whether there was one.
    static func hide() -> Bool {
        var found = false
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let length = strlen(argument)
            let bytes = UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: length)
            guard let range = passwordRange(in: Array(bytes)) else { continue }
            for offset in range { bytes[offset] = UInt8(ascii: "*") }
            found = true
        }
        return found
    }

    /// Where the password of a URI argument lies (between `user:` and `@` in the authority), or nil.
    static func passwordRange(in argument: [UInt8]) -> Range<Int>? {
        var start = 0
        let option = Array("--store=".utf8)
        if argument.starts(with: option) { start = option.count }
        let text = argument[start...]
        guard let scheme = ["postgresql://", "postgres://"].map({ Array($0.utf8) }).first(where: { scheme in
            text.count >= scheme.count && zip(text.prefix(scheme.count), scheme).allSatisfy { $0 | 0x20 == $1 | 0x20 }
        }) else { return nil }
        let authorityStart = start + scheme.count
        let authorityEnd = argument[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? argument.count
        guard let at = argument[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")),
              let colon = argument[authorityStart..<at].firstIndex(of: UInt8(ascii: ":")), colon + 1 < at else { return nil }
        return (colon + 1)..<at
    }
}
