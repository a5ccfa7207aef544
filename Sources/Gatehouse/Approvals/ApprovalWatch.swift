import Foundation
import Storage

/// The CLI's side of two-person approval: while a command that takes an approval action runs (bound as
/// `ApprovalWatch.$current`), every store it opens reads the approval settings with its opening — on D1 within the
/// opening's one request, so a command pays nothing for the check — and the watch notes whether the action needs a
/// second admin in the console. Once the command succeeded, the CLI records the bypass through the same store.
public final class ApprovalWatch: @unchecked Sendable {
    @TaskLocal public static var current: ApprovalWatch?

    public let action: ApprovalAction
    private let lock = NSLock()
    private var watchedStore: Store?
    private var watchedRequired = false

    public init(action: ApprovalAction) { self.action = action }

    /// Whether a store the command opened requires approval for `action`, and that store.
    public var required: (Bool, Store?) {
        lock.withLock { (watchedRequired, watchedStore) }
    }

    /// Reads the settings of a store just opened (answered by the opening's read-ahead where there is one).
    func observe(_ store: Store) throws {
        let required = try ApprovalStore(store: store).requires(action)
        lock.withLock {
            if watchedStore == nil || required { watchedStore = store }
            watchedRequired = watchedRequired || required
        }
    }
}
