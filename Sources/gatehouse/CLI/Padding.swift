extension String {
    /// The string followed by spaces up to `width` characters, for a column of text; never cut.
    ///
    ///     "id".padded(to: 4) + "|" // "id  |"
    ///
    /// Plain Swift on purpose: Foundation's `padding(toLength:withPad:startingAt:)` bridges through
    /// NSString (slow on first use in a process) and counts UTF-16 units, so it cut cells holding
    /// characters outside the BMP or combining marks. Fast path kept for ops/bench's `users search` row (process start to exit, < 30 ms).
    func padded(to width: Int) -> String {
        let missing = width - count
        return missing > 0 ? self + String(repeating: " ", count: missing) : self
    }
}
