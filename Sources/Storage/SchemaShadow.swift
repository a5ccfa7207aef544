/// A schema or table that could stand in for one of Gatehouse's (`SQLDatabase.schemaShadows`): on a database server, an
/// object another role made where a search path would have found it.
public struct SchemaShadow: Sendable, Equatable, CustomStringConvertible {
    /// The schema it is in (or the schema itself, when `table` is nil).
    public let schema: String
    /// The table's name; nil for a schema named after the session's role that another role owns.
    public let table: String?
    /// Who owns it.
    public let owner: String

    public init(schema: String, table: String?, owner: String) {
        self.schema = schema
        self.table = table
        self.owner = owner
    }

    public var description: String {
        if let table {
            return "a table \(table) also exists in schema \(schema) (owner \(owner)); Gatehouse uses the one its pinned search_path finds"
        }
        return "schema \(schema) is named after Gatehouse's role but owned by \(owner): a search_path starting with \"$user\" would read Gatehouse's tables from it; Gatehouse leaves it out of its search_path"
    }
}
