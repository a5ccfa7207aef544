import D1Engine
import Storage
import Gatehouse
import PostgresEngine
import SQLiteEngine

/// Registers every engine with `StoreEngines`, as the executable does, and the tests' own in-memory one
/// (`MemoryStoreEngine`), before any test runs: called from the test
/// binary's load-time constructor (`CTestEngineRegistration`), so no test can open a store before its engine is known.
@_cdecl("gatehouse_register_test_engines")
public func registerTestEngines() {
    StoreEngines.register(PostgresEngines.all + D1Engines.all + [MemoryStoreEngine.self] + SQLiteEngines.all)
}

/// The engines by name, for tests that check engine-specific behaviour (the product never asks which engine it has).
public enum EngineKind: String, CaseIterable, Sendable {
    case sqlite, postgres, d1

    public var displayName: String {
        switch self {
        case .sqlite: "SQLite"
        case .postgres: "Postgres"
        case .d1: "D1"
        }
    }
}

extension SQLDialect {
    /// The engine this dialect is, by its name.
    public var engine: EngineKind {
        guard let kind = EngineKind.allCases.first(where: { $0.displayName == name }) else { fatalError("a test met an engine it does not know: \(name)") }
        return kind
    }
}

extension SQLDatabase {
    /// The engine this connection speaks to.
    public var engine: EngineKind { dialect.engine }
}
