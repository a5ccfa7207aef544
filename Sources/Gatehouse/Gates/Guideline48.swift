/// App Store Review Guideline 4.8 ("Login Services"): an iOS app that lets people sign in with a third-party
/// service such as Google must also offer Sign in with Apple. For the gate: Google may be offered on ios only
/// while Apple is live on ios — it cannot be enabled before, Apple cannot be disabled under it, and the export
/// never offers Google on ios without Apple.
public enum Guideline48 {
    /// The rule, in one sentence, for errors and the board.
    public static let rule = "App Store Review Guideline 4.8: an iOS app that offers Google sign-in must also offer Sign in with Apple"

    /// Whether the board complies.
    public struct Verdict: Sendable, Codable, Equatable {
        /// Google is live on ios while Apple is not.
        public let breached: Bool
        /// The two gates the rule ties together.
        public let appleOnIOS: GateState
        public let googleOnIOS: GateState
        /// One line for people.
        public let message: String
    }

    /// The verdict for a set of gates.
    static func verdict(_ gates: [GateStatus]) -> Verdict {
        let apple = gates.first { $0.provider == .apple && $0.platform == .ios }?.state ?? .blocked
        let google = gates.first { $0.provider == .google && $0.platform == .ios }?.state ?? .blocked
        let breached = google == .live && apple != .live
        let message: String
        if breached {
            message = "Guideline 4.8 breach: google is live on ios but apple is \(apple.rawValue) there; the export withholds Google on ios until Apple is live"
        } else if google == .live {
            message = "Guideline 4.8 met: apple and google are both live on ios"
        } else {
            message = "Guideline 4.8 met: google is not live on ios (\(google.rawValue))"
        }
        return Verdict(breached: breached, appleOnIOS: apple, googleOnIOS: google, message: message)
    }

    /// Refuses enabling Google on ios unless Apple is live on ios.
    static func checkEnable(_ provider: GateProvider, _ platform: GatePlatform, board: GateBoard) throws {
        guard provider == .google, platform == .ios else { return }
        let apple = board.gate(.apple, .ios)
        guard apple.state != .live else { return }
        var fix = "make Apple live on ios first"
        switch apple.state {
        case .ready:
            fix += ": \(run: .gatesEnable, "apple", .option(.platform, "ios"), .option(.reason, "\"...\""))), then enable google"
        case .blocked:
            fix += " — it is blocked by \(apple.unmetDescription); meet those, enable apple on ios, then enable google"
        case .lapsed:
            fix += " — it has lapsed (\(apple.unmetDescription)); restore those, then enable google"
        case .live:
            break
        }
        throw GatehouseError("refusing to enable google on ios: apple is \(apple.state.rawValue) on ios. \(rule), so Google cannot go live on ios before Apple",
                             fix: fix, code: .guideline48)
    }

    /// Refuses disabling Apple on ios while Google is enabled there.
    static func checkDisable(_ provider: GateProvider, _ platform: GatePlatform, board: GateBoard) throws {
        guard provider == .apple, platform == .ios else { return }
        let google = board.gate(.google, .ios)
        guard google.enabled else { return }
        throw GatehouseError("refusing to disable apple on ios: google is \(google.state.rawValue) there. \(rule), so Apple must stay while Google is offered on ios",
                             fix: "disable google on ios first: \(run: .gatesDisable, "google", .option(.platform, "ios"), .option(.reason, "\"...\""))), then disable apple",
                             code: .guideline48)
    }

    /// Why a gate is withheld from the export, or nil when the app should offer it.
    static func withheld(_ gate: GateStatus, board: GateBoard) -> String? {
        guard gate.state == .live else {
            switch gate.state {
            case .blocked: return "blocked by \(gate.unmetDescription)"
            case .ready: return "ready but not enabled"
            case .lapsed: return "lapsed: \(gate.unmetDescription)"
            case .live: return nil
            }
        }
        if gate.provider == .google, gate.platform == .ios, board.gate(.apple, .ios).state != .live {
            return "Guideline 4.8: apple is \(board.gate(.apple, .ios).state.rawValue) on ios, and Google is never offered on ios without Apple"
        }
        return nil
    }
}
