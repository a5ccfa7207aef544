import Foundation

/// What `users duplicates` keeps of an email address: 64-bit keys of its mailbox and domain, and whether it
/// is a private-relay address. The same answers as `EmailAddress`, without its strings: an all-ASCII address
/// (nearly every one) is lowercased and hashed byte by byte; anything else goes through `EmailAddress`.
///
///     let keys = EmailKeys("Ana.Costa+news@Gmail.com")   // mailbox "ana.costa", domain "gmail.com"
struct EmailKeys: Equatable {
    /// Key of the mailbox (`EmailAddress.mailbox`); 0 when the address is not usable as evidence.
    let mailbox: UInt64
    /// Key of the domain; 0 when the address is not usable as evidence.
    let domain: UInt64
    let isPrivateRelay: Bool

    /// A mailbox shorter than this (`a@`, `jo@`) says little about who owns it.
    static let minimumMailboxBytes = 3

    init(_ text: String) {
        if let keys = Self.ascii(text) { self = keys; return }
        let address = EmailAddress(text)
        self.init(address: address)
    }

    /// For a non-ASCII address only (nil otherwise): the key of the whole address, JavaScript-lowercased, in Unicode
    /// normal form C, and the key of its exact code units. Two users with the same `lookalike` and different `exact`
    /// keys have emails a person reads as one (`é` composed and decomposed) and Better Auth takes for two.
    static func lookalikeKeys(_ text: String) -> (lookalike: UInt64, exact: UInt64)? {
        guard !text.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let lowered = JavaScriptString.toLowerCase(text)
        return (FNV1a.hash(lowered.precomposedStringWithCanonicalMapping), FNV1a.hash(lowered))
    }

    init(address: EmailAddress) {
        isPrivateRelay = address.isPrivateRelay
        let usable = address.isPresent && !address.isPrivateRelay && address.mailbox.utf8.count >= Self.minimumMailboxBytes
        mailbox = usable ? FNV1a.hash(address.mailbox) : 0
        domain = usable ? FNV1a.hash(address.domain) : 0
    }

    private init(mailbox: UInt64, domain: UInt64, isPrivateRelay: Bool) {
        self.mailbox = mailbox
        self.domain = domain
        self.isPrivateRelay = isPrivateRelay
    }

    private static let relayDomains: [[UInt8]] = EmailAddress.relayDomains.map { Array($0.utf8) }

    /// The keys of an all-ASCII address; nil when it has a non-ASCII byte.
    static func ascii(_ text: String) -> EmailKeys? {
        var text = text
        return text.withUTF8 { utf8 -> EmailKeys? in
            var at = -1
            for (offset, byte) in utf8.enumerated() {
                if byte >= 0x80 { return nil }
                if byte == UInt8(ascii: "@") { at = offset }
            }
            @inline(__always) func lower(_ byte: UInt8) -> UInt8 {
                byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            }
            guard at >= 0 else { return EmailKeys(mailbox: 0, domain: 0, isPrivateRelay: false) }
            let local = UnsafeBufferPointer(rebasing: utf8[..<at]), domain = UnsafeBufferPointer(rebasing: utf8[(at + 1)...])
            let relay = relayDomains.contains { relay in
                relay.count == domain.count && zip(relay, domain).allSatisfy { $0 == lower($1) }
            }
            var mailboxEnd = local.count
            if let plus = local.firstIndex(of: UInt8(ascii: "+")), plus != 0 { mailboxEnd = plus }
            guard !local.isEmpty, !domain.isEmpty, !relay, mailboxEnd >= minimumMailboxBytes else {
                return EmailKeys(mailbox: 0, domain: 0, isPrivateRelay: relay)
            }
            return EmailKeys(mailbox: FNV1a.hash(local[..<mailboxEnd].lazy.map(lower)), domain: FNV1a.hash(domain.lazy.map(lower)),
                             isPrivateRelay: false)
        }
    }
}
