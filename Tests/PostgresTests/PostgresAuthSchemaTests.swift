@testable import D1Engine
import Foundation
@testable import Gatehouse
@testable import PostgresEngine
@testable import SQLiteEngine
@testable import Storage
import TestEngines
import XCTest

/// AuthSchema read from Postgres catalogs, on the shapes Better Auth users have on Postgres: Better Auth's own
/// migration (1.7 and 1.4–1.6), Drizzle's and Prisma's generated schemas (packages/cli/test/__snapshots__ at
/// v1.7.1: auth-schema*.txt, schema*.prisma), uuid ids, renamed tables and a non-public schema.
final class PostgresAuthSchemaTests: XCTestCase {
    /// Better Auth 1.4–1.6's Postgres migration: 1.7's tables without `account.issuer` and its unique index.
    static let betterAuth16 = """
        create table "user" ("id" text not null primary key, "name" text not null, "email" text not null unique, "emailVerified" boolean not null, "image" text, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz default CURRENT_TIMESTAMP not null);
        create table "session" ("id" text not null primary key, "expiresAt" timestamptz not null, "token" text not null unique, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz not null, "ipAddress" text, "userAgent" text, "userId" text not null references "user" ("id") on delete cascade);
        create table "account" ("id" text not null primary key, "accountId" text not null, "providerId" text not null, "userId" text not null references "user" ("id") on delete cascade, "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" timestamptz, "refreshTokenExpiresAt" timestamptz, "scope" text, "password" text, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz not null);
        create table "verification" ("id" text not null primary key, "identifier" text not null, "value" text not null, "expiresAt" timestamptz not null, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz default CURRENT_TIMESTAMP not null);
        create index "session_userId_idx" on "session" ("userId");
        create index "account_userId_idx" on "account" ("userId");
        create index "verification_identifier_idx" on "verification" ("identifier")
        """

    /// Drizzle's pg-core schema as Better Auth's CLI generates it with snake_case columns and renamed tables
    /// (auth-schema.txt): `timestamp` without time zone, `boolean`, text ids.
    static let drizzleSnakeCase = """
        CREATE TABLE "custom_user" ("id" text PRIMARY KEY NOT NULL, "name" text NOT NULL, "email" text NOT NULL, "email_verified" boolean DEFAULT false NOT NULL, "image" text, "created_at" timestamp DEFAULT now() NOT NULL, "updated_at" timestamp DEFAULT now() NOT NULL, CONSTRAINT "custom_user_email_unique" UNIQUE("email"));
        CREATE TABLE "custom_session" ("id" text PRIMARY KEY NOT NULL, "expires_at" timestamp NOT NULL, "token" text NOT NULL, "created_at" timestamp DEFAULT now() NOT NULL, "updated_at" timestamp NOT NULL, "ip_address" text, "user_agent" text, "user_id" text NOT NULL REFERENCES "custom_user"("id") ON DELETE cascade, CONSTRAINT "custom_session_token_unique" UNIQUE("token"));
        CREATE TABLE "custom_account" ("id" text PRIMARY KEY NOT NULL, "issuer" text NOT NULL, "account_id" text NOT NULL, "provider_id" text NOT NULL, "user_id" text NOT NULL REFERENCES "custom_user"("id") ON DELETE cascade, "access_token" text, "refresh_token" text, "id_token" text, "access_token_expires_at" timestamp, "refresh_token_expires_at" timestamp, "scope" text, "password" text, "created_at" timestamp DEFAULT now() NOT NULL, "updated_at" timestamp NOT NULL);
        CREATE TABLE "custom_verification" ("id" text PRIMARY KEY NOT NULL, "identifier" text NOT NULL, "value" text NOT NULL, "expires_at" timestamp NOT NULL, "created_at" timestamp DEFAULT now() NOT NULL, "updated_at" timestamp DEFAULT now() NOT NULL);
        CREATE UNIQUE INDEX "custom_account_issuer_accountId_uidx" ON "custom_account" USING btree ("issuer","account_id");
        CREATE INDEX "custom_session_userId_idx" ON "custom_session" USING btree ("user_id");
        CREATE INDEX "custom_account_userId_idx" ON "custom_account" USING btree ("user_id")
        """

    /// Drizzle with Better Auth's own camelCase column names (the CLI's default field names), Better Auth 1.6.
    static let drizzleCamelCase = """
        CREATE TABLE "user" ("id" text PRIMARY KEY NOT NULL, "name" text NOT NULL, "email" text NOT NULL, "emailVerified" boolean DEFAULT false NOT NULL, "image" text, "createdAt" timestamp DEFAULT now() NOT NULL, "updatedAt" timestamp DEFAULT now() NOT NULL, CONSTRAINT "user_email_unique" UNIQUE("email"));
        CREATE TABLE "session" ("id" text PRIMARY KEY NOT NULL, "expiresAt" timestamp NOT NULL, "token" text NOT NULL, "createdAt" timestamp DEFAULT now() NOT NULL, "updatedAt" timestamp NOT NULL, "ipAddress" text, "userAgent" text, "userId" text NOT NULL REFERENCES "user"("id") ON DELETE cascade, CONSTRAINT "session_token_unique" UNIQUE("token"));
        CREATE TABLE "account" ("id" text PRIMARY KEY NOT NULL, "accountId" text NOT NULL, "providerId" text NOT NULL, "userId" text NOT NULL REFERENCES "user"("id") ON DELETE cascade, "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" timestamp, "refreshTokenExpiresAt" timestamp, "scope" text, "password" text, "createdAt" timestamp DEFAULT now() NOT NULL, "updatedAt" timestamp NOT NULL);
        CREATE TABLE "verification" ("id" text PRIMARY KEY NOT NULL, "identifier" text NOT NULL, "value" text NOT NULL, "expiresAt" timestamp NOT NULL, "createdAt" timestamp DEFAULT now() NOT NULL, "updatedAt" timestamp DEFAULT now() NOT NULL)
        """

    /// What `prisma migrate` makes of Better Auth's schema.prisma: `@@map("user")` tables, camelCase columns,
    /// `DateTime` as `TIMESTAMP(3)`, named primary keys and unique indexes.
    static func prisma(user: String = "user", session: String = "session", account: String = "account", verification: String = "verification") -> String {
        """
        CREATE TABLE "\(user)" ("id" TEXT NOT NULL, "name" TEXT NOT NULL, "email" TEXT NOT NULL, "emailVerified" BOOLEAN NOT NULL DEFAULT false, "image" TEXT, "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, "updatedAt" TIMESTAMP(3) NOT NULL, CONSTRAINT "\(user)_pkey" PRIMARY KEY ("id"));
        CREATE TABLE "\(session)" ("id" TEXT NOT NULL, "expiresAt" TIMESTAMP(3) NOT NULL, "token" TEXT NOT NULL, "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, "updatedAt" TIMESTAMP(3) NOT NULL, "ipAddress" TEXT, "userAgent" TEXT, "userId" TEXT NOT NULL, CONSTRAINT "\(session)_pkey" PRIMARY KEY ("id"));
        CREATE TABLE "\(account)" ("id" TEXT NOT NULL, "issuer" TEXT NOT NULL, "accountId" TEXT NOT NULL, "providerId" TEXT NOT NULL, "userId" TEXT NOT NULL, "accessToken" TEXT, "refreshToken" TEXT, "idToken" TEXT, "accessTokenExpiresAt" TIMESTAMP(3), "refreshTokenExpiresAt" TIMESTAMP(3), "scope" TEXT, "password" TEXT, "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, "updatedAt" TIMESTAMP(3) NOT NULL, CONSTRAINT "\(account)_pkey" PRIMARY KEY ("id"));
        CREATE TABLE "\(verification)" ("id" TEXT NOT NULL, "identifier" TEXT NOT NULL, "value" TEXT NOT NULL, "expiresAt" TIMESTAMP(3) NOT NULL, "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP, "updatedAt" TIMESTAMP(3) NOT NULL, CONSTRAINT "\(verification)_pkey" PRIMARY KEY ("id"));
        CREATE UNIQUE INDEX "\(user)_email_key" ON "\(user)"("email");
        CREATE UNIQUE INDEX "\(session)_token_key" ON "\(session)"("token");
        CREATE INDEX "\(session)_userId_idx" ON "\(session)"("userId");
        CREATE UNIQUE INDEX "account_issuer_accountId_uidx" ON "\(account)"("issuer", "accountId");
        CREATE INDEX "\(account)_userId_idx" ON "\(account)"("userId");
        ALTER TABLE "\(session)" ADD CONSTRAINT "\(session)_userId_fkey" FOREIGN KEY ("userId") REFERENCES "\(user)"("id") ON DELETE CASCADE ON UPDATE CASCADE;
        ALTER TABLE "\(account)" ADD CONSTRAINT "\(account)_userId_fkey" FOREIGN KEY ("userId") REFERENCES "\(user)"("id") ON DELETE CASCADE ON UPDATE CASCADE
        """
    }

    /// Better Auth 1.7 with `advanced.database.generateId: "uuid"`: uuid ids with a server default, uuid user ids.
    static let uuidIDs = """
        create table "user" ("id" uuid default pg_catalog.gen_random_uuid() not null primary key, "name" text not null, "email" text not null unique, "emailVerified" boolean not null, "image" text, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz default CURRENT_TIMESTAMP not null);
        create table "session" ("id" uuid default pg_catalog.gen_random_uuid() not null primary key, "expiresAt" timestamptz not null, "token" text not null unique, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz not null, "ipAddress" text, "userAgent" text, "userId" uuid not null references "user" ("id") on delete cascade);
        create table "account" ("id" uuid default pg_catalog.gen_random_uuid() not null primary key, "issuer" text not null, "accountId" text not null, "providerId" text not null, "userId" uuid not null references "user" ("id") on delete cascade, "accessToken" text, "refreshToken" text, "idToken" text, "accessTokenExpiresAt" timestamptz, "refreshTokenExpiresAt" timestamptz, "scope" text, "password" text, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz not null);
        create table "verification" ("id" uuid default pg_catalog.gen_random_uuid() not null primary key, "identifier" text not null, "value" text not null, "expiresAt" timestamptz not null, "createdAt" timestamptz default CURRENT_TIMESTAMP not null, "updatedAt" timestamptz default CURRENT_TIMESTAMP not null);
        create unique index "account_issuer_accountId_uidx" on "account" ("issuer", "accountId")
        """

    static func betterAuth17() throws -> String {
        let directory = try ResourceLocator.migrationsDirectory(for: "postgres")
        return try XCTUnwrap(MigrationCatalog.load(directory: directory).migrations.first).sql
    }

    func inspect(_ db: PostgresConnection, _ configuration: StoreConfiguration = StoreConfiguration()) throws -> AuthSchema {
        try AuthSchema.inspect(db, configuration: configuration).get()
    }

    func testBetterAuth17AsItsMigrationMakesIt() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(Self.betterAuth17())
            let schema = try inspect(db)
            XCTAssertTrue(schema.hasIssuer)
            XCTAssertEqual(schema.account.col(.issuer), "\"issuer\"")
            XCTAssertEqual(schema.user.columns[.emailVerified], "emailVerified")
            XCTAssertTrue(schema.user.isNativeBoolean(.emailVerified))
            XCTAssertEqual(schema.user.declaredTypes[.id], "text")
            for table in [schema.user, schema.session, schema.account] {
                XCTAssertEqual(table.encoding(.createdAt), .sqlTimestamp, table.name)
                XCTAssertEqual(table.declaredTypes[.createdAt], "timestamp with time zone", table.name)
            }
            XCTAssertEqual(schema.session.encoding(.expiresAt), .sqlTimestamp)
            XCTAssertEqual(schema.account.encoding(.accessTokenExpiresAt), .sqlTimestamp)
            XCTAssertEqual(schema.verification?.encoding(.expiresAt), .sqlTimestamp)
            XCTAssertFalse(schema.hasAdminPlugin)
            XCTAssertEqual(schema.shape, "Better Auth 1.7 (account.issuer), dates as timestamp with time zone")
        }
    }

    func testBetterAuth14To16HasNoIssuer() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(Self.betterAuth16)
            let schema = try inspect(db)
            XCTAssertFalse(schema.hasIssuer)
            XCTAssertEqual(schema.account.col(.issuer), "NULL")
            XCTAssertEqual(schema.shape, "Better Auth 1.4–1.6 (no account.issuer), dates as timestamp with time zone")
        }
    }

    func testDrizzleSnakeCaseWithRenamedTables() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(Self.drizzleSnakeCase)
            XCTAssertThrowsError(try inspect(db)) { XCTAssertTrue("\($0)".contains(#"table "user" does not exist"#), "\($0)") }
            let configuration = StoreConfiguration(tables: ["user": "custom_user", "session": "custom_session",
                                                            "account": "custom_account", "verification": "custom_verification"])
            let schema = try inspect(db, configuration)
            XCTAssertEqual(schema.user.sql, "\"custom_user\"")
            XCTAssertEqual(schema.user.columns[.emailVerified], "email_verified")
            XCTAssertEqual(schema.account.columns[.accountId], "account_id")
            XCTAssertEqual(schema.account.columns[.accessTokenExpiresAt], "access_token_expires_at")
            XCTAssertEqual(schema.session.columns[.userId], "user_id")
            XCTAssertEqual(schema.session.columns[.ipAddress], "ip_address")
            XCTAssertTrue(schema.hasIssuer)
            XCTAssertEqual(schema.user.encoding(.createdAt), .sqlTimestamp)
            XCTAssertEqual(schema.user.declaredTypes[.createdAt], "timestamp without time zone")
            XCTAssertEqual(schema.shape, "Better Auth 1.7 (account.issuer), dates as timestamp without time zone, snake_case columns")
        }
    }

    func testDrizzleCamelCase() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(Self.drizzleCamelCase)
            let schema = try inspect(db)
            XCTAssertEqual(schema.user.columns[.emailVerified], "emailVerified")
            XCTAssertEqual(schema.session.columns[.expiresAt], "expiresAt")
            XCTAssertFalse(schema.hasIssuer)
            XCTAssertEqual(schema.session.encoding(.expiresAt), .sqlTimestamp)
            XCTAssertEqual(schema.shape, "Better Auth 1.4–1.6 (no account.issuer), dates as timestamp without time zone")
        }
    }

    func testPrismaMappedAndUnmappedTables() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(Self.prisma())
            let schema = try inspect(db)
            XCTAssertTrue(schema.hasIssuer)
            XCTAssertEqual(schema.user.declaredTypes[.createdAt], "timestamp(3) without time zone")
            XCTAssertEqual(schema.account.encoding(.refreshTokenExpiresAt), .sqlTimestamp)
            XCTAssertTrue(schema.user.isNativeBoolean(.emailVerified))
        }
        // A Prisma schema without @@map keeps the model names: "User", "Session", ... mapped in gatehouse.json.
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(Self.prisma(user: "User", session: "Session", account: "Account", verification: "Verification"))
            XCTAssertThrowsError(try inspect(db)) { XCTAssertTrue("\($0)".contains(#"table "user" does not exist"#), "\($0)") }
            let schema = try inspect(db, StoreConfiguration(tables: ["user": "User", "session": "Session", "account": "Account", "verification": "Verification"]))
            XCTAssertEqual(schema.user.sql, "\"User\"")
            XCTAssertEqual(schema.verification?.name, "Verification")
            XCTAssertTrue(schema.hasIssuer)
        }
    }

    func testUUIDIds() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(Self.uuidIDs)
            let schema = try inspect(db)
            XCTAssertEqual(schema.user.declaredTypes[.id], "uuid")
            XCTAssertEqual(schema.session.declaredTypes[.userId], "uuid")
            XCTAssertEqual(schema.shape, "Better Auth 1.7 (account.issuer), dates as timestamp with time zone, uuid ids")
            // A uuid id reads back as text, as a text id does.
            try db.execute(#"INSERT INTO "user" (name, email, "emailVerified") VALUES ('Ada', 'ada@example.com', true)"#)
            let id = try XCTUnwrap(db.scalar(#"SELECT id FROM "user""#).string)
            XCTAssertEqual(id.count, 36)
            XCTAssertEqual(try db.scalar(#"SELECT "emailVerified" FROM "user" WHERE id = $1"#, [id]), .integer(1))
        }
    }

    /// Better Auth's tables in schema `auth`, reached through the URI's search_path; `public` holds other tables.
    func testANonPublicSchemaThroughTheSearchPath() throws {
        try TestPostgres.withFreshSchema { db, schema in
            try db.executeScript(Self.betterAuth17())
            XCTAssertEqual(try db.scalar("SELECT current_schema()").string, schema)
            XCTAssertTrue(try inspect(db).hasIssuer)
            // The same database seen with the default search_path does not reach them.
            let other = try TestPostgres.connect()
            if try !other.tableExists("user") {
                XCTAssertThrowsError(try inspect(other)) { XCTAssertTrue("\($0)".contains(#"table "user" does not exist"#), "\($0)") }
            }
        }
    }

    func testAMissingColumnIsReportedByTableAndColumn() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(Self.betterAuth17() + #";ALTER TABLE "session" DROP COLUMN "token"; ALTER TABLE "user" DROP COLUMN "emailVerified""#)
            guard case .failure(let problems) = try AuthSchema.inspect(db, configuration: StoreConfiguration()) else {
                return XCTFail("a schema without session.token was accepted")
            }
            XCTAssertEqual(problems.problems, [AuthSchema.Problem(table: "user", column: "emailVerified"),
                                               AuthSchema.Problem(table: "session", column: "token")])
            XCTAssertTrue(problems.description.contains(#"table "session" has no column "token""#), problems.description)
            XCTAssertTrue(problems.description.contains(#"table "user" has no column "emailVerified" (or "email_verified")"#), problems.description)
        }
    }

    /// Date columns that are not SQL timestamps are judged from their values, as on SQLite: epoch milliseconds in a
    /// bigint (Drizzle's `bigint({ mode: "number" })`), ISO text in a text column.
    func testNonTimestampDateColumnsAreJudgedByTheirValues() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript(Self.drizzleCamelCase + """
                ;ALTER TABLE "user" ALTER COLUMN "createdAt" DROP DEFAULT, ALTER COLUMN "createdAt" TYPE bigint USING 0,
                                    ALTER COLUMN "updatedAt" DROP DEFAULT, ALTER COLUMN "updatedAt" TYPE text USING '';
                INSERT INTO "user" VALUES ('u1', 'Ada', 'ada@example.com', true, NULL, 1764474483123, '2025-11-30T03:48:03.123Z')
                """)
            let schema = try inspect(db)
            XCTAssertEqual(schema.user.encoding(.createdAt), .epochMilliseconds)
            XCTAssertEqual(schema.user.encoding(.updatedAt), .isoText)
            XCTAssertEqual(schema.session.encoding(.createdAt), .sqlTimestamp)
            XCTAssertEqual(schema.shape, "Better Auth 1.4–1.6 (no account.issuer), dates as epoch milliseconds")
        }
    }

    /// Dates written as the domain writes them (ISO-8601 UTC text) read back as the same time, in timestamptz and in
    /// Prisma's and Drizzle's timestamp without time zone, whatever the server's TimeZone.
    func testDatesRoundTripThroughSQLTimestampColumns() throws {
        try TestPostgres.withFreshSchema { db, _ in
            try db.executeScript("CREATE TABLE dates (tz timestamptz, plain timestamp, prisma timestamp(3))")
            // libpq sends PGTZ as the session's TimeZone at login; the connection sets UTC after it.
            let fresh = try withEnvironment("PGTZ", "Asia/Kolkata") { try PostgresConnection(uri: db.uri) }
            XCTAssertEqual(try fresh.scalar("SHOW TimeZone").string, "UTC")
            let time = try XCTUnwrap(Timestamp(iso8601: "2026-11-30T03:48:03.123Z"))
            let written = DateEncoding.sqlTimestamp.encode(time)
            try fresh.execute("INSERT INTO dates VALUES ($1, $2, $3)", [written, written, written])
            let row = try XCTUnwrap(fresh.row("SELECT tz, plain, prisma FROM dates"))
            XCTAssertEqual(row[0].string, "2026-11-30 03:48:03.123+00")
            XCTAssertEqual(row[1].string, "2026-11-30 03:48:03.123")
            for index in 0..<3 { XCTAssertEqual(DateEncoding.decode(row[index]), time, "\(row[index])") }
            XCTAssertEqual(DateEncoding.decode(.text("2026-11-30 09:18:03.123+05:30")), time)
            XCTAssertEqual(DateEncoding.decode(.text("2026-11-30 08:48:03.123+05")), time)
            XCTAssertNil(DateEncoding.decode(.text("infinity")))
        }
    }
}
