#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process environment, read one variable at a time with `getenv`. A command reads two or three
/// variables; copying the whole environment into a dictionary (`ProcessInfo.environment`) at every
/// start costs more than the lookups. Fast path kept for ops/bench's cold-start row (`gatehouse --version` < 20 ms).
///
///     let store = invocation.environment["GATEHOUSE_STORE"]
struct Environment {
    /// The variable's value, or nil when it is not set.
    subscript(name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
