import Storage

/// A failure an engine raises, put into words by the engine itself: each engine's error type conforms in the engine's
/// own folder (`Engines/<Engine>/…StoreFailure.swift`), mapping its codes to the same `GatehouseError.Code`s (busy,
/// read-only, permission denied, unavailable, corrupt, disk full, cannot open), so no front end and no domain file asks
/// which engine failed.
public protocol StoreEngineFailure: Error {
    /// This failure in an operator's words, on the store at `storePath` when the error does not name its own.
    func gatehouseError(storePath: String?) -> GatehouseError
}

/// The one translation of Storage's errors into words an operator can act on.
///
/// The domain lets an engine's errors through as they are; each front end calls this where it renders errors: the
/// CLI's top-level `catch` (`main.swift`), the console's `APIError.from`, and the health runner for one check's
/// failure. The words never include bound values or SQL; each engine's own words are beside it (`StoreEngineFailure`).
extension GatehouseError {
    /// `error` as an operator-facing error when it is one Gatehouse has words for: a `GatehouseError` as it is,
    /// a storage failure translated; nil for anything else (a programming error, shown as it is).
    public static func operatorFacing(_ error: Error, storePath: String? = nil) -> GatehouseError? {
        switch error {
        case let error as GatehouseError: return error
        case let error as StoreEngineFailure: return error.gatehouseError(storePath: storePath)
        case let error as ResourcePoolTimeout:
            return GatehouseError("\(error.description) by other requests", fix: "retry shortly; a request that holds one may be waiting for a lock", code: .busy)
        default: return nil
        }
    }
}
