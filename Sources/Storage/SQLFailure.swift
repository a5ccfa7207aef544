/// What code above the seam may ask of any engine's error without naming the engine: a caller that expects a unique
/// value to be taken by a racing writer, or a damaged page, asks the failure, not its type.
///
///     } catch let error as SQLFailure where error.isUniqueViolation { … }
public protocol SQLFailure: Error {
    /// The engine's message, with bound values and passwords already left out.
    var message: String { get }
    /// A UNIQUE constraint (or primary key) refused the row.
    var isUniqueViolation: Bool { get }
    /// The engine found its storage damaged.
    var isCorruption: Bool { get }
}
