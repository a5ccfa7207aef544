extension SHA256 {
/// SHA-256 (FIPS 180-4) in plain Swift, for the one caller that runs at every start: the checksums of the
/// migration files that every command checks when it opens the store.
///
///     SHA256.Portable.hex(Array("abc".utf8)) // "ba7816bf…f20015ad"
///
/// OpenSSL's first digest in a process loads its configuration and providers, which costs more than a
/// read-only command's whole query (ops/bench's cold-start row, target < 20 ms, and the `users show` /
/// `users search` rows, target ≤ 3× the sqlite3 shell). It is an integrity check of files Gatehouse ships, not
/// a security boundary; the tests compare it with published vectors and with OpenSSL (`SHA256.hex`), which
/// every other digest in Gatehouse uses.
public enum Portable {
    /// The lowercase hex SHA-256 of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for word in digest(bytes) {
            for shift in stride(from: 28, through: 0, by: -4) { text.append(digits[Int((word >> UInt32(shift)) & 0xf)]) }
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// SHA-256 of `bytes` as eight big-endian words.
    static func digest(_ bytes: [UInt8]) -> [UInt32] {
        var hash: [UInt32] = [
            0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
        ]
        // Whole blocks straight from the input; the rest, with the padding (0x80, zeros to 56 mod 64, then
        // the length in bits as a big-endian UInt64), from a small tail buffer.
        let whole = bytes.count / 64 * 64
        var tail = Array(bytes[whole...])
        tail.append(0x80)
        while tail.count % 64 != 56 { tail.append(0) }
        let bits = UInt64(bytes.count) &* 8
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }

        var w = [UInt32](repeating: 0, count: 64)
        hash.withUnsafeMutableBufferPointer { hash in
            w.withUnsafeMutableBufferPointer { w in
                k.withUnsafeBufferPointer { k in
                    bytes.withUnsafeBufferPointer { input in
                        for block in stride(from: 0, to: whole, by: 64) { compress(UnsafeBufferPointer(rebasing: input[block..<block + 64]), into: hash, w, k) }
                    }
                    tail.withUnsafeBufferPointer { input in
                        for block in stride(from: 0, to: input.count, by: 64) { compress(UnsafeBufferPointer(rebasing: input[block..<block + 64]), into: hash, w, k) }
                    }
                }
            }
        }
        return hash
    }

    /// One 64-byte block of the compression function.
    private static func compress(_ block: UnsafeBufferPointer<UInt8>, into hash: UnsafeMutableBufferPointer<UInt32>,
                                 _ w: UnsafeMutableBufferPointer<UInt32>, _ k: UnsafeBufferPointer<UInt32>) {
        for i in 0..<16 {
            w[i] = UInt32(block[i * 4]) << 24 | UInt32(block[i * 4 + 1]) << 16 | UInt32(block[i * 4 + 2]) << 8 | UInt32(block[i * 4 + 3])
        }
        for i in 16..<64 {
            let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
            let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
            w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
        }
        var (a, b, c, d, e, f, g, h) = (hash[0], hash[1], hash[2], hash[3], hash[4], hash[5], hash[6], hash[7])
        for i in 0..<64 {
            let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[i] &+ w[i]
            let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
            (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
        }
        hash[0] &+= a; hash[1] &+= b; hash[2] &+= c; hash[3] &+= d
        hash[4] &+= e; hash[5] &+= f; hash[6] &+= g; hash[7] &+= h
    }

    private static func rotr(_ value: UInt32, _ count: UInt32) -> UInt32 { value >> count | value << (32 - count) }

    /// The round constants: the first 32 bits of the fractional parts of the cube roots of the first 64 primes.
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]
}
}
