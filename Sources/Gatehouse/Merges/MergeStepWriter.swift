import Storage

/// Runs merge steps against the store, forwards (apply) and backwards (undo). Every statement names
/// its row by key and must change exactly that one row.
struct MergeStepWriter {
    let db: SQLDatabase
    private var shapes: [String: MergeTableShape] = [:]

    /// A writer for `db`, knowing the shapes of tables already read (a read set's).
    init(db: SQLDatabase, shapes: [String: MergeTableShape] = [:]) {
        self.db = db
        self.shapes = shapes
    }

    mutating func shape(_ table: String) throws -> MergeTableShape {
        if let known = shapes[table] { return known }
        let shape = try MergeTableShape.read(db, table: table)
        shapes[table] = shape
        return shape
    }

    /// Applies one step at `time`.
    mutating func apply(_ step: MergeStep, at time: Timestamp) throws {
        _ = try db.checkedBatch([try statement(for: step, at: time)])
    }

    /// Applies the steps in order at `time`, sent together (`SQLDatabase.batch`: on Postgres a few round trips
    /// for hundreds of rows); every statement must have changed exactly its one row.
    /// Consecutive deletes from one table by a one-column key go as one `DELETE … WHERE key IN (…)` (a merge's
    /// hundreds of sessions: one statement, not hundreds), which must delete exactly as many rows as it names.
    mutating func apply(_ steps: [MergeStep], at time: Timestamp) throws {
        var statements: [SQLStatement] = [], groups: [ArraySlice<MergeStep>] = []
        var start = steps.startIndex
        while start < steps.endIndex {
            var end = start + 1
            while end < steps.endIndex, end - start < Self.deleteGroupLimit, Self.deletesTogether(steps[start], steps[end]) { end += 1 }
            let group = steps[start..<end]
            statements.append(group.count == 1 ? try statement(for: steps[start], at: time) : try deletion(group))
            groups.append(group)
            start = end
        }
        _ = try db.checkedBatch(statements)
    }

    /// Deletes named together in one statement, at most (well inside both engines' limits on parameters).
    static let deleteGroupLimit = 500

    /// Whether `next` deletes from the same table as `first`, by the same one key column.
    private static func deletesTogether(_ first: MergeStep, _ next: MergeStep) -> Bool {
        first.operation == .delete && next.operation == .delete && first.table == next.table
            && first.key.columns.count == 1 && next.key.columns == first.key.columns
    }

    /// One `DELETE` for deletes that `deletesTogether`.
    private mutating func deletion(_ group: ArraySlice<MergeStep>) throws -> SQLStatement {
        let first = group[group.startIndex]
        let shape = try shape(first.table)
        let column = first.key.columns[0] == "rowid" ? "rowid" : SQL.quote(first.key.columns[0])
        let marks = Array(repeating: "?", count: group.count).joined(separator: ", ")
        let table = first.table, count = group.count
        return SQLStatement("DELETE FROM \(shape.sql) WHERE \(column) IN (\(marks))", group.map { $0.key.values[0].sql },
                            expecting: ChangeExpectation(count: count) { changes in
                                GatehouseError.conflict("\(table): \(changes.map { "\($0) of the \(count)" } ?? "not all \(count)") rows to delete were there; nothing was changed",
                                                        fix: "the users changed since the plan; plan again")
                            })
    }

    private mutating func statement(for step: MergeStep, at time: Timestamp) throws -> SQLStatement {
        let shape = try shape(step.table)
        switch step.operation {
        case .delete:
            return SQLStatement("DELETE FROM \(shape.sql) WHERE \(step.key.whereClause)", step.key.values.map(\.sql), expecting: Self.oneChange(step))
        case .update:
            let values = step.assignments(at: time).sorted { $0.key < $1.key }
            let assignments = values.map { "\(SQL.quote($0.key)) = ?" }.joined(separator: ", ")
            return SQLStatement("UPDATE \(shape.sql) SET \(assignments) WHERE \(step.key.whereClause)", values.map(\.value.sql) + step.key.values.map(\.sql),
                                expecting: Self.oneChange(step))
        }
    }

    /// That `step`'s statement changed exactly its one row.
    static func oneChange(_ step: MergeStep) -> ChangeExpectation {
        ChangeExpectation(count: 1) { changes in
            GatehouseError.conflict("\(step.table) \(step.key) was not there to \(step.operation.rawValue) (\(changes.map { "\($0) rows matched" } ?? "no row matched")); nothing was changed",
                                    fix: "the users changed since the plan; plan again")
        }
    }

    /// The rows the applied updates left (nil for a delete), read together after every step ran.
    mutating func after(_ steps: [MergeStep]) throws -> [MergeRowImage?] {
        var statements: [SQLStatement] = [], shapes: [MergeTableShape] = []
        for step in steps where step.operation == .update {
            let shape = try shape(step.table)
            let key = shape.key(of: step.before.with(step.set))
            statements.append(SQLStatement("SELECT \(shape.selectList) FROM \(shape.sql) WHERE \(key.whereClause)", key.values.map(\.sql)))
            shapes.append(shape)
        }
        var read = zip(shapes, try db.batch(statements)).map { shape, result in result.rows.first.map(shape.image) }.makeIterator()
        return steps.map { $0.operation == .update ? read.next() ?? nil : nil }
    }

    /// The row an applied update left (named by its key after the update), read back after every step ran.
    mutating func after(_ step: MergeStep) throws -> MergeRowImage? {
        let shape = try shape(step.table)
        return try shape.current(db, key: shape.key(of: step.before.with(step.set)))
    }

    /// The rowids (of rows a merge deleted) that are still free, so the row goes back under its own: read before
    /// any step is reversed (`freeRowids(for:)`).
    var freeRowids: Set<Int64> = []

    /// Reads which deleted rows' rowids are free again, before anything is reversed.
    mutating func findFreeRowids(for steps: [MergeStep]) throws {
        for step in steps where step.operation == .delete {
            let shape = try shape(step.table)
            guard shape.hasRowid, !shape.rowidIsKey, let rowid = step.before.rowid else { continue }
            if try db.scalar("SELECT count(*) FROM \(shape.sql) WHERE rowid = ?", [rowid]).int64 == 0 { freeRowids.insert(rowid) }
        }
    }

    /// Reverses one step: an update gets its changed columns' old values back; a deleted row is
    /// inserted again with every column, and its old rowid when that was free (`findFreeRowids`).
    mutating func reverse(_ step: MergeStep) throws {
        let shape = try shape(step.table)
        switch step.operation {
        case .update:
            let columns = step.changedColumns
            let assignments = columns.map { "\(SQL.quote($0)) = ?" }.joined(separator: ", ")
            // After the undo the key may differ (a key column was changed): name the row by its merged key.
            let mergedKey = shape.key(of: step.before.with(step.set))
            try db.execute("UPDATE \(shape.sql) SET \(assignments) WHERE \(mergedKey.whereClause)",
                           columns.map { step.before[$0] } + mergedKey.values.map(\.sql), expecting: Self.oneChange(step))
        case .delete:
            var columns = shape.columns.filter { step.before.values[$0] != nil }
            var values = columns.map { step.before[$0] }
            if shape.hasRowid, !shape.rowidIsKey, let rowid = step.before.rowid, freeRowids.contains(rowid) {
                columns.insert("rowid", at: 0)
                values.insert(.integer(rowid), at: 0)
            }
            let names = columns.map { $0 == "rowid" ? "rowid" : SQL.quote($0) }.joined(separator: ", ")
            let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            try db.execute("INSERT INTO \(shape.sql) (\(names))\(db.dialect.insertAsItWas) VALUES (\(marks))", values)
        }
    }
}
