import Storage

/// A command's first reads of Gatehouse's own tables, named before the store is opened so that opening may carry
/// them: where each question is a request (D1), `Store.open(readAhead:)` sends them with its own reads
/// (`SQLDatabase.readAhead`); elsewhere they are asked when the command asks them. Each job names its own (`.policy`,
/// `.policyChange`, …) beside the code that reads them, so the statements stay the ones it sends.
public struct ReadAhead {
    let statements: [SQLStatement]

    init(_ statements: [SQLStatement]) {
        self.statements = statements
    }

    /// Nothing beyond what opening reads.
    public static var nothing: ReadAhead { ReadAhead([]) }
}
