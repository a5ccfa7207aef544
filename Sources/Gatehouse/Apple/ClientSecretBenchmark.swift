import Foundation
import JOSE

/// Measures the in-process minting rate of complete client-secret JWTs on one thread, from a throwaway key —
/// comparable with `openssl speed ecdsap256` (also one thread). For `ops/bench`, not for production.
public enum ClientSecretBenchmark {
    /// The outcome.
    public struct Result: Sendable, Codable {
        public let tokens: Int
        public let seconds: Double
        public let tokensPerSecond: Double
        /// The length of one token, for the record.
        public let tokenLength: Int
    }

    /// Mints for `seconds` and counts; checks the last token verifies.
    public static func run(seconds: Double) throws -> Result {
        let key = try P256.PrivateKey.generate()
        let minter = ClientSecretMinter(keyID: try KeyID("BENCHKEY01"), teamID: try TeamID("BENCHTEAM1"), privateKey: key)
        let lifetime = ClientSecretMinter.defaultLifetime
        var count = 0
        var last = ""
        let start = Timestamp.monotonicSeconds()
        var elapsed = 0.0
        while elapsed < seconds {
            for _ in 0..<256 {
                last = try minter.mint(clientID: "com.example.bench", lifetime: lifetime, now: Timestamp.now())
            }
            count += 256
            elapsed = Timestamp.monotonicSeconds() - start
        }
        try JWT.verify(last, key: key.publicKey)
        return Result(tokens: count, seconds: elapsed, tokensPerSecond: Double(count) / elapsed, tokenLength: last.utf8.count)
    }
}

extension Timestamp {
    /// Seconds on the monotonic clock, for measuring intervals.
    static func monotonicSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
