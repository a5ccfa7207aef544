import Foundation
import XCTest

/// Stored plans edited the way someone who can write the store would edit them (an UPDATE through sqlite3 or psql,
/// a plan file changed in an editor), on SQLite and (under ops/test) Postgres and D1: every such apply is refused and
/// nothing moves. And an undone plan is spent: applying it again is refused.
final class PlanTamperingTests: XCTestCase {
    let cli = CLI(environment: TestStore.environment)
    let u1 = "U1aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", u2 = "U2bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", u3 = "U3cccccccccccccccccccccccccccccc"

    /// U1 (Apple, relay email), U2 (Google, two sessions) and U3, a bystander with a Google account of its own.
    func makeStore(_ engine: TestStore.Engine, _ scratch: Scratch) throws -> TestStore {
        let store = try TestStore.make(engine, in: scratch)
        let initialised = try cli.run(["init", "--store", store.location])
        XCTAssertEqual(initialised.status, 0, initialised.all)
        let boolean = engine == .sqlite ? "1" : "true"
        let created = try store.query("""
            INSERT INTO "user" VALUES ('\(u1)', 'Ana Costa', 'zq7tamper1@privaterelay.appleid.com', \(boolean), NULL, '2025-03-01T10:00:00.000Z', '2025-03-01T10:00:00.000Z');
            INSERT INTO "user" VALUES ('\(u2)', 'Ana Costa', 'ana.tamper@gmail.com', \(boolean), NULL, '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z');
            INSERT INTO "user" VALUES ('\(u3)', 'Cy Victim', 'cy.victim@example.com', \(boolean), NULL, '2025-03-05T10:00:00.000Z', '2025-03-05T10:00:00.000Z');
            INSERT INTO account (id, issuer, "accountId", "providerId", "userId", "createdAt", "updatedAt") VALUES
              ('acc1', 'https://appleid.apple.com', '001234.apple.0001', 'apple', '\(u1)', '2025-03-01T10:00:00.000Z', '2025-03-01T10:00:00.000Z'),
              ('acc2', 'https://accounts.google.com', '104857600000000000002', 'google', '\(u2)', '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z'),
              ('acc3', 'https://accounts.google.com', '104857600000000000003', 'google', '\(u3)', '2025-03-05T10:00:00.000Z', '2025-03-05T10:00:00.000Z');
            INSERT INTO session VALUES ('sess1', '2030-01-01T00:00:00.000Z', 'tok1', '2025-03-04T10:00:00.000Z', '2025-03-04T10:00:00.000Z', '81.2.3.4', 'UA', '\(u2)'),
                                       ('sess3', '2030-01-01T00:00:00.000Z', 'tok3', '2025-03-05T10:00:00.000Z', '2025-03-05T10:00:00.000Z', '81.2.3.5', 'UA', '\(u3)');
            """)
        XCTAssertEqual(created, "", "the fixture loads on \(engine)")
        return store
    }

    /// Every user and account row, and the sessions: what a refused apply must leave as it was.
    func state(_ store: TestStore) throws -> String {
        try store.query("SELECT id, email FROM \"user\" ORDER BY id") + "\n" + store.query("SELECT id, \"userId\" FROM account ORDER BY id") + "\n"
            + store.query("SELECT id, \"userId\" FROM session ORDER BY id")
    }

    func json(_ result: CLI.Result) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], result.all)
    }

    /// The red team's takeover: the stored merge plan's step that moves U2's account to U1 is pointed at U3's
    /// account. Apply derives the steps from the rows it reads and refuses; U3 keeps its account.
    func testAMergePlanWhoseStepsWereEditedInTheStoreIsRefused() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let planned = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--store", store.location, "--json"])
            XCTAssertEqual(planned.status, 0, planned.all)
            let id = try XCTUnwrap(try json(planned)["planID"] as? String)
            let edited = try store.query("UPDATE gatehouse_merge_plans SET plan = replace(plan, '\"acc2\"', '\"acc3\"') WHERE id = '\(id)'")
            XCTAssertEqual(edited, "", "\(engine)")
            XCTAssertTrue(try store.query("SELECT plan FROM gatehouse_merge_plans WHERE id = '\(id)'").contains("\"acc3\""), "the edit took (\(engine))")
            let before = try state(store)

            let applied = try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--store", store.location])
            XCTAssertEqual(applied.status, 1, "\(engine): \(applied.all)")
            // On D1 the plan also holds the answers its reads gave (offered back to the apply, and checked against the
            // store in the write's request); the edit changed those too, so the apply sees U2's accounts differ.
            if engine == .d1 && applied.stderr.contains("the users changed since the plan; plan again (changed: U2's accounts)") {
                XCTAssertTrue(applied.stderr.contains("gatehouse merge plan --from \(u2) --into \(u1)"), "\(engine): \(applied.stderr)")
            } else {
                XCTAssertTrue(applied.stderr.contains("merge plan \(id) does not match what its users' rows and decisions give: the stored plan was altered; nothing was changed"),
                              "\(engine): \(applied.stderr)")
                XCTAssertTrue(applied.stderr.contains("gatehouse merge plan --from U2 --into U1"), "\(engine): \(applied.stderr)")
            }
            XCTAssertEqual(try state(store), before, "\(engine): nothing moved")
            XCTAssertEqual(try store.query("SELECT \"userId\" FROM account WHERE id = 'acc3'"), u3, "\(engine)")
            XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_merges"), "0", "\(engine)")

            // A plan whose users were swapped for others (the users' ids and that pair's fingerprint written in) is
            // refused too: its id does not follow from what is read.
            let other = try cli.run(["merge", "plan", "--from", u3, "--into", u1, "--keep-email", "target", "--store", store.location, "--json"])
            XCTAssertEqual(other.status, 0, other.all)
            let otherID = try XCTUnwrap(try json(other)["planID"] as? String)
            _ = try store.query("UPDATE gatehouse_merge_plans SET plan = (SELECT plan FROM gatehouse_merge_plans WHERE id = '\(otherID)') WHERE id = '\(id)'")
            let swapped = try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--store", store.location])
            XCTAssertEqual(swapped.status, 1, "\(engine): \(swapped.all)")
            XCTAssertTrue(swapped.stderr.contains("the stored plan was altered"), "\(engine): \(swapped.stderr)")
            XCTAssertEqual(try state(store), before, "\(engine): nothing moved")
        }
    }

    /// `merge apply` after `merge undo`: the plan is spent, though the rows are back as it read them.
    func testAnUndoneMergePlanIsNotAppliedAgain() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let planned = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--store", store.location, "--json"])
            let id = try XCTUnwrap(try json(planned)["planID"] as? String)
            XCTAssertEqual(try cli.run(["merge", "apply", id, "--ticket", "SUP-1", "--yes", "--store", store.location]).status, 0)
            let undo = try cli.run(["merge", "undo", "1", "--reason", "wrong person", "--store", store.location])
            XCTAssertEqual(undo.status, 0, undo.all)
            let before = try state(store)
            let again = try cli.run(["merge", "apply", id, "--ticket", "SUP-2", "--yes", "--store", store.location])
            XCTAssertEqual(again.status, 1, "\(engine): \(again.all)")
            XCTAssertTrue(again.stderr.contains("plan \(id) was applied (merge 1) and undone; an undone plan is spent and is not applied again"), "\(engine): \(again.stderr)")
            XCTAssertEqual(again.stderr.split(separator: "\n").first.map(String.init)?.hasPrefix("gatehouse: "), true, again.stderr)
            XCTAssertEqual(try state(store), before, "\(engine)")
            XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_merges"), "1", "\(engine)")
            // Planning again, as the refusal says, gives a new plan of the same rows, which applies.
            let replanned = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--store", store.location, "--json"])
            let next = try XCTUnwrap(try json(replanned)["planID"] as? String)
            XCTAssertNotEqual(next, id, "\(engine)")
            let reapplied = try cli.run(["merge", "apply", next, "--ticket", "SUP-2", "--yes", "--store", store.location])
            XCTAssertEqual(reapplied.status, 0, "\(engine): \(reapplied.all)")
            XCTAssertEqual(try store.query("SELECT \"userId\" FROM account WHERE id = 'acc2'"), u1, "\(engine)")
            let same = try cli.run(["merge", "plan", "--from", u2, "--into", u1, "--keep-email", "source", "--store", store.location, "--json"])
            XCTAssertEqual(same.status, 1, "\(engine): U2 is gone once merged: \(same.all)")
        }
    }

    /// The stored deletion plan of U2 overwritten with U3's (its user, rows and fingerprint): applying U2's plan id
    /// is refused before anything is revoked or deleted; U3 is still there.
    func testADeletionPlanEditedInTheStoreIsRefused() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let mine = try cli.run(["users", "delete", "plan", u2, "--ticket", "SUP-1", "--store", store.location, "--json"])
            XCTAssertEqual(mine.status, 0, mine.all)
            let id = try XCTUnwrap(try json(mine)["planID"] as? String)
            let victim = try cli.run(["users", "delete", "plan", u3, "--ticket", "SUP-1", "--store", store.location, "--json"])
            let victimID = try XCTUnwrap(try json(victim)["planID"] as? String)
            _ = try store.query("UPDATE gatehouse_user_deletion_plans SET plan = (SELECT plan FROM gatehouse_user_deletion_plans WHERE id = '\(victimID)') WHERE id = '\(id)'")
            let before = try state(store)
            let applied = try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "no Apple account", "--store", store.location])
            XCTAssertEqual(applied.status, 1, "\(engine): \(applied.all)")
            XCTAssertTrue(applied.stderr.contains("deletion plan \(id) does not match what the user's rows give: the stored plan was altered; nothing was revoked or deleted"),
                          "\(engine): \(applied.stderr)")
            XCTAssertEqual(try state(store), before, "\(engine): nothing deleted")
            XCTAssertEqual(try store.query("SELECT count(*) FROM gatehouse_user_deletions"), "0", "\(engine)")

            // A plan whose rows alone were edited (another user's session shown for review) is refused as well.
            let plain = try cli.run(["users", "delete", "plan", u2, "--ticket", "SUP-7", "--store", store.location, "--json"])
            let plainID = try XCTUnwrap(try json(plain)["planID"] as? String)
            _ = try store.query("UPDATE gatehouse_user_deletion_plans SET plan = replace(plan, 'id=sess1', 'id=sess3') WHERE id = '\(plainID)'")
            XCTAssertTrue(try store.query("SELECT plan FROM gatehouse_user_deletion_plans WHERE id = '\(plainID)'").contains("sess3"), "the edit took (\(engine))")
            let rows = try cli.run(["users", "delete", "apply", plainID, "--yes", "--no-revoke", "--reason", "no Apple account", "--store", store.location])
            XCTAssertEqual(rows.status, 1, "\(engine): \(rows.all)")
            XCTAssertTrue(rows.stderr.contains("the stored plan was altered"), "\(engine): \(rows.stderr)")
            XCTAssertEqual(try state(store), before, "\(engine): nothing deleted")
        }
    }

    /// A plan file written by `--out` for U2, with another plan's id and fingerprint written in: it names no plan
    /// (its user and rows are U2's), so it is refused and the other plan's user is not deleted.
    func testADeletionPlanFileWithAnotherPlansIDIsRefused() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let file = scratch.path("plan.json")
            let mine = try cli.run(["users", "delete", "plan", u2, "--ticket", "SUP-1", "--out", file, "--store", store.location, "--json"])
            XCTAssertEqual(mine.status, 0, mine.all)
            let victim = try cli.run(["users", "delete", "plan", u3, "--ticket", "SUP-1", "--store", store.location, "--json"])
            let other = try json(victim)
            var object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
            XCTAssertEqual(object["userID"] as? String, u2)
            object["planID"] = other["planID"]
            object["fingerprint"] = other["fingerprint"]
            try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: file))
            let before = try state(store)
            let applied = try cli.run(["users", "delete", "apply", file, "--yes", "--no-revoke", "--reason", "no Apple account", "--store", store.location])
            XCTAssertEqual(applied.status, 1, "\(engine): \(applied.all)")
            XCTAssertTrue(applied.stderr.contains("does not match stored plan \(other["planID"] as? String ?? "?") (its user, rows or fingerprint differ); nothing was changed"),
                          "\(engine): \(applied.stderr)")
            XCTAssertEqual(try state(store), before, "\(engine): nothing deleted")

            // The file as written applies.
            let fresh = scratch.path("fresh.json")
            XCTAssertEqual(try cli.run(["users", "delete", "plan", u2, "--ticket", "SUP-2", "--out", fresh, "--store", store.location]).status, 0)
            let good = try cli.run(["users", "delete", "apply", fresh, "--yes", "--no-revoke", "--reason", "no Apple account", "--store", store.location])
            XCTAssertEqual(good.status, 0, "\(engine): \(good.all)")
            XCTAssertEqual(try store.query("SELECT count(*) FROM \"user\" WHERE id IN ('\(u2)', '\(u3)')"), "1", "\(engine): only U2 went")
        }
    }

    /// `users delete apply` after its undo: the plan is spent.
    func testAnUndoneDeletionPlanIsNotAppliedAgain() throws {
        for engine in TestStore.engines {
            let scratch = try Scratch()
            let store = try makeStore(engine, scratch)
            defer { store.drop() }
            let planned = try cli.run(["users", "delete", "plan", u2, "--ticket", "SUP-1", "--store", store.location, "--json"])
            let id = try XCTUnwrap(try json(planned)["planID"] as? String)
            let applied = try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "no Apple account", "--store", store.location])
            XCTAssertEqual(applied.status, 0, applied.all)
            let undo = try cli.run(["users", "delete", "undo", "1", "--reason", "by mistake", "--store", store.location])
            XCTAssertEqual(undo.status, 0, undo.all)
            let before = try state(store)
            let again = try cli.run(["users", "delete", "apply", id, "--yes", "--no-revoke", "--reason", "no Apple account", "--store", store.location])
            XCTAssertEqual(again.status, 1, "\(engine): \(again.all)")
            XCTAssertTrue(again.stderr.contains("deletion plan \(id) was applied (deletion 1) and undone; an undone plan is spent and is not applied again"),
                          "\(engine): \(again.stderr)")
            XCTAssertEqual(try state(store), before, "\(engine)")
            // Planning again gives a new plan of the same rows and ticket, which applies.
            let replanned = try cli.run(["users", "delete", "plan", u2, "--ticket", "SUP-1", "--store", store.location, "--json"])
            let next = try XCTUnwrap(try json(replanned)["planID"] as? String)
            XCTAssertNotEqual(next, id, "\(engine)")
            let reapplied = try cli.run(["users", "delete", "apply", next, "--yes", "--no-revoke", "--reason", "no Apple account", "--store", store.location])
            XCTAssertEqual(reapplied.status, 0, "\(engine): \(reapplied.all)")
            XCTAssertEqual(try store.query("SELECT count(*) FROM \"user\" WHERE id = '\(u2)'"), "0", "\(engine)")
        }
    }
}
