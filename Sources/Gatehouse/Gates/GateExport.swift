/// Which providers the app should offer on each platform, for the runtime and the app's configuration:
/// only live gates, and never Google on ios without Apple (App Store Review Guideline 4.8).
///
///     {"generatedAt":"…","offer":{"desktop":["apple","google"],"ios":["apple","google"],"web":["google"]},
///      "validUntil":"2027-03-01T00:00:00.000Z","withheld":[{"platform":"web","provider":"apple","reason":"blocked by …","state":"blocked"}]}
public struct GateExport: Sendable, Codable, Equatable {
    /// A provider the app should not offer on a platform, and why.
    public struct Withheld: Sendable, Codable, Equatable {
        /// The provider, the platform and the gate's state there.
        public let provider: GateProvider
        public let platform: GatePlatform
        public let state: GateState
        /// Why it is not offered.
        public let reason: String
    }

    /// The time the export was computed for.
    public let generatedAt: Timestamp
    /// Platform name → the providers to offer there, Apple first.
    public let offer: [String: [GateProvider]]
    /// Every provider × platform not offered, with why.
    public let withheld: [Withheld]
    /// The earliest expiry among the offered gates' requirements: read the export again after it.
    public let validUntil: Timestamp?

    /// The export of a board.
    public init(board: GateBoard) {
        var offer: [String: [GateProvider]] = [:]
        var withheld: [Withheld] = []
        var expiries: [Timestamp] = []
        for platform in GatePlatform.allCases {
            offer[platform.rawValue] = []
            for provider in GateProvider.allCases {
                let gate = board.gate(provider, platform)
                if let reason = Guideline48.withheld(gate, board: board) {
                    withheld.append(Withheld(provider: provider, platform: platform, state: gate.state, reason: reason))
                } else {
                    offer[platform.rawValue, default: []].append(provider)
                    if let expiry = gate.nextExpiry { expiries.append(expiry) }
                }
            }
        }
        generatedAt = board.at
        self.offer = offer
        self.withheld = withheld
        validUntil = expiries.min()
    }

    /// The providers to offer on a platform.
    public func providers(on platform: GatePlatform) -> [GateProvider] { offer[platform.rawValue] ?? [] }
}
