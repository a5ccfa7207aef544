import Storage

/// How one engine loads the demo seed's batches (`StoreEngine.demoSeedLoad`): what it tunes on the connection for a
/// bulk load, and the transactions the batches go in. Made when the seed starts, ended once when it stops, however it
/// stops. `BatchSeedLoad` is the seam's own way, which an engine without a faster one hands out.
package protocol DemoSeedLoad: AnyObject {
    /// Whether the seed's batches carry each user's name search key (`SeedBatch.nameKeys`), which `load` writes with
    /// the users instead of building the index afterwards.
    var buildsNameKeys: Bool { get }
    /// Whether the whole load is one transaction: a failure then leaves nothing of it, where batch by batch it leaves
    /// every batch before the failed one.
    var isOneTransaction: Bool { get }
    /// Runs `batches`, which writes each batch through `inserter` in a `write {}` of its own, the engine's way
    /// (inside one transaction of its own, say, with the tables' indexes set aside).
    func load(_ inserter: SeedInserter, batches: () throws -> Void) throws
    /// Before the name search index is brought up to date at the end of the seed.
    func beforeIndexing() throws
    /// Puts back what the load tuned on the connection. Called once, whether the seed finished, failed or stopped.
    func end()
}

/// The demo seed through the seam alone: batch by batch, each in a write transaction of its own, nothing tuned.
package final class BatchSeedLoad: DemoSeedLoad {
    package init() {}
    package var buildsNameKeys: Bool { false }
    package var isOneTransaction: Bool { false }
    package func load(_ inserter: SeedInserter, batches: () throws -> Void) throws { try batches() }
    package func beforeIndexing() throws {}
    package func end() {}
}
