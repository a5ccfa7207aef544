@testable import D1Engine
import Foundation
@testable import Gatehouse
import HTTPTestSupport
@testable import PostgresEngine
@testable import SQLiteEngine
import Storage
import TestEngines
import XCTest

/// Another role with CREATE on the database makes a schema named after Gatehouse's role (first in the default
/// `"$user", public`) and puts its own `gatehouse_admins` there. Gatehouse pins its search path past that schema:
/// the impostor's admin cannot log in, the real admins can, and `health` and `init` report what was made.
final class ConsoleSearchPathTests: XCTestCase {
    func testAnImpostorSchemaNamedAfterTheRoleIsNotRead() throws {
        let console = try ConsoleHarness(users: 10, threads: 2, transport: .socket, engine: .postgres)
        let database = try PostgresFaults(console)
        let gatehouseRole = try XCTUnwrap(try database.superuser.scalar("SELECT r.rolname FROM pg_roles r JOIN pg_database d ON d.datdba = r.oid WHERE d.datname = current_database()").string)
        let impostor = "mallory_\(UInt32.random(in: .min ... .max))"
        try database.superuser.executeScript("""
            CREATE ROLE \(impostor) LOGIN;
            GRANT CREATE ON DATABASE \(database.name) TO \(impostor);
            CREATE SCHEMA \(gatehouseRole) AUTHORIZATION \(impostor);
            CREATE TABLE \(gatehouseRole).gatehouse_admins (LIKE public.gatehouse_admins INCLUDING ALL);
            INSERT INTO \(gatehouseRole).gatehouse_admins SELECT * FROM public.gatehouse_admins WHERE username = 'vera';
            UPDATE \(gatehouseRole).gatehouse_admins SET username = 'eve', role = 'admin';
            ALTER TABLE \(gatehouseRole).gatehouse_admins OWNER TO \(impostor);
            GRANT USAGE ON SCHEMA \(gatehouseRole) TO \(gatehouseRole);
            GRANT ALL ON ALL TABLES IN SCHEMA \(gatehouseRole) TO \(gatehouseRole);
            """)
        defer { try? database.superuser.executeScript("DROP SCHEMA IF EXISTS \(gatehouseRole) CASCADE; DROP OWNED BY \(impostor); DROP ROLE IF EXISTS \(impostor)") }

        // Connections made before the attack and after it (the console's backends ended, so it reconnects).
        for round in ["before reconnecting", "after reconnecting"] {
            if round == "after reconnecting" { _ = try database.endConsoleBackends() }
            XCTAssertEqual(try console.login("eve").status, 401, "the impostor's admin logged in \(round)")
            let root = try console.tokens("root").access
            let set = try console.request("POST", "/api/policy", token: root, body: try console.body([
                "key": "linkSocial.allowDifferentEmails", "value": round == "before reconnecting", "reason": "SUP-3 \(round)"]))
            XCTAssertEqual(set.status, 200, "\(round): \(set.bodyText)")
        }

        let store = try Store.open(path: console.storePath)
        XCTAssertEqual(try store.db.scalar("SELECT current_schemas(false)::text").string, "{public}")
        let check = try StoreHealthChecks().searchPath(store)
        XCTAssertEqual(check.status, .critical, check.summary)
        XCTAssertTrue(check.summary.contains("schema \(gatehouseRole) is named after Gatehouse's role but owned by \(impostor)"), check.summary)
        let (_, report) = try Store.initialize(path: console.storePath, actor: Actor("tester"))
        XCTAssertTrue(report.warnings.contains { $0.contains("gatehouse_admins also exists in schema \(gatehouseRole)") }, "\(report.warnings)")
    }

    /// A schema named after the role that the role owns itself is its own, and stays in the search path.
    func testTheRolesOwnSchemaStaysInThePath() throws {
        let console = try ConsoleHarness(users: 5, threads: 1, transport: .socket, engine: .postgres)
        let database = try PostgresFaults(console)
        let store = try Store.open(path: console.storePath)
        let role = try XCTUnwrap(try store.db.scalar("SELECT current_user").string)
        try database.superuser.executeScript("CREATE SCHEMA IF NOT EXISTS \(role) AUTHORIZATION \(role)")
        defer { try? database.superuser.executeScript("DROP SCHEMA IF EXISTS \(role) CASCADE") }
        let fresh = try Store.open(path: console.storePath)
        XCTAssertEqual(try fresh.db.scalar("SELECT current_schemas(false)::text").string, "{\(role),public}")
        XCTAssertEqual(try StoreHealthChecks().searchPath(fresh).status, .ok)
    }
}
