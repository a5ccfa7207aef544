/// A small, fast, seedable generator (SplitMix64): the demo data must be the same for the same seed.
struct DemoRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(max(1, bound))) }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool { Double(next() >> 11) / Double(1 << 53) < p }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    private static let alphanumerics = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
    private static let hexDigits = Array("0123456789abcdef".utf8)
    private static let digits = Array("0123456789".utf8)

    /// `length` letters and digits: the shape of Better Auth's generated ids.
    mutating func alphanumeric(_ length: Int) -> String { string(length, from: Self.alphanumerics) }

    private var sequence: UInt64 = 0

    /// A 32-character id like Better Auth's whose first six characters count up (in ASCII order): a bulk
    /// load then appends to each primary-key and foreign-key index instead of writing all over it, which
    /// is what keeps seeding a million users within a minute. The other 26 characters are random.
    /// Counted, the ids a seed makes are distinct by construction for 62⁶ (56.8 billion) ids, some nine billion
    /// users, not by the luck of the random part.
    mutating func sequentialID() -> String {
        sequence += 1
        return Self.counter(sequence) + alphanumeric(26)
    }

    /// `number` (below 62⁶) as six letters and digits that sort as the numbers do (in ASCII order).
    static func counter(_ number: UInt64) -> String {
        var prefix = [UInt8](repeating: 0, count: 6)
        var rest = number
        for index in stride(from: 5, through: 0, by: -1) {
            prefix[index] = ascendingAlphanumerics[Int(rest % 62)]
            rest /= 62
        }
        return String(decoding: prefix, as: UTF8.self)
    }

    /// The 62 letters and digits in ASCII (and so SQLite BINARY) order.
    private static let ascendingAlphanumerics = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
    mutating func hex(_ length: Int) -> String { string(length, from: Self.hexDigits) }
    mutating func decimal(_ length: Int) -> String { string(length, from: Self.digits) }

    private mutating func string(_ length: Int, from alphabet: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: length) { buffer in
            var bits = next()
            var left = 10
            for index in 0..<length {
                if left == 0 { bits = next(); left = 10 }
                buffer[index] = alphabet[Int(bits & 63) % alphabet.count]
                bits >>= 6
                left -= 1
            }
            return length
        }
    }
}
