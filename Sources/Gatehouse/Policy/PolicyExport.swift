import Foundation

/// The effective policy in the shape the runtime's per-request `createBetterAuth(env)` factory needs.
///
/// `account.accountLinking` is passed to Better Auth as is; its `allowDifferentEmails` is the
/// instance-wide (`autoLink`) value. The runtime replaces it with `linkSocial.allowDifferentEmails`
/// when it builds the instance for a request whose path is one of `linkSocial.appliesTo` (under Better Auth's
/// base path): `POST /link-social`, where the id-token link compares emails (api/routes/account.ts:388
/// `linkSocialAccount`), and `/callback/:providerId`, where a link started by redirect compares them (the link branch of
/// api/routes/callback.ts:299 `callbackOAuth`; the callback has no other way to learn the value, and the state that
/// marks a callback as a link is opaque to the runtime). Applying it to every callback is safe in Better Auth 1.7.1:
/// `allowDifferentEmails` is read in those two places only, never by sign-in or implicit linking. A runtime that
/// applies it to `POST /link-social` alone leaves web users who link by
/// redirect under the `autoLink` value: `?error=email_does_not_match` while it is false.
/// `version` lets the runtime skip rebuilding an unchanged policy; `validUntil` is the next automatic
/// revert, after which a cached copy must be read again.
///
///     {"account":{"accountLinking":{"allowDifferentEmails":false,"allowUnlinkingAll":false,"disableImplicitLinking":false,
///       "enabled":true,"requireLocalEmailVerified":true,"trustedProviders":["google","apple"]}},
///      "generatedAt":"…","linkSocial":{"allowDifferentEmails":true,"appliesTo":["POST /link-social",
///      "GET /callback/:providerId","POST /callback/:providerId"]},"validUntil":"…","version":3}
public struct PolicyExport: Sendable, Codable, Equatable {
    /// Better Auth's `account.accountLinking` options.
    public struct AccountLinking: Sendable, Codable, Equatable {
        public let enabled: Bool
        public let trustedProviders: [String]
        public let disableImplicitLinking: Bool
        public let requireLocalEmailVerified: Bool
        public let allowUnlinkingAll: Bool
        public let allowDifferentEmails: Bool
    }

    /// Better Auth's `account` options (only `accountLinking` is Gatehouse's).
    public struct Account: Sendable, Codable, Equatable {
        public let accountLinking: AccountLinking
    }

    /// The value scoped to the authenticated `linkSocial` call, and the requests the runtime applies it to.
    public struct LinkSocial: Sendable, Codable, Equatable {
        public let allowDifferentEmails: Bool
        /// Method and path (below Better Auth's base path, e.g. `/api/auth`) of every request whose instance takes
        /// `allowDifferentEmails` from here: both places Better Auth 1.7.1 reads it.
        public let appliesTo: [String]
    }

    /// The requests `linkSocial.allowDifferentEmails` applies to (see the type's comment).
    public static let linkSocialRequests = ["POST /link-social", "GET /callback/:providerId", "POST /callback/:providerId"]

    public let version: Int
    public let generatedAt: Timestamp
    /// When a timed value next reverts; absent from the JSON when nothing is timed.
    public let validUntil: Timestamp?
    public let account: Account
    public let linkSocial: LinkSocial
    /// What Google's Cross-Account Protection told about the app's users that sign-in must honour.
    public var security: Security

    /// `security`: the Google accounts Google disabled (their `sub`s): the runtime refuses Google sign-in for them
    /// until Google sends `account-enabled`.
    public struct Security: Sendable, Codable, Equatable {
        public let googleDisabledSubs: [String]
        public init(googleDisabledSubs: [String]) { self.googleDisabledSubs = googleDisabledSubs }
    }

    /// The export of a snapshot.
    public init(snapshot: PolicySnapshot) {
        let policy = snapshot.policy
        version = snapshot.version
        generatedAt = snapshot.at
        validUntil = snapshot.nextRevertAt
        account = Account(accountLinking: AccountLinking(
            enabled: policy.enabled, trustedProviders: policy.trustedProviders, disableImplicitLinking: policy.disableImplicitLinking,
            requireLocalEmailVerified: policy.requireLocalEmailVerified, allowUnlinkingAll: policy.allowUnlinkingAll,
            allowDifferentEmails: policy.autoLinkAllowDifferentEmails))
        linkSocial = LinkSocial(allowDifferentEmails: policy.linkSocialAllowDifferentEmails, appliesTo: Self.linkSocialRequests)
        security = Security(googleDisabledSubs: [])
    }

    /// One line of compact JSON with sorted keys.
    public var compactJSON: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(self)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// The export as environment variables, one `NAME=VALUE` per line, readable by a shell (`set -a; . file`),
    /// a dotenv file and `wrangler secret bulk`-style tooling alike:
    ///
    ///     GATEHOUSE_POLICY_VERSION=3
    ///     GATEHOUSE_POLICY_VALID_UNTIL=2026-11-30T05:00:00.000Z   (empty when nothing is timed)
    ///     GATEHOUSE_POLICY_JSON='{"account":{"accountLinking":{…}},…,"version":3}'
    ///
    /// The JSON is single-quoted: it holds no single quote (provider ids are `[a-z0-9._-]`).
    public var environment: String {
        [
            "GATEHOUSE_POLICY_VERSION=\(version)",
            "GATEHOUSE_POLICY_VALID_UNTIL=\(validUntil?.iso8601 ?? "")",
            "GATEHOUSE_POLICY_JSON='\(compactJSON.replacingOccurrences(of: "'", with: "'\\''"))'",
        ].joined(separator: "\n") + "\n"
    }
}
