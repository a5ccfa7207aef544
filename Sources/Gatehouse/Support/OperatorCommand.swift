/// A job an operator starts, named by the domain when it tells what to do next ("list merges with …"). Domain text
/// refers to one with `\(command: .mergeList)` or, with its inputs, `\(run: .gatesEnable, "apple", .option(.platform, "ios"))`
/// (see `DomainText`); the CLI shows it as its command line, the console as the page that does the job or in plain words.
///
/// The raw value is the command's words after `gatehouse`.
public enum OperatorCommand: String, Sendable, CaseIterable {
    case accountsCheck = "accounts check"
    case accountsIndex = "accounts index"
    case appleExport = "apple export"
    case appleKeyActivate = "apple key activate"
    case appleKeyImport = "apple key import"
    case appleKeyList = "apple key list"
    case appleKeyRevoke = "apple key revoke"
    case appleKeyRollback = "apple key rollback"
    case appleKeySelftest = "apple key selftest"
    case appleSecretInspect = "apple secret inspect"
    case appleSecretList = "apple secret list"
    case appleSecretMint = "apple secret mint"
    case appleSecretUntrack = "apple secret untrack"
    case auditVerify = "audit verify"
    case demoSeed = "demo seed"
    case gatesDisable = "gates disable"
    case gatesEnable = "gates enable"
    case gatesSet = "gates set"
    case health
    case `init`
    case mergeList = "merge list"
    case mergePlan = "merge plan"
    case mergeShow = "merge show"
    case policy
    case policySet = "policy set"
    case policyShow = "policy show"
    case policyHistory = "policy history"
    case adminsAdd = "admins add"
    case adminsDisable = "admins disable"
    case adminsList = "admins list"
    case adminsPasswd = "admins passwd"
    case adminsMfaRequire = "admins mfa require"
    case adminsMfaReset = "admins mfa reset"
    case ssoSet = "sso set"
    case ssoShow = "sso show"
    case ssoDisable = "sso disable"
    case providersSet = "providers set"
    case providersShow = "providers show"
    case usersSearch = "users search"
    case usersShow = "users show"
    case usersDeleteList = "users delete list"
    case usersDeletePlan = "users delete plan"
    case usersDeleteShow = "users delete show"
}

/// One input of a command reference: a word as it is (`apple`, `<KEYID>`), or a field with an optional value.
public enum CommandArgument: Sendable, Equatable, ExpressibleByStringInterpolation {
    case word(String)
    case option(InputField, String?)

    /// A field given with its value: `.option(.ttl, "180d")`.
    public static func option(_ field: InputField, _ value: String) -> CommandArgument { .option(field, Optional(value)) }
    /// A field given alone, a switch: `.flag(.force)`.
    public static func flag(_ field: InputField) -> CommandArgument { .option(field, nil) }

    public init(stringLiteral value: String) { self = .word(value) }
    public init(stringInterpolation: DefaultStringInterpolation) { self = .word(String(stringInterpolation: stringInterpolation)) }
}
