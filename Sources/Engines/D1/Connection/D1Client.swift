import Foundation
import HTTPClient
import Storage

/// One D1 database's query API: a request is one batch of statements, which D1 runs as one transaction (all or
/// nothing), answered with each statement's columns, rows and changes (`/raw`).
///
/// Bounded and retried by what each failure means: a 429 is retried after its `Retry-After` (a refusal, so nothing
/// ran), a server error or a cut connection is retried only for a request that reads. A write is sent again only when
/// it provably never left (`HTTPFailure.unreachable`: no connection, no TLS); anything after it may have been sent —
/// a cut connection, a timeout, a malformed answer — is reported as of unknown outcome, never sent twice.
struct D1Client {
    let location: D1Location
    let timeout: Double
    /// Seconds one operation (`run`: every try and every wait between them) may take in all; nil for the bounds of
    /// `maxAttempts` tries of `timeout` each and `maxWaitSeconds` of waits. A console's request sets it, so that its
    /// D1 work ends within the request's deadline.
    var budget: Double? = nil

    /// Seconds one request may take: `GATEHOUSE_D1_TIMEOUT_SECONDS`, default 45 (D1 stops a query at 30 s).
    static var defaultTimeout: Double {
        guard let text = ProcessInfo.processInfo.environment["GATEHOUSE_D1_TIMEOUT_SECONDS"], let value = Double(text),
              value >= 0.1, value <= 600 else { return 45 }
        return value
    }

    static let maxAnswerVariable = "GATEHOUSE_D1_MAX_ANSWER_BYTES"

    /// The largest answer read: `GATEHOUSE_D1_MAX_ANSWER_BYTES` (1 MiB to 1 GiB), default 64 MiB — a page of a scan
    /// is a few MB. A larger one is refused before any of it is parsed: parsed, an answer takes several times its size.
    static var maxAnswerBytes: Int {
        guard let text = ProcessInfo.processInfo.environment[maxAnswerVariable], let value = Int(text.trimmingCharacters(in: .whitespaces)) else {
            return 64 << 20
        }
        return min(max(value, 1 << 20), 1 << 30)
    }
    /// Tries for a 429 or (when reading) a server error; the waits between them stay under `maxWaitSeconds` in all.
    static let maxAttempts = 4
    static let maxWaitSeconds = 60.0
    /// The least time worth another try within a budget.
    static let shortestTry = 0.25

    struct Result {
        let columns: [String]
        let rows: [[SQLValue]]
        let changes: Int
        /// The database's size in bytes after the statement (`meta.size_after`), when the answer says.
        let sizeAfter: Int?
    }

    /// Runs `statements` as one request. `reads` says whether it only reads (then a server error is retried).
    func run(_ statements: [D1Statement], reads: Bool) throws(D1Error) -> [Result] {
        let token = try D1Location.token()
        for statement in statements {
            guard statement.sql.utf8.count <= D1Statement.maxBytes else {
                throw D1Error(.unsupported, "a statement for \(location) is over D1's 100 KB limit (\(statement.sql.utf8.count / 1024) KB); nothing was sent")
            }
        }
        var body = "{\"batch\":["
        for (index, statement) in statements.enumerated() {
            if index > 0 { body += "," }
            body += "{\"sql\":" + D1JSON.quoted(statement.sql)
            if !statement.params.isEmpty { body += ",\"params\":[" + statement.params.map(D1JSON.quoted).joined(separator: ",") + "]" }
            body += "}"
        }
        body += "]}"
        let request = HTTPRequest(method: "POST", url: location.rawEndpoint,
                                  headers: ["Authorization: Bearer \(token)", "Content-Type: application/json", "Accept: application/json"],
                                  body: Array(body.utf8), timeout: timeout, caFile: location.caFile, maxAnswerBytes: Self.maxAnswerBytes)
        let started = DispatchTime.now().uptimeNanoseconds
        /// What is left of the budget, in seconds; nil without one.
        func remaining() -> Double? {
            budget.map { $0 - Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 }
        }
        var waited = 0.0
        var attempt = 1
        while true {
            var bounded = request
            if let left = remaining() { bounded.timeout = max(min(timeout, left), 0.001) }
            let answer: HTTPAnswer
            do {
                answer = try HTTPClient.send(bounded)
            } catch {
                if case .answerTooLarge(let limit) = error {
                    throw D1Error(.badAnswer, "Cloudflare's API answered \(location) with more than \(limit >> 20) MiB, which Gatehouse does not read (\(Self.maxAnswerVariable))"
                                  + (reads ? "" : Self.unknownOutcome), outcomeUnknown: !reads)
                }
                // Sent again only when it is a read, or provably never left.
                let sent = error.mayHaveBeenSent
                if reads || !sent, let pause = pause(attempt: attempt, waited: waited, retryAfter: nil, remaining: remaining()) {
                    Thread.sleep(forTimeInterval: pause); waited += pause; attempt += 1; continue
                }
                throw D1Error(.unavailable, error.describe("Cloudflare's API for \(location)") + (sent && !reads ? Self.unknownOutcome : ""),
                              outcomeUnknown: sent && !reads)
            }
            switch answer.status {
            case 200..<300, 400:
                do {
                    return try decode(answer, count: statements.contains(where: \.isScript) ? nil : statements.count)
                } catch {
                    // D1 refused the batch (nothing ran), or the answer cannot be read: then a write may have run.
                    guard !reads, error.kind != .statement else { throw error }
                    throw D1Error(error.kind, error.message + Self.unknownOutcome, outcomeUnknown: true)
                }
            case 401, 403:
                throw D1Error(.permission, "Cloudflare's API refused the API token for \(location) (HTTP \(answer.status)\(Self.firstError(answer).map { ": \($0)" } ?? "")): it is not valid, or may not use this database",
                              outcomeUnknown: false)
            case 404:
                throw D1Error(.notFound, "Cloudflare's API knows no D1 database \(location.database) in account \(location.account) (HTTP 404)")
            case 429:
                let retryAfter = answer.headers["retry-after"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
                if let pause = pause(attempt: attempt, waited: waited, retryAfter: retryAfter, remaining: remaining()) {
                    Thread.sleep(forTimeInterval: pause); waited += pause; attempt += 1; continue
                }
                throw D1Error(.rateLimited(retryAfter: retryAfter),
                              "Cloudflare's API rate limit (HTTP 429) held for \(location) over \(attempt) tries in \(Int(waited.rounded())) s; nothing was changed")
            case 500...599:
                if reads, let pause = pause(attempt: attempt, waited: waited, retryAfter: nil, remaining: remaining()) {
                    Thread.sleep(forTimeInterval: pause); waited += pause; attempt += 1; continue
                }
                throw D1Error(.unavailable, "Cloudflare's API answered HTTP \(answer.status) for \(location)" + (reads ? " \(attempt) times" : Self.unknownOutcome),
                              outcomeUnknown: !reads)
            default:
                throw D1Error(.badAnswer, "Cloudflare's API answered HTTP \(answer.status) for \(location), which Gatehouse does not expect" + (reads ? "" : Self.unknownOutcome),
                              outcomeUnknown: !reads)
            }
        }
    }

    static let unknownOutcome = "; the write may or may not have been applied: check `gatehouse audit` before running it again"

    /// How long to wait before try `attempt + 1`, or nil when the tries or the time are spent.
    /// Within a budget, a pause must leave time for a try after it: a `Retry-After` longer than what is left ends
    /// the operation at once.
    private func pause(attempt: Int, waited: Double, retryAfter: Int?, remaining: Double?) -> Double? {
        guard attempt < Self.maxAttempts else { return nil }
        let pause = retryAfter.map { Double(min(max($0, 0), 30)) } ?? 0.25 * Double(1 << (attempt - 1))
        guard waited + pause <= Self.maxWaitSeconds else { return nil }
        if let remaining, pause + Self.shortestTry > remaining { return nil }
        return pause
    }

    /// The first error message in an answer's envelope, cleaned of anything quoted from the SQL.
    static func firstError(_ answer: HTTPAnswer) -> String? {
        guard let json = try? D1JSON.parse(answer.body), let first = json["errors"]?.array?.first else { return nil }
        let message = first["message"]?.string ?? ""
        let code = first["code"]?.int
        let text = scrub(message)
        return text.isEmpty ? code.map { "code \($0)" } : (code.map { "\(text) (code \($0))" } ?? text)
    }

    /// A message of D1's without what it may quote from the statement (`near "…"`): Gatehouse writes text values
    /// past D1's parameter limit into the SQL as literals, so a quoted fragment could be one of them.
    static func scrub(_ message: String) -> String {
        var text = message
        if let near = text.range(of: "near \"") ?? text.range(of: "near '") {
            let quote = text[text.index(before: near.upperBound)]
            if let close = text[near.upperBound...].firstIndex(of: quote) {
                text.replaceSubrange(near.lowerBound...close, with: "near …")
            } else {
                text = String(text[..<near.lowerBound]) + "near …"
            }
        }
        return String(text.prefix(300)).filter { !$0.isNewline }
    }

    /// The answer's results; `count` is how many there must be (nil when a script's statements each have one).
    private func decode(_ answer: HTTPAnswer, count: Int?) throws(D1Error) -> [Result] {
        let json: D1JSON
        do { json = try D1JSON.parse(answer.body) } catch {
            throw D1Error(.badAnswer, "Cloudflare's API answered HTTP \(answer.status) for \(location) with a body that is not JSON (at byte \(error.offset))")
        }
        guard let success = json["success"]?.bool else {
            throw D1Error(.badAnswer, "Cloudflare's API answered \(location) without its envelope (no \"success\")")
        }
        guard success, answer.status != 400 else {
            let message = Self.firstError(answer) ?? "no error message"
            let raw = json["errors"]?.array?.first?["message"]?.string ?? ""
            throw D1Error(.statement, "D1 refused a statement on \(location): \(message)", outcomeUnknown: false, failedGuard: D1Guard.failed(in: raw))
        }
        guard let results = json["result"]?.array, count.map({ results.count == $0 }) ?? !results.isEmpty else {
            throw D1Error(.badAnswer, "Cloudflare's API answered \(location) with \(json["result"]?.array?.count ?? 0) results for \(count ?? 0) statements")
        }
        var decoded: [Result] = []
        decoded.reserveCapacity(results.count)
        for item in results {
            guard item["success"]?.bool != false else {
                throw D1Error(.statement, "D1 refused a statement on \(location): \(Self.scrub(item["error"]?.string ?? "no error message"))")
            }
            let body = item["results"]
            let columns = (body?["columns"]?.array ?? []).map { $0.string ?? "" }
            let items = body?["rows"]?.array ?? []
            var rows: [[SQLValue]] = []
            rows.reserveCapacity(items.count)
            for row in items {
                guard let cells = row.array, cells.count == columns.count else {
                    throw D1Error(.badAnswer, "Cloudflare's API answered \(location) with a row of another width than its columns")
                }
                var values: [SQLValue] = []
                values.reserveCapacity(cells.count)
                for cell in cells { values.append(try value(cell)) }
                rows.append(values)
            }
            decoded.append(Result(columns: columns, rows: rows, changes: item["meta"]?["changes"]?.int ?? 0,
                                  sizeAfter: item["meta"]?["size_after"]?.int))
        }
        return decoded
    }

    /// 2^53: from it on, a JavaScript number (how D1 sends an integer) is not exact — 2^53 + 1 arrives as 2^53, so an
    /// answer of 2^53 may be either.
    static let exactIntegerLimit: Int64 = 9_007_199_254_740_992

    private func value(_ cell: D1JSON) throws(D1Error) -> SQLValue {
        switch cell {
        case .null: return .null
        case .string(let text): return .text(text)
        case .bool(let flag): return .integer(flag ? 1 : 0)
        case .number(let text):
            if !text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), let integer = Int64(text) {
                guard integer.magnitude < Self.exactIntegerLimit.magnitude else {
                    throw D1Error(.badAnswer, "D1 sent \(location) an integer beyond 2^53, which a JavaScript number cannot hold exactly")
                }
                return .integer(integer)
            }
            guard let real = Double(text), real.isFinite else {
                throw D1Error(.badAnswer, "D1 sent \(location) a number Gatehouse cannot read")
            }
            if real == real.rounded(), abs(real) >= Double(Self.exactIntegerLimit), !text.contains(".") {
                throw D1Error(.badAnswer, "D1 sent \(location) an integer beyond 2^53, which a JavaScript number cannot hold exactly")
            }
            return .real(real)
        case .array(let items):
            var bytes: [UInt8] = []
            bytes.reserveCapacity(items.count)
            for item in items {
                guard case .number(let text) = item, let byte = UInt8(text) else {
                    throw D1Error(.badAnswer, "D1 sent \(location) an array that is not a BLOB's bytes")
                }
                bytes.append(byte)
            }
            return .blob(bytes)
        case .bytes(let bytes):
            return .blob(bytes)
        case .object:
            throw D1Error(.badAnswer, "D1 sent \(location) an object where a value was expected")
        }
    }
}
