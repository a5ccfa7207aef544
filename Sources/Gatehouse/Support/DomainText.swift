/// Domain text that names inputs and commands without spelling them for any front end.
///
/// A message says `"refusing to print the key without \(field: .reveal)"` or `"list merges with \(command: .mergeList)"`;
/// the interpolation leaves a reference marked with private-use characters, and each front end puts it into words at
/// its one output point: the CLI as `--reveal` and `` `gatehouse merge list` `` (`Output`), the console as `"reveal"` and
/// the page that does the job (`JSONBody`, `JSONWriter`). `render(_:_:)` with `.neutral` gives plain words for logs and
/// tests (`GatehouseError.description`). Marker characters that do not form a known reference (a user may type them)
/// render as U+FFFD, so they can neither forge a reference nor reach a reader raw.
///
/// Texts that are stored (merge plan reasons and decisions) keep their marks and are rendered when read, by the
/// front end that shows them.
public enum DomainText {
    static let open: Unicode.Scalar = "\u{E000}"
    static let close: Unicode.Scalar = "\u{E001}"
    static let separator: Unicode.Scalar = "\u{E002}"
    static let replacement: Unicode.Scalar = "\u{FFFD}"

    /// Whether `scalar` is one of the characters that mark references.
    public static func isMarker(_ scalar: Unicode.Scalar) -> Bool { (0xE000...0xE002).contains(scalar.value) }

    /// Whether `text` may hold a reference (a quick test on its bytes: every marker starts with the byte 0xEE).
    public static func mayHoldReferences<Bytes: Sequence>(_ bytes: Bytes) -> Bool where Bytes.Element == UInt8 {
        bytes.contains(0xEE)
    }

    /// How one front end spells fields and commands.
    public struct Spelling: Sendable {
        /// A field: `--keep-email`, `"keepEmail"`.
        public var field: @Sendable (InputField) -> String
        /// A command with its arguments; `quoted` when the domain named it as a command to run rather than
        /// giving a command line to copy (the CLI puts backticks around the first kind).
        public var command: @Sendable (_ command: OperatorCommand, _ arguments: [CommandArgument], _ quoted: Bool) -> String

        public init(field: @escaping @Sendable (InputField) -> String,
                    command: @escaping @Sendable (OperatorCommand, [CommandArgument], Bool) -> String) {
            self.field = field
            self.command = command
        }

        /// Plain words, no front end's syntax: `keepEmail`, `merge plan from U2 into U1`. For logs and tests.
        public static let neutral = Spelling(field: { $0.rawValue }, command: { command, arguments, _ in
            ([command.rawValue] + arguments.map { argument in
                switch argument {
                case .word(let word): return word
                case .option(let field, let value): return value.map { "\(field.rawValue) \($0)" } ?? field.rawValue
                }
            }).joined(separator: " ")
        })
    }

    /// `text` with each reference put into words by `spelling`, and stray marker characters shown as U+FFFD.
    public static func render(_ text: String, _ spelling: Spelling) -> String {
        guard mayHoldReferences(text.utf8) else { return text }
        var out = String.UnicodeScalarView()
        var pending: String.UnicodeScalarView?   // the payload of a reference being read
        for scalar in text.unicodeScalars {
            switch scalar {
            case open:
                if pending != nil { out.append(replacement) }   // an open that was never closed
                pending = String.UnicodeScalarView()
            case close:
                if let payload = pending {
                    out.append(contentsOf: reference(payload, spelling).unicodeScalars)
                    pending = nil
                } else {
                    out.append(replacement)
                }
            case separator where pending != nil:
                pending!.append(scalar)
            default:
                if pending != nil { pending!.append(scalar) } else { out.append(isMarker(scalar) ? replacement : scalar) }
            }
        }
        if let payload = pending {
            out.append(replacement)
            out.append(contentsOf: payload.map { $0 == separator ? " " : $0 })
        }
        return String(out)
    }

    /// The words for one reference's payload, or U+FFFD and its plain text when it is not one Gatehouse writes.
    private static func reference(_ payload: String.UnicodeScalarView, _ spelling: Spelling) -> String {
        let parts = String(payload).split(separator: Character(separator), omittingEmptySubsequences: false).map(String.init)
        let head = parts[0]
        let invalid = "\u{FFFD}" + parts.joined(separator: " ")
        switch head.first {
        case "f":
            guard parts.count == 1, let field = InputField(rawValue: String(head.dropFirst())) else { return invalid }
            return spelling.field(field)
        case "c", "r":
            guard let command = OperatorCommand(rawValue: String(head.dropFirst())) else { return invalid }
            var arguments: [CommandArgument] = []
            for part in parts.dropFirst() {
                switch part.first {
                case "w": arguments.append(.word(String(part.dropFirst())))
                case "o":
                    let body = part.dropFirst()
                    let name = body.prefix { $0 != "=" }
                    guard let field = InputField(rawValue: String(name)) else { return invalid }
                    arguments.append(.option(field, name.count < body.count ? String(body.dropFirst(name.count + 1)) : nil))
                default: return invalid
                }
            }
            return spelling.command(command, arguments, head.first == "c")
        default:
            return invalid
        }
    }

    /// The marked form of a field.
    static func mark(_ field: InputField) -> String { "\(open)f\(field.rawValue)\(close)" }

    /// The marked form of a command; words and values given by users lose any marker characters.
    static func mark(_ command: OperatorCommand, _ arguments: [CommandArgument], quoted: Bool) -> String {
        func clean(_ text: String) -> String {
            String(String.UnicodeScalarView(text.unicodeScalars.map { isMarker($0) ? replacement : $0 }))
        }
        let parts = arguments.map { argument -> String in
            switch argument {
            case .word(let word): return "w" + clean(word)
            case .option(let field, let value): return "o" + field.rawValue + (value.map { "=" + clean($0) } ?? "")
            }
        }
        return "\(open)\(quoted ? "c" : "r")\(command.rawValue)" + parts.map { "\(separator)\($0)" }.joined() + "\(close)"
    }
}

extension DefaultStringInterpolation {
    /// A field, spelled by each front end its own way: `"… without \(field: .reveal)"`.
    public mutating func appendInterpolation(field: InputField) {
        appendLiteral(DomainText.mark(field))
    }

    /// A command to run, named: `"list merges with \(command: .mergeList)"` (the CLI shows `` `gatehouse merge list` ``).
    public mutating func appendInterpolation(command: OperatorCommand, _ arguments: CommandArgument...) {
        appendLiteral(DomainText.mark(command, arguments, quoted: true))
    }

    /// A command line to copy: `"then: \(run: .gatesEnable, "apple", .option(.platform, "ios"))"` (the CLI shows
    /// `gatehouse gates enable apple --platform ios`, without backticks).
    public mutating func appendInterpolation(run command: OperatorCommand, _ arguments: CommandArgument...) {
        appendLiteral(DomainText.mark(command, arguments, quoted: false))
    }

    /// A command line to copy, with arguments assembled beforehand.
    public mutating func appendInterpolation(run command: OperatorCommand, arguments: [CommandArgument]) {
        appendLiteral(DomainText.mark(command, arguments, quoted: false))
    }
}
