/// An ordered list of HTTP header fields with case-insensitive name lookup.
///
/// Names keep the spelling they were added with and fields keep their order, so a response is sent
/// the way it was built. Lookups ignore ASCII case, as HTTP requires:
///
/// ```swift
/// var headers: HTTPHeaders = ["Content-Type": "text/plain"]
/// headers.add("Set-Cookie", "a=1")
/// headers.add("Set-Cookie", "b=2")
/// headers["content-type"]          // "text/plain"
/// headers.values(for: "set-cookie") // ["a=1", "b=2"]
/// ```
public struct HTTPHeaders: Sendable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field.
    public typealias Field = (name: String, value: String)

    private var fields: [Field]

    /// An empty header list.
    public init() {
        fields = []
    }

    /// Headers from `(name, value)` pairs, in order.
    public init(_ fields: [(String, String)]) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// Headers from a literal such as `["Content-Type": "text/plain"]`, in the order written.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { (name: $0.0, value: $0.1) }
    }

    /// The number of fields, repeated names counted each time.
    public var count: Int { fields.count }

    /// Whether there are no fields at all.
    public var isEmpty: Bool { fields.isEmpty }

    /// The value of the first field called `name` (any case), or `nil`.
    ///
    /// Setting a value replaces every field called `name` with one field at the position of the first;
    /// setting `nil` removes them all.
    public subscript(name: String) -> String? {
        get {
            for field in fields where Self.namesMatch(field.name, name) {
                return field.value
            }
            return nil
        }
        set {
            guard let newValue else {
                remove(name)
                return
            }
            if let first = fields.firstIndex(where: { Self.namesMatch($0.name, name) }) {
                fields[first].value = newValue
                var index = fields.index(after: first)
                while index < fields.endIndex {
                    if Self.namesMatch(fields[index].name, name) {
                        fields.remove(at: index)
                    } else {
                        index += 1
                    }
                }
            } else {
                fields.append((name: name, value: newValue))
            }
        }
    }

    /// The values of every field called `name` (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    /// Whether a field called `name` (any case) is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.namesMatch($0.name, name) }
    }

    /// Appends a field, keeping any earlier field of the same name (for `Set-Cookie`, `Vary`, …).
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name: name, value: value))
    }

    /// Removes every field called `name` (any case).
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.namesMatch($0.name, name) }
    }

    /// Iterates over the fields in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// The fields as `Name: value` lines, for debugging.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }

    /// ASCII case-insensitive comparison of two header names, without allocating.
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil):
                return true
            case let (a?, b?):
                if a != b && lowercased(a) != lowercased(b) { return false }
            default:
                return false
            }
        }
    }

    @inline(__always)
    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (byte >= 0x41 && byte <= 0x5A) ? byte | 0x20 : byte
    }
}
