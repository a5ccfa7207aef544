import Foundation
import Gatehouse

/// `gatehouse admins`: the console's admins. There is no first-login setup page: admins exist only
/// through `gatehouse init` and these commands.
enum AdminsCommands: CommandNoun {
    static let name = "admins"
    static let summary = "the console's admins: add, list, passwd, disable, enable, remove, unthrottle, mfa"

    static func make() -> CommandSpec {
        let passwordFile = Options.passwordFile.spec
        return CommandSpec(
            name: name,
            summary: summary,
            discussion: """
                Roles: viewer (every read), support (plus merges and the link simulator), admin (everything, including
                Apple keys, policy, gates and admins). Passwords are at least \(AdminPassword.minLength) characters and are stored as
                PBKDF2-SHA256 hashes (\(PasswordHasher.standardIterations) iterations); a generated password is printed once and
                never stored in clear. Changing a password, disabling or removing an admin ends their console sessions.
                """,
            subcommands: [
                CommandSpec(name: "add", summary: "add an admin",
                            arguments: [Arguments.newUser.spec],
                            options: [Options.role.spec, passwordFile, .json],
                            examples: ["gatehouse admins add alice --role support", "gatehouse admins add bob --role admin --password-file bob.pw"],
                            run: add),
                CommandSpec(name: "list", summary: "every admin, their role and whether they are disabled", options: [.json], run: list),
                CommandSpec(name: "passwd", summary: "set a new password (ends the admin's sessions)",
                            arguments: [Arguments.user.spec], options: [passwordFile, .json], run: passwd),
                CommandSpec(name: "disable", summary: "stop an admin from logging in (ends their sessions)",
                            arguments: [Arguments.user.spec], options: [.json], run: disable),
                CommandSpec(name: "enable", summary: "let a disabled admin log in again",
                            arguments: [Arguments.user.spec], options: [.json], run: enable),
                CommandSpec(name: "remove", summary: "delete an admin and their tokens",
                            arguments: [Arguments.user.spec], options: [.json], run: remove),
                CommandSpec(name: "unthrottle", summary: "lift the console's login throttle for one username, or every throttle",
                            discussion: """
                                Failed console logins lock the username typed (5 failures in 5 minutes) and, for names that are
                                not admins in good standing, the client (20). Locks grow from 30 s to 15 minutes. A login that
                                succeeds, or `admins passwd`, clears the username's own lock; this clears it at once. --all also
                                clears every client's lock. The change is audited (admin.unthrottle).
                                """,
                            arguments: [Arguments.throttledUser.spec],
                            options: [Options.all.spec, .json],
                            examples: ["gatehouse admins unthrottle alice", "gatehouse admins unthrottle --all --json"],
                            run: unthrottle),
                CommandSpec(name: "mfa", summary: "second factors: require them store-wide, or reset an admin's (break-glass)",
                            discussion: """
                                Admins enrol their own factors (TOTP, passkeys) on the console's Account security page. With
                                `require on`, an admin without a factor can sign in only to enrol one. `reset` is the break-glass
                                path for a lost device: it removes every factor and recovery code of the admin and ends their
                                sessions; it is audited as admin.mfa.reset with the reason.
                                """,
                            subcommands: [
                                CommandSpec(name: "require", summary: "require a second factor of every admin (on) or not (off)",
                                            arguments: [Arguments.onOff.spec], options: [.json],
                                            examples: ["gatehouse admins mfa require on"], run: mfaRequire),
                                CommandSpec(name: "reset", summary: "remove an admin's factors and recovery codes (lost device; audited)",
                                            arguments: [Arguments.user.spec], options: [Options.reason.spec, .json],
                                            examples: ["gatehouse admins mfa reset alice --reason \"lost phone, ticket 4711\""], run: mfaReset),
                            ]),
            ],
            defaultSubcommand: "list",
            examples: ["gatehouse admins add alice --role support", "gatehouse admins list --json", "gatehouse admins disable alice"]
        )
    }

    /// What `add` and `passwd` print with --json: the password only when it was generated.
    struct PasswordResult: Encodable {
        let admin: Admin
        let generatedPassword: String?
    }

    /// The password from --password-file, or a generated one (returned as text to print once).
    static func password(_ invocation: Invocation) throws -> (AdminPassword, String?) {
        if let path = try invocation[Options.passwordFile] { return (try PasswordFile.read(path, option: "--password-file"), nil) }
        let (password, text) = try AdminPassword.generate()
        return (password, text)
    }

    static func add(_ invocation: Invocation) throws -> Int32 {
        let name = try invocation[Arguments.newUser]
        let role = try invocation[Options.role].map { try AdminRole.named($0) } ?? .viewer
        let (password, generated) = try password(invocation)
        let admin = try AdminDirectory(store: invocation.openStore()).add(name, role: role, password: password, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(PasswordResult(admin: admin, generatedPassword: generated)); return 0 }
        invocation.output.line("Added admin \(admin.username) (\(admin.role.rawValue))")
        if let generated { printOnce(generated, for: admin.username, invocation) }
        return 0
    }

    static func list(_ invocation: Invocation) throws -> Int32 {
        let admins = try SecondFactors(store: invocation.openStore()).listing()
        if invocation.json { try invocation.output.json(admins); return 0 }
        if admins.isEmpty { invocation.output.line("no admins yet: add one with `gatehouse admins add NAME --role admin`"); return 0 }
        invocation.output.table(["USERNAME", "ROLE", "STATUS", "CREATED", "UPDATED", "FACTORS", "SOURCE", "LAST LOGIN"], admins.map { listed in
            let admin = listed.admin
            let factors = listed.factors.filter(\.confirmed).map(\.kind.rawValue)
            return [admin.username, admin.role.rawValue, admin.disabled ? "disabled" : "enabled", admin.createdAt.iso8601, admin.updatedAt.iso8601,
                    factors.isEmpty ? "-" : factors.joined(separator: ","), admin.source.rawValue, admin.lastLoginAt?.iso8601 ?? "-"]
        })
        return 0
    }

    /// What `mfa require` prints with --json.
    struct RequireResult: Encodable {
        let required: Bool
        let changed: Bool
    }

    static func mfaRequire(_ invocation: Invocation) throws -> Int32 {
        let required = try invocation[Arguments.onOff]
        let changed = try SecondFactors(store: invocation.openStore()).setRequired(required, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(RequireResult(required: required, changed: changed)); return 0 }
        invocation.output.line(required
            ? "Every admin now needs a second factor; one without can sign in only to enrol\(changed ? "" : " (it was already on)")"
            : "A second factor is no longer required\(changed ? "" : " (it was already off)")")
        return 0
    }

    static func mfaReset(_ invocation: Invocation) throws -> Int32 {
        let name = try invocation[Arguments.user]
        let reason = try invocation[Options.reason]
        let reset = try SecondFactors(store: invocation.openStore()).reset(name, reason: reason, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(reset); return 0 }
        invocation.output.line("Removed \(reset.factorsRemoved) factor(s) and \(reset.recoveryCodesRemoved) recovery code(s) of \(reset.username); "
            + "\(reset.sessionsEnded) console session(s) ended. They sign in with their password and enrol again.")
        return 0
    }

    static func passwd(_ invocation: Invocation) throws -> Int32 {
        let name = try invocation[Arguments.user]
        let (password, generated) = try password(invocation)
        let directory = AdminDirectory(store: try invocation.openStore())
        try directory.setPassword(name, password: password, actor: invocation.actor, now: .now())
        if invocation.json {
            guard let admin = try directory.find(name) else { return 1 }
            try invocation.output.json(PasswordResult(admin: admin, generatedPassword: generated))
            return 0
        }
        invocation.output.line("Changed the password of \(name); their console sessions have ended")
        if let generated { printOnce(generated, for: name.rawValue, invocation) }
        return 0
    }

    static func disable(_ invocation: Invocation) throws -> Int32 {
        let admin = try AdminDirectory(store: invocation.openStore()).disable(try invocation[Arguments.user], actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(admin); return 0 }
        invocation.output.line("Disabled \(admin.username); their console sessions have ended")
        return 0
    }

    static func enable(_ invocation: Invocation) throws -> Int32 {
        let admin = try AdminDirectory(store: invocation.openStore()).enable(try invocation[Arguments.user], actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(admin); return 0 }
        invocation.output.line("Enabled \(admin.username)")
        return 0
    }

    static func remove(_ invocation: Invocation) throws -> Int32 {
        let name = try invocation[Arguments.user]
        try AdminDirectory(store: invocation.openStore()).remove(name, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(["removed": name.rawValue]); return 0 }
        invocation.output.line("Removed \(name)")
        return 0
    }

    /// What `unthrottle` prints with --json.
    struct UnthrottleResult: Encodable {
        let username: String?
        let all: Bool
        let lifted: [LoginThrottle.Lifted]
    }

    static func unthrottle(_ invocation: Invocation) throws -> Int32 {
        let name = try invocation[Arguments.throttledUser]
        let all = try invocation[Options.all]
        guard (name != nil) != all else {
            throw invocation.usage(all ? "give a USER or --all, not both" : "give the USER whose login throttle to lift, or --all")
        }
        if let name, name.isEmpty || name.count > AdminUsername.maxLength * 4 {
            throw invocation.usage("USER must be 1 to \(AdminUsername.maxLength * 4) characters")
        }
        let store = try invocation.openStore()
        let lifted = try LoginThrottle(store: store).lift(username: name, actor: invocation.actor, now: .now())
        if invocation.json { try invocation.output.json(UnthrottleResult(username: name, all: all, lifted: lifted)); return 0 }
        let locked = lifted.filter { $0.lockedUntil != nil }.count
        let shown = name.map { OperatorText.visible(AdminUsername.printable($0), keepLineBreaks: false) }
        if lifted.isEmpty {
            invocation.output.line(shown.map { "\($0) had no failed logins on record; nothing to lift" } ?? "No login throttles on record; nothing to lift")
        } else if let shown {
            invocation.output.line("Lifted the login throttle of \(shown) (\(lifted[0].failures) failure(s)\(locked > 0 ? ", was locked" : ""))")
        } else {
            invocation.output.line("Lifted \(lifted.count) login throttle(s), \(locked) of them locked")
        }
        return 0
    }

    /// Prints a generated password, the only time it is ever shown.
    static func printOnce(_ password: String, for username: String, _ invocation: Invocation) {
        invocation.output.line("Password for \(username) (shown once; store it in your password manager now):")
        invocation.output.line("  \(password)")
    }
}

extension AdminsCommands {
    /// The positional arguments these commands read, each declared once.
    enum Arguments {
        static let newUser: Argument<AdminUsername> = .parsed("USER", "the new admin's username: 1–64 of a-z, 0-9, '.', '_', '-'", AdminUsername.init)
        static let user: Argument<AdminUsername> = .parsed("USER", "the admin's username", AdminUsername.init)
        static let throttledUser: Argument<String?> = .optionalText("USER", "the username whose lock to lift (any name that was typed)")
        static let onOff: Argument<Bool> = .parsed("on|off", "on: every admin needs a second factor; off: not required",
                                                   completion: .words({ ["on", "off"] })) { word in
            switch word {
            case "on": return true
            case "off": return false
            default: throw GatehouseError.invalid("give on or off, got \"\(word.prefix(20))\"")
            }
        }
    }

    /// The options these commands read, each declared once: the specs list them, the commands read them.
    enum Options {
        static let all: Option<Bool> = .flag("all", "lift every throttle: all usernames and all clients")
        static let passwordFile: Option<String?> = .text("password-file", "FILE", "read the password from the first line of FILE (- for stdin); without it a random one is generated and printed once")
        static let role: Option<String?> = .text("role", "ROLE", "viewer (default), support or admin")
        static let reason: Option<String> = .requiredText("reason", "TEXT", "why (kept in the audit log)", required: true)
    }
}
