import Gatehouse

/// The store engine this target provides, for the executable (and the tests) to register (`StoreEngines.register`).
package enum D1Engines {
    package static let all: [any StoreEngine.Type] = [D1StoreEngine.self]
}
