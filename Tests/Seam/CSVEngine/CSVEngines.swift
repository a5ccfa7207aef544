import Gatehouse

/// The store engine this target provides, for the executable to register (`StoreEngines.register`).
package enum CSVEngines {
    package static let all: [any StoreEngine.Type] = [CSVStoreEngine.self]
}
