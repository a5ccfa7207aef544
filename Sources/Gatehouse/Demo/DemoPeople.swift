/// The numbers and addresses that make each demo person unique, as functions of the person's place alone (never of
/// the random stream), so that two people can be told apart by construction rather than by luck: a random Hide My
/// Email address of ten characters meets an earlier one after 5,683,810 people (`demo seed --users 10000000` would stop
/// at 5,908,000 users with "UNIQUE constraint failed: user.email").
///
/// A person's number is `number(block:position:)`: its position in the store (the users it held before the seed,
/// plus its place in the seed) in the seed's block, one-to-one for every block below 1,000 and every position. A
/// person's addresses carry the number: `first.last.<number>@domain`, or a relay address that is the number in
/// disguise (`relayAddress(of:)`, one-to-one for numbers below 36¹⁰). A person has at most one of each (a split
/// identity has both, at different domains), so no two people's addresses are ever the same.
enum DemoPeople {
    /// People per seed block: seeds 1…1,000 number their first ten million people in blocks of their own, so that
    /// seeds running into one store at the same time never write the same address.
    static let blockSize = 10_000_000
    /// Seed blocks (`(seed - 1) % 1000`).
    static let blocks = 1_000

    /// The number of the person at `position` (1, 2, …: the store's users before the seed plus its place in the seed)
    /// in the seed's `block`: `block × 10,000,000 + position` for the first ten million (the block's own range, as
    /// emails always read), then `10¹⁰ + (position − 10,000,000) × 1000 + block`, above every block's range: no two
    /// (block, position) pairs share a number, whatever the count.
    static func number(block: Int, position: Int) -> Int {
        position < blockSize ? block * blockSize + position : blocks * blockSize + (position - blockSize) * blocks + block
    }

    /// The (block, position) a person's number was made from: `number(block:position:)` undone, which is what shows
    /// it is one-to-one.
    static func place(of number: Int) -> (block: Int, position: Int) {
        number < blocks * blockSize ? (number / blockSize, number % blockSize)
            : ((number - blocks * blockSize) % blocks, (number - blocks * blockSize) / blocks + blockSize)
    }

    // MARK: - relay addresses

    /// 36¹⁰: the ten-character addresses, and the person numbers they can disguise (far beyond any seed).
    static let modulus: UInt64 = 3_656_158_440_062_976
    private static let digits = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)
    // Two affine maps mod 36¹⁰ (multipliers prime to 6, so each is one-to-one) around a chained substitution of the
    // base-36 digits: consecutive numbers get unrelated-looking addresses.
    private static let scale1: UInt64 = 2_259_630_184_031_291, shift1: UInt64 = 1_464_248_206_846_585, inverse1: UInt64 = 540_228_599_665_907
    private static let scale2: UInt64 = 2_759_952_350_492_173, shift2: UInt64 = 2_844_626_588_163_937, inverse2: UInt64 = 94_171_997_112_517

    /// A Hide My Email address (`<ten letters and digits>@privaterelay.appleid.com`) that is `number` in disguise.
    static func relayAddress(of number: Int) -> String {
        String(decoding: relayLocalPart(of: number), as: UTF8.self) + "@privaterelay.appleid.com"
    }

    /// The ten characters of `relayAddress(of:)`.
    static func relayLocalPart(of number: Int) -> [UInt8] {
        precondition(number >= 0 && UInt64(number) < modulus, "a person number beyond 36^10")
        var value = affine(UInt64(number), scale1, shift1)
        value = chain(value, forward: true)
        value = affine(value, scale2, shift2)
        var local = [UInt8](repeating: 0, count: 10)
        for index in stride(from: 9, through: 0, by: -1) {
            local[index] = digits[Int(value % 36)]
            value /= 36
        }
        return local
    }

    /// The person number a relay address's ten characters disguise, or nil for characters `relayAddress(of:)` never
    /// makes: `relayLocalPart(of:)` undone, which is what shows it is one-to-one.
    static func number(ofRelay local: [UInt8]) -> Int? {
        guard local.count == 10 else { return nil }
        var value: UInt64 = 0
        for character in local {
            guard let digit = digits.firstIndex(of: character) else { return nil }
            value = value * 36 + UInt64(digit)
        }
        value = affine(value >= shift2 ? value - shift2 : value + modulus - shift2, inverse2, 0)
        value = chain(value, forward: false)
        value = affine(value >= shift1 ? value - shift1 : value + modulus - shift1, inverse1, 0)
        return Int(value)
    }

    /// `(scale × value + shift) mod 36¹⁰`, for `value` and `shift` below it.
    private static func affine(_ value: UInt64, _ scale: UInt64, _ shift: UInt64) -> UInt64 {
        let product = modulus.dividingFullWidth(scale.multipliedFullWidth(by: value)).remainder
        let sum = product + shift
        return sum >= modulus ? sum - modulus : sum
    }

    /// Each base-36 digit, most significant first, shifted by a running value of the digits written before it
    /// (`forward`), or shifted back (not `forward`): one-to-one on the numbers below 36¹⁰.
    private static func chain(_ value: UInt64, forward: Bool) -> UInt64 {
        var input = [UInt64](repeating: 0, count: 10), rest = value
        for index in stride(from: 9, through: 0, by: -1) {
            input[index] = rest % 36
            rest /= 36
        }
        var running: UInt64 = 0, result: UInt64 = 0
        for digit in input {
            let output = forward ? (digit + running) % 36 : (digit + 36 - running) % 36
            let written = forward ? output : digit
            running = (running * 5 + written + 17) % 36
            result = result * 36 + output
        }
        return result
    }
}
