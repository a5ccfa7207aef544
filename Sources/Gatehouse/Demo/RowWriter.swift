import Storage

/// Writes demo rows into Better Auth's and the sync server's tables through prepared statements,
/// in the column names and date encodings this database uses.
final class RowWriter {
    private let store: Store
    private let userInsert: Statement
    private let accountInsert: Statement
    private let sessionInsert: Statement
    private let syncInsert: Statement
    private let workspaceInsert: Statement
    private let subscriptionInsert: Statement
    private let roleInsert: Statement
    private let verificationInsert: Statement?
    private let userFields: [String]
    private let accountFields: [String]
    private let sessionFields: [String]
    private let verificationFields: [String]

    init(store: Store) throws {
        self.store = store
        let s = store.schema
        func insert(_ table: AuthSchema.Table, _ fields: [String]) throws -> Statement {
            let columns = fields.map(table.col).joined(separator: ", ")
            let marks = Array(repeating: "?", count: fields.count).joined(separator: ", ")
            return try store.db.statement("INSERT INTO \(table.sql) (\(columns)) VALUES (\(marks))")
        }
        userFields = ["id", "name", "email", "emailVerified", "image", "createdAt", "updatedAt"].filter(s.user.has)
        accountFields = ["id", "issuer", "accountId", "providerId", "userId", "accessToken", "refreshToken", "idToken",
                         "accessTokenExpiresAt", "scope", "password", "createdAt", "updatedAt"].filter(s.account.has)
        sessionFields = ["id", "expiresAt", "token", "createdAt", "updatedAt", "ipAddress", "userAgent", "userId"].filter(s.session.has)
        userInsert = try insert(s.user, userFields)
        accountInsert = try insert(s.account, accountFields)
        sessionInsert = try insert(s.session, sessionFields)
        if let verification = s.verification {
            verificationFields = ["id", "identifier", "value", "expiresAt", "createdAt", "updatedAt"].filter(verification.has)
            verificationInsert = try insert(verification, verificationFields)
        } else {
            verificationFields = []
            verificationInsert = nil
        }
        syncInsert = try store.db.statement("INSERT INTO users (sub, display_name, created_at) VALUES (?, ?, ?)")
        workspaceInsert = try store.db.statement("INSERT INTO workspaces (id, owner_id, name, created_at) VALUES (?, ?, ?, ?)")
        subscriptionInsert = try store.db.statement("INSERT INTO subscriptions (id, user_id, plan, status, current_period_end, created_at) VALUES (?, ?, ?, ?, ?, ?)")
        roleInsert = try store.db.statement("INSERT OR IGNORE INTO allow_list (sub, role, granted_at) VALUES (?, ?, ?)")
    }

    private func run(_ statement: Statement, _ values: [SQLValue]) throws {
        try statement.bind(values)
        _ = try statement.step()
        statement.reset()
    }

    func user(name: String, email: String, verified: Bool, created: Timestamp, random: inout DemoRandom) throws -> String {
        let id = random.alphanumeric(32)
        let table = store.schema.user
        let values: [String: SQLValue] = [
            "id": .text(id), "name": .text(name), "email": .text(email.lowercased()), "emailVerified": .integer(verified ? 1 : 0),
            "image": .null, "createdAt": table.encoding("createdAt").encode(created), "updatedAt": table.encoding("updatedAt").encode(created),
        ]
        try run(userInsert, userFields.map { values[$0] ?? .null })
        return id
    }

    func account(user: String, provider: String, created: Timestamp, random: inout DemoRandom) throws {
        let table = store.schema.account
        let accountID: String
        var values: [String: SQLValue] = [:]
        switch provider {
        case "apple":
            accountID = "00\(random.decimal(4)).\(random.hex(32)).\(random.decimal(4))"
            values["scope"] = .text("email name")
            values["idToken"] = .text("demo-id-token-" + random.alphanumeric(24))
        case "google":
            accountID = "1" + random.decimal(20)
            values["scope"] = .text("openid https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile")
            values["accessToken"] = .text("demo-access-token-" + random.alphanumeric(24))
            values["idToken"] = .text("demo-id-token-" + random.alphanumeric(24))
            values["accessTokenExpiresAt"] = table.encoding("accessTokenExpiresAt").encode(created.adding(seconds: 3600))
        default:
            accountID = user
            // Better Auth's scrypt format, salt:key in hex; random, so it matches no password.
            values["password"] = .text(random.hex(32) + ":" + random.hex(128))
        }
        values["id"] = .text(random.alphanumeric(32))
        values["issuer"] = .text(Issuer.forProvider(provider))
        values["accountId"] = .text(accountID)
        values["providerId"] = .text(provider)
        values["userId"] = .text(user)
        values["createdAt"] = table.encoding("createdAt").encode(created)
        values["updatedAt"] = table.encoding("updatedAt").encode(created)
        try run(accountInsert, accountFields.map { values[$0] ?? .null })
    }

    func session(user: String, created: Timestamp, expires: Timestamp, ip: String, agent: String, random: inout DemoRandom) throws {
        let table = store.schema.session
        let values: [String: SQLValue] = [
            "id": .text(random.alphanumeric(32)), "expiresAt": table.encoding("expiresAt").encode(expires), "token": .text(random.alphanumeric(32)),
            "createdAt": table.encoding("createdAt").encode(created), "updatedAt": table.encoding("updatedAt").encode(created),
            "ipAddress": .text(ip), "userAgent": .text(agent), "userId": .text(user),
        ]
        try run(sessionInsert, sessionFields.map { values[$0] ?? .null })
    }

    func verification(identifier: String, created: Timestamp, random: inout DemoRandom) throws -> Bool {
        guard let statement = verificationInsert, let table = store.schema.verification else { return false }
        let values: [String: SQLValue] = [
            "id": .text(random.alphanumeric(32)), "identifier": .text(identifier + ":" + random.alphanumeric(12)),
            "value": .text(random.alphanumeric(32)), "expiresAt": table.encoding("expiresAt").encode(created.adding(seconds: 3600)),
            "createdAt": table.encoding("createdAt").encode(created), "updatedAt": table.encoding("updatedAt").encode(created),
        ]
        try run(statement, verificationFields.map { values[$0] ?? .null })
        return true
    }

    func syncUser(sub: String, created: Timestamp) throws -> Int64 {
        try run(syncInsert, [.text(sub), .null, .text(created.iso8601)])
        return store.db.lastInsertRowID
    }

    func workspace(owner: Int64, name: String, created: Timestamp, random: inout DemoRandom) throws {
        try run(workspaceInsert, [.text("ws_" + random.alphanumeric(20)), .integer(owner), .text(name), .text(created.iso8601)])
    }

    func subscription(user: Int64, plan: String, status: String, periodEnd: Timestamp, created: Timestamp, random: inout DemoRandom) throws {
        try run(subscriptionInsert, [.text("sub_" + random.alphanumeric(20)), .integer(user), .text(plan), .text(status), .text(periodEnd.iso8601), .text(created.iso8601)])
    }

    func role(sub: String, role: String, granted: Timestamp) throws {
        try run(roleInsert, [.text(sub), .text(role), .text(granted.iso8601)])
    }
}
