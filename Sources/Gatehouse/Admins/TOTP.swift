import Foundation
import JOSE

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP) as every authenticator app computes them by default:
/// HMAC-SHA-1, 6 digits, 30-second steps counted from the Unix epoch. A code is accepted for the current step and one
/// step either side (a clock off by up to 30 s, or a code typed as it changed), and each step at most once: the caller
/// keeps the last step it accepted and passes it back (`after`).
///
///     let totp = TOTP(secret: secretBytes)
///     if let step = totp.match("123456", at: .now(), after: lastStep) { lastStep = step }
public struct TOTP: Sendable {
    /// The shared secret (20 random bytes when Gatehouse makes one, as RFC 4226 recommends for SHA-1).
    let secret: [UInt8]
    public static let digits = 6
    public static let period: Int64 = 30
    /// Steps accepted on either side of the current one.
    public static let window: Int64 = 1
    /// The secret's length when Gatehouse makes one: 160 bits.
    public static let secretLength = 20

    public init(secret: [UInt8]) { self.secret = secret }

    /// The time step `time` falls in.
    public static func step(at time: Timestamp) -> Int64 {
        let seconds = time.milliseconds >= 0 ? time.milliseconds / 1000 : (time.milliseconds - 999) / 1000
        return seconds >= 0 ? seconds / period : (seconds - period + 1) / period
    }

    /// The code of time step `step` (RFC 4226 §5.3: dynamic truncation, then the low `digits` decimal digits).
    public func code(step: Int64) -> String {
        var counter = [UInt8](repeating: 0, count: 8)
        var value = UInt64(bitPattern: step)
        for index in (0..<8).reversed() {
            counter[index] = UInt8(value & 0xff)
            value >>= 8
        }
        let mac = HMAC.sha1(key: secret, data: counter)
        let offset = Int(mac[19] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let text = String(binary % 1_000_000)
        return String(repeating: "0", count: Self.digits - text.count) + text
    }

    /// The code shown at `time`.
    public func code(at time: Timestamp) -> String { code(step: Self.step(at: time)) }

    /// The step within ±`window` of `time` whose code `presented` is, if it is later than `after` (a step already
    /// accepted is never accepted again); nil otherwise. Each candidate is compared in constant time.
    public func match(_ presented: String, at time: Timestamp, after: Int64?) -> Int64? {
        let typed = presented.filter { !$0.isWhitespace }
        guard typed.utf8.count == Self.digits, typed.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let now = Self.step(at: time)
        var found: Int64?
        for step in (now - Self.window)...(now + Self.window) {
            // Every candidate is computed and compared, so the time taken does not tell which step matched.
            if constantTimeEquals(code(step: step), typed), found == nil, step > (after ?? Int64.min) { found = step }
        }
        return found
    }

    /// The `otpauth://totp/` URI an authenticator app scans (Google Authenticator's Key Uri Format): the label
    /// `issuer:account`, the secret in base32, and the parameters spelled out even where they are the defaults.
    public static func uri(secret: [UInt8], issuer: String, account: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        func escape(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: allowed) ?? "" }
        return "otpauth://totp/\(escape(issuer)):\(escape(account))?secret=\(Base32.encode(secret))&issuer=\(escape(issuer))"
            + "&algorithm=SHA1&digits=\(digits)&period=\(period)"
    }
}
