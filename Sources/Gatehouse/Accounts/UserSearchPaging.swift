import Foundation
import Storage

/// The order a user search pages through its results in; each ends with the user id, so the order is total and a
/// page boundary is one point in it (`UserSearchCursor`).
public enum UserSort: String, Sendable, Codable, CaseIterable {
    /// Name in byte order (A before a), then id.
    case name
    /// Email in byte order (every email is unique).
    case email
    /// Newest user first.
    case created
    /// Most recent session first; users who never signed in last.
    case lastSignIn
    /// An email search's default: addresses that start with the query first, then the ones holding it further in, each
    /// part in email order. The first page of a search for the start of an address is one index range.
    case match

    /// Whether the order runs from the largest key down.
    var descending: Bool { self == .created || self == .lastSignIn }
    /// Whether the key is a time.
    var byDate: Bool { self == .created || self == .lastSignIn }
}

/// A fact a search can be narrowed to.
public enum UserSearchFlag: String, Sendable, Codable, CaseIterable {
    /// Another user has the same name and a provider this one lacks: one person split across two users.
    case splitIdentity
    /// Google's Cross-Account Protection says a Google account of the user is disabled.
    case googleDisabled
    /// Apple asked for the account's deletion and the request is still open.
    case deletionPending
    /// The email is an Apple private-relay address (`EmailAddress.relayDomains`).
    case relay
}

/// What a search is narrowed to besides its query; every filter given must hold.
public struct UserSearchFilters: Sendable, Equatable {
    /// A provider id (`apple`, `google`, `credential`, …): the user has an account of it.
    public var provider: String?
    public var flags: [UserSearchFlag]
    /// Created at or after this time.
    public var createdAfter: Timestamp?
    /// Created before this time.
    public var createdBefore: Timestamp?

    public init(provider: String? = nil, flags: [UserSearchFlag] = [], createdAfter: Timestamp? = nil, createdBefore: Timestamp? = nil) {
        self.provider = provider
        self.flags = flags
        self.createdAfter = createdAfter
        self.createdBefore = createdBefore
    }

    public var isEmpty: Bool { provider == nil && flags.isEmpty && createdAfter == nil && createdBefore == nil }

    /// A provider id as an operator types it, or an error naming `what`: letters, digits, `-` and `_`, at most 64.
    public static func provider(_ text: String, what: String = "the provider") throws -> String {
        let ok = !text.isEmpty && text.utf8.count <= 64
            && text.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_") }
        guard ok else {
            throw GatehouseError.invalid("\(what) \(UserQuery.display(text)) is not a provider id",
                                         fix: "give a provider id as Better Auth stores it: apple, google, credential, …")
        }
        return text
    }

    /// A creation bound as an operator types it (`2026-11-01` or `2026-11-01T12:00:00Z`), or an error naming `what`.
    public static func date(_ text: String, what: String) throws -> Timestamp {
        guard let time = Timestamp(iso8601: text) else {
            throw GatehouseError.invalid("\(what) \(UserQuery.display(text)) is not an ISO date", fix: "write it as 2026-11-01 or 2026-11-01T12:00:00Z")
        }
        return time
    }
}

/// Where a page of a search ended: the last user's sort key and id, for the next page to start after. Opaque to
/// callers (base64url of a small JSON object); a cursor that does not decode, or was made for another order, is
/// refused with a message, never followed.
struct UserSearchCursor: Equatable {
    let sort: UserSort
    /// The last user's sort key: text for a name or an email, epoch milliseconds for a time (null for a user who
    /// never signed in).
    let key: SQLValue
    let id: String
    /// In the `match` order, whether the last user held the query further in (the second part) rather than at the start.
    var further = false

    /// The longest cursor accepted, in characters.
    static let maxLength = 2048

    /// The JSON inside a cursor.
    private struct Wire: Codable {
        let s: String
        let i: String
        let k: Key
        var f: Bool? = nil
    }

    private enum Key: Codable {
        case integer(Int64), real(Double), text(String), null

        init(from decoder: Decoder) throws {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() { self = .null }
            else if let number = try? value.decode(Int64.self) { self = .integer(number) }
            else if let number = try? value.decode(Double.self) { self = .real(number) }
            else { self = .text(try value.decode(String.self)) }
        }

        func encode(to encoder: Encoder) throws {
            var value = encoder.singleValueContainer()
            switch self {
            case .integer(let number): try value.encode(number)
            case .real(let number): try value.encode(number)
            case .text(let text): try value.encode(text)
            case .null: try value.encodeNil()
            }
        }
    }

    var encoded: String {
        let k: Key = switch key {
        case .integer(let value): .integer(value)
        case .real(let value): .real(value)
        case .text(let value): .text(value)
        case .null, .blob: .null
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys // one cursor for one place, whatever the engine or the run
        let data = (try? encoder.encode(Wire(s: sort.rawValue, i: id, k: k, f: further ? true : nil))) ?? Data()
        return data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    init(sort: UserSort, key: SQLValue, id: String, further: Bool = false) {
        self.sort = sort
        self.key = key
        self.id = id
        self.further = further
    }

    /// The cursor in `text`, made for `sort`; throws `invalid` for anything else.
    init(_ text: String, sort: UserSort) throws {
        func refuse(_ why: String) -> GatehouseError {
            GatehouseError.invalid("the cursor \(UserQuery.display(text)) \(why)",
                                   fix: "pass the nextCursor (or the --after value) of the previous page unchanged, with the same sort")
        }
        guard text.count <= Self.maxLength else { throw refuse("is too long") }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let wire = try? JSONDecoder().decode(Wire.self, from: data),
              !wire.i.isEmpty, wire.i.utf8.count <= 512, let made = UserSort(rawValue: wire.s) else {
            throw refuse("is not one this search gave")
        }
        guard made == sort else { throw refuse("was made for sort \(made.rawValue), not \(sort.rawValue)") }
        let key: SQLValue
        switch wire.k {
        // Dates travel as epoch milliseconds (bound back in the column's own encoding), names and emails as text.
        case .integer(let value) where sort.byDate: key = .integer(value)
        case .text(let value) where !sort.byDate && value.utf8.count <= 1024: key = .text(value)
        case .null where sort == .lastSignIn: key = .null
        default: throw refuse("is not one this search gave")
        }
        let id = wire.i
        guard wire.f == nil || sort == .match else { throw refuse("is not one this search gave") }
        self.init(sort: sort, key: key, id: id, further: wire.f == true)
    }
}
