import Foundation
import Gatehouse

/// How the console spells the domain's references (`DomainText`): a field as its request field (`"keepEmail"`, the
/// name its forms send), a command as the page that does the job, or in plain words where no page does. Never a CLI
/// flag or command line. `JSONBody` and `JSONWriter` render every response with it.
enum ConsoleSpelling {
    static let spelling = DomainText.Spelling(field: field, command: { command, arguments, _ in
        let shown = arguments.map { argument -> String in
            switch argument {
            case .word(let word): return word
            case .option(let name, let value): return value.map { "\(field(name)) \($0)" } ?? field(name)
            }
        }
        return place(command) + (shown.isEmpty ? "" : " (\(shown.joined(separator: ", ")))")
    })

    /// `"keepEmail"`.
    static func field(_ field: InputField) -> String { "\"\(field.rawValue)\"" }

    /// Where in the console (or, for jobs it does not do, in plain words) an operator does what `command` does.
    static func place(_ command: OperatorCommand) -> String {
        switch command {
        case .appleExport, .appleKeyActivate, .appleKeyImport, .appleKeyList, .appleKeyRevoke, .appleKeyRollback, .appleKeySelftest,
             .appleSecretList, .appleSecretUntrack:
            return "the Apple keys page"
        case .appleSecretMint: return "the Apple keys page's mint form"
        case .appleSecretInspect: return "the Apple keys page's inspect form"
        case .auditVerify: return "the audit log's verification"
        case .accountsCheck: return "the accounts check"
        case .accountsIndex: return "the accounts indexes"
        case .demoSeed: return "demo seeding"
        case .gatesSet: return "the Gates page's requirement form"
        case .gatesEnable: return "the Gates page's Enable button"
        case .gatesDisable: return "the Gates page's Disable button"
        case .health: return "the Health page"
        case .`init`: return "initializing the store"
        case .mergeList, .mergeShow: return "the Merges page"
        case .mergePlan: return "the Merges page's plan form"
        case .policy, .policyShow, .policySet, .policyHistory: return "the Policy page"
        case .adminsAdd, .adminsDisable, .adminsList, .adminsPasswd, .adminsMfaRequire, .adminsMfaReset: return "the console's admin accounts (managed by an operator on the server)"
        case .ssoSet, .ssoShow, .ssoDisable: return "the single sign-on settings (set by an operator on the server)"
        case .providersSet: return "the provider settings (set by an operator on the server)"
        case .providersShow: return "the provider settings"
        case .usersSearch, .usersShow: return "the Users page"
        case .usersDeletePlan: return "the user page's Delete user form"
        case .usersDeleteList, .usersDeleteShow: return "the deletions list (GET /api/deletions)"
        }
    }

    /// `text` in the console's words.
    static func render(_ text: String) -> String { DomainText.render(text, spelling) }

    /// A JSON document with the references in each of its strings put into the console's words. Strings without
    /// marker bytes (nearly all) are copied as they are.
    static func renderJSON(_ bytes: [UInt8]) -> [UInt8] {
        guard DomainText.mayHoldReferences(bytes) else { return bytes }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\"") else {
                out.append(bytes[index])
                index += 1
                continue
            }
            // A string token runs to the next quote that is not escaped.
            var end = index + 1
            var marked = false
            while end < bytes.count && bytes[end] != UInt8(ascii: "\"") {
                if bytes[end] == UInt8(ascii: "\\") { end += 1 } else if bytes[end] == 0xEE { marked = true }
                end += 1
            }
            let token = Array(bytes[index..<min(end + 1, bytes.count)])
            if marked, let text = (try? JSONSerialization.jsonObject(with: Data(token), options: .fragmentsAllowed)) as? String,
               let rendered = try? JSONBody.encoder.encode(render(text)) {
                out.append(contentsOf: rendered)
            } else {
                out.append(contentsOf: token)
            }
            index = end + 1
        }
        return out
    }
}
