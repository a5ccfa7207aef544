import Gatehouse
import HTTPServer

/// `GET /api/users/:id`'s body written by hand: the console's busiest response, where `JSONEncoder`
/// takes about a sixth of the request's time. The bytes are those `JSONBody.response(detail)` would send
/// (keys sorted, nil optionals left out); `ConsoleUserTests` checks that against `JSONEncoder`.
/// Fast path kept for ops/bench's console row (`GET /api/users/{id}` ≥ 5,000 req/s, p99 < 20 ms).
enum UserDetailJSON {
    static func response(_ detail: UserDetail) -> HTTPResponse {
        var json = JSONWriter(capacity: 2048)
        write(detail, to: &json)
        return HTTPResponse(status: 200, headers: ["Content-Type": "application/json; charset=utf-8"], body: json.bytes)
    }

    static func write(_ detail: UserDetail, to json: inout JSONWriter) {
        json.beginObject()
        json.key("accounts")
        json.beginArray()
        for account in detail.accounts { write(account, to: &json) }
        json.endArray()
        json.key("flags")
        json.beginArray()
        for flag in detail.flags {
            json.beginObject()
            json.field("code", flag.code)
            json.field("message", flag.message)
            json.endObject()
        }
        json.endArray()
        json.key("merges")
        write(detail.merges, to: &json)
        json.key("sessions")
        write(detail.sessions, to: &json)
        json.key("sync")
        write(detail.sync, to: &json)
        json.key("user")
        write(detail.user, to: &json)
        json.endObject()
    }

    private static func write(_ account: AccountRecord, to json: inout JSONWriter) {
        json.beginObject()
        json.field("accessTokenExpiresAt", account.accessTokenExpiresAt?.iso8601)
        json.field("accountId", account.accountId)
        json.field("createdAt", account.createdAt?.iso8601)
        json.field("hasAccessToken", account.hasAccessToken)
        json.field("hasIdToken", account.hasIdToken)
        json.field("hasPassword", account.hasPassword)
        json.field("hasRefreshToken", account.hasRefreshToken)
        json.field("id", account.id)
        json.field("issuer", account.issuer)
        json.field("providerId", account.providerId)
        json.field("refreshTokenExpiresAt", account.refreshTokenExpiresAt?.iso8601)
        json.field("scope", account.scope)
        json.field("updatedAt", account.updatedAt?.iso8601)
        json.endObject()
    }

    private static func write(_ merges: MergeHistory, to json: inout JSONWriter) {
        json.beginObject()
        json.field("available", merges.available)
        json.key("records")
        json.beginArray()
        for record in merges.records {
            json.beginObject()
            json.key("fields")
            json.beginObject()
            for name in record.fields.keys.sorted() {
                json.field(name, record.fields[name])
            }
            json.endObject()
            json.endObject()
        }
        json.endArray()
        json.endObject()
    }

    private static func write(_ sessions: SessionOverview, to json: inout JSONWriter) {
        json.beginObject()
        json.key("latest")
        json.beginArray()
        for session in sessions.latest {
            json.beginObject()
            json.field("createdAt", session.createdAt?.iso8601)
            json.field("expired", session.expired)
            json.field("expiresAt", session.expiresAt?.iso8601)
            json.field("id", session.id)
            json.field("impersonatedBy", session.impersonatedBy)
            json.field("ipAddress", session.ipAddress)
            json.field("updatedAt", session.updatedAt?.iso8601)
            json.field("userAgent", session.userAgent)
            json.endObject()
        }
        json.endArray()
        json.field("total", sessions.total)
        json.field("unexpired", sessions.unexpired)
        json.endObject()
    }

    private static func write(_ sync: SyncRecord, to json: inout JSONWriter) {
        json.beginObject()
        json.field("missingTables", strings: sync.missingTables)
        json.field("provisioned", sync.provisioned)
        json.key("roles")
        json.beginArray()
        for role in sync.roles {
            json.beginObject()
            json.field("grantedAt", role.grantedAt)
            json.field("role", role.role)
            json.endObject()
        }
        json.endArray()
        json.field("sub", sync.sub.rawValue)
        json.key("subscriptions")
        json.beginArray()
        for subscription in sync.subscriptions {
            json.beginObject()
            json.field("currentPeriodEnd", subscription.currentPeriodEnd)
            json.field("id", subscription.id)
            json.field("plan", subscription.plan)
            json.field("status", subscription.status)
            json.endObject()
        }
        json.endArray()
        if let user = sync.user {
            json.key("user")
            json.beginObject()
            json.field("createdAt", user.createdAt)
            json.field("displayName", user.displayName)
            json.field("id", user.id)
            json.field("sub", user.sub.rawValue)
            json.endObject()
        }
        json.key("workspaces")
        json.beginArray()
        for workspace in sync.workspaces {
            json.beginObject()
            json.field("createdAt", workspace.createdAt)
            json.field("id", workspace.id)
            json.field("name", workspace.name)
            json.endObject()
        }
        json.endArray()
        json.endObject()
    }

    private static func write(_ user: UserRecord, to json: inout JSONWriter) {
        json.beginObject()
        if let ban = user.ban {
            json.key("ban")
            json.beginObject()
            json.field("banned", ban.banned)
            json.field("expires", ban.expires?.iso8601)
            json.field("reason", ban.reason)
            json.endObject()
        }
        json.field("createdAt", user.createdAt?.iso8601)
        json.field("email", user.email)
        json.field("emailVerified", user.emailVerified)
        json.field("id", user.id.rawValue)
        json.field("image", user.image)
        json.field("name", user.name)
        json.field("role", user.role)
        json.field("updatedAt", user.updatedAt?.iso8601)
        json.endObject()
    }
}
