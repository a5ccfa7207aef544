import Foundation
import Gatehouse

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
    /// Overwrites the password of every store URI among the process's arguments (alone or as `--store=URI`; where
    /// it lies, each registered engine says: `StoreEngine.passwordRange`) with `*` in place; returns whether there was one.
    static func hide() -> Bool {
        var found = false
        for index in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[index] else { continue }
            let length = strlen(argument)
            let bytes = UnsafeMutableBufferPointer(start: UnsafeMutableRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: length)
            let text = Array(bytes)
            guard let range = StoreEngines.all.lazy.compactMap({ $0.passwordRange(inArgument: text) }).first else { continue }
            for offset in range { bytes[offset] = UInt8(ascii: "*") }
            found = true
        }
        return found
    }
}
