/// A hash table from a user id's 64-bit key to the user's position in the duplicates scan: open addressing
/// over two flat arrays, sized once, so that a million inserts and a million and a half lookups allocate
/// nothing and probe one or two neighbouring slots. (The keys are FNV-1a hashes, never 0: 0 marks an empty slot.)
struct UserKeyTable {
    private var keys: [UInt64]
    private var values: [Int32]
    private var mask: Int
    private var count = 0

    /// A table for up to `capacity` keys, kept at most half full.
    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        keys = [UInt64](repeating: 0, count: size)
        values = [Int32](repeating: -1, count: size)
        mask = size - 1
    }

    /// Sets the value of `key`, replacing an earlier one (as a dictionary assignment would).
    mutating func set(_ key: UInt64, _ value: Int32) {
        precondition(key != 0)
        if (count + 1) * 2 > keys.count { grow() }
        var slot = Int(truncatingIfNeeded: key) & mask
        while keys[slot] != 0 && keys[slot] != key { slot = (slot + 1) & mask }
        if keys[slot] == 0 { count += 1 }
        keys[slot] = key
        values[slot] = value
    }

    /// Doubles the table (only when more keys arrive than the capacity asked for).
    private mutating func grow() {
        let oldKeys = keys, oldValues = values
        keys = [UInt64](repeating: 0, count: oldKeys.count * 2)
        values = [Int32](repeating: -1, count: oldKeys.count * 2)
        mask = keys.count - 1
        count = 0
        for (key, value) in zip(oldKeys, oldValues) where key != 0 { set(key, value) }
    }

    /// The value of `key`, if it was set.
    func value(_ key: UInt64) -> Int32? {
        var slot = Int(truncatingIfNeeded: key) & mask
        while keys[slot] != 0 {
            if keys[slot] == key { return values[slot] }
            slot = (slot + 1) & mask
        }
        return nil
    }
}
