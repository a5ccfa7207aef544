import Gatehouse
import Storage

/// D1's failures in an operator's words (`StoreEngineFailure`): the token refused is permission denied, a 429 or
/// a server away is unavailable (the console answers 503 with `Retry-After`), a write sent without a readable answer
/// is of unknown outcome (503 without `Retry-After`; the CLI says to check the audit log), a statement D1 refused is
/// the store's error. The words never hold the token or the SQL sent.
extension D1Error: StoreEngineFailure {
    public func gatehouseError(storePath: String?) -> GatehouseError {
        // A write sent without an answer that says what became of it: never "retry", whatever the cause.
        if outcomeUnknown {
            return GatehouseError(message, fix: "check `gatehouse audit list` (or the record itself) to see whether it was applied before running it again",
                                  code: .outcomeUnknown)
        }
        switch kind {
        case .configuration:
            return GatehouseError(message, fix: "write the store as d1://ACCOUNT_ID/DATABASE_ID and set \(D1Location.tokenVariable) (and \(D1Location.baseURLVariable) only for another API base)",
                                  code: .invalid)
        case .permission:
            return GatehouseError(message, fix: "use an API token with D1 Read (and D1 Write for write commands) on this account, in \(D1Location.tokenVariable)",
                                  code: .permissionDenied)
        case .notFound:
            return GatehouseError(message, fix: "check the account and database ids (`wrangler d1 list` shows the database's UUID)", code: .notFound)
        case .rateLimited:
            return GatehouseError(message, fix: "wait a minute and retry; Cloudflare's API allows a limited number of requests per token", code: .unavailable)
        case .unavailable:
            return GatehouseError(message, fix: "retry shortly; check the network and Cloudflare's status page if it persists", code: .unavailable)
        case .badAnswer:
            return GatehouseError(message, fix: "retry; if it persists, the API base (\(D1Location.baseURLVariable)) may not be Cloudflare's", code: .unavailable)
        case .statement:
            return GatehouseError(message, code: .storeError)
        case .unexpectedChanges, .contention:
            return GatehouseError(message, fix: "retry; another writer kept changing the same rows", code: .conflict)
        case .unsupported:
            return GatehouseError(message, code: .storeError)
        }
    }
}
