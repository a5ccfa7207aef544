// swift-tools-version:6.0
//
// Gatehouse: an operations toolkit for a Better Auth sign-in stack.
// The only dependencies are the Swift toolchain and three system C libraries;
// no Swift package is fetched (the build machines cannot reach a package registry).
import PackageDescription

let package = Package(
    name: "Gatehouse",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "gatehouse", targets: ["gatehouse"]),
    ],
    targets: [
        // System libraries: one module map and a tiny shim header each.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // Headers only: HTTPServer loads libmicrohttpd with dlopen when a server starts, so that the other
        // commands do not load it (and GnuTLS behind it) at every start.
        .systemLibrary(name: "CMicroHTTPD", providers: [.apt(["libmicrohttpd-dev"])]),
        // Declarations only, no libpq header: PostgresEngine loads libpq (Debian's libpq5) with dlopen when a Postgres
        // store is opened, so neither building nor SQLite-only use needs it.
        .systemLibrary(name: "CLibPQ"),
        // Declarations only, no libcurl header: HTTPClient loads libcurl (Debian's libcurl4) with dlopen on the first
        // call (Apple's /auth/keys and /auth/revoke, a D1 store), so no other command loads it and the static build needs
        // no libcurl-dev.
        .systemLibrary(name: "CLibCurl"),
        // prctl, which Swift cannot call (variadic): the CLI makes its process undumpable at start.
        .systemLibrary(name: "CProcess"),

        // Infrastructure, with no domain knowledge. `Locking` is the one lock type (`Locked<Value>`) the others share.
        .target(name: "Locking"),
        // HTTP calls (Apple, Cloudflare D1's API) through libcurl loaded with dlopen.
        .target(name: "HTTPClient", dependencies: ["CLibCurl"]),
        // The store contract every engine implements and the domain reads through: no engine library behind it.
        .target(name: "Storage", dependencies: ["Locking"]),
        .target(name: "JOSE", dependencies: ["CCrypto", "Locking"]),
        .target(name: "HTTPServer", dependencies: ["CMicroHTTPD", "Locking"]),
        // The WebAuthn relying party: a strict CBOR reader, COSE keys, the options JSON and the §7.1/§7.2 checks.
        .target(name: "WebAuthn", dependencies: ["JOSE"]),

        // migrations/ and Public/ compiled into the binary, byte for byte, with the build's commit and date, so one
        // copied binary is a working install. The plugin and its generator live under Sources/ (the top level is fixed).
        .executableTarget(name: "EmbedResourcesGenerator", path: "Sources/EmbedResourcesGenerator"),
        .plugin(name: "EmbedResourcesPlugin", capability: .buildTool(), dependencies: ["EmbedResourcesGenerator"],
                path: "Sources/EmbedResourcesPlugin"),
        .target(name: "EmbeddedResources", plugins: ["EmbedResourcesPlugin"]),

        // The domain: one service layer that the CLI and the console both call.
        .target(name: "Gatehouse", dependencies: ["Storage", "JOSE", "Locking", "EmbeddedResources", "HTTPClient"]),
        .target(name: "Console", dependencies: ["Gatehouse", "HTTPServer", "Locking", "EmbeddedResources", "WebAuthn"]),

        // The engines, one target each (Sources/Engines/<Engine>/): the connection (`SQLDatabase`, its `SQLDialect`)
        // and the store engine (`StoreEngine`, what the domain asks of it). Only the executable and the tests link
        // them, and the executable registers them (`StoreEngines.register`): the domain cannot import one.
        .target(name: "SQLiteEngine", dependencies: ["Storage", "Gatehouse", "Locking", "CSQLite"], path: "Sources/Engines/SQLite"),
        .target(name: "PostgresEngine", dependencies: ["Storage", "Gatehouse", "Locking", "CLibPQ"], path: "Sources/Engines/Postgres"),
        // D1 speaks SQLite's SQL (its dialect is SQLite's but for rowids) through Cloudflare's HTTP API.
        .target(name: "D1Engine", dependencies: ["Storage", "Gatehouse", "Locking", "HTTPClient", "SQLiteEngine"], path: "Sources/Engines/D1"),
        .executableTarget(name: "gatehouse", dependencies: ["Console", "Gatehouse", "SQLiteEngine", "PostgresEngine", "D1Engine", "CProcess"]),

        // Every engine registered when the test binary loads (a C constructor calls TestEngines), as main.swift does.
        .target(name: "TestEngines", dependencies: ["Gatehouse", "Storage", "SQLiteEngine", "PostgresEngine", "D1Engine"], path: "Tests/TestEngines"),
        .target(name: "CTestEngineRegistration", dependencies: ["TestEngines"], path: "Tests/CTestEngineRegistration"),
        .testTarget(name: "LockingTests", dependencies: ["Locking"]),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "HTTPClient", "SQLiteEngine", "PostgresEngine", "D1Engine", "TestEngines", "CTestEngineRegistration"]),
        // Against the throw-away cluster ops/test starts (GATEHOUSE_TEST_PG_URI); skipped without it.
        .testTarget(name: "PostgresTests", dependencies: ["Storage", "Gatehouse", "SQLiteEngine", "PostgresEngine", "D1Engine", "TestEngines", "CTestEngineRegistration"]),
        .testTarget(name: "JOSETests", dependencies: ["JOSE"]),
        // A software authenticator (ES256, RS256) and the bytes a browser sends, shared by the tests of the relying party
        // and of the console's passkeys.
        .target(name: "WebAuthnTestSupport", dependencies: ["WebAuthn", "JOSE", "CCrypto"], path: "Tests/WebAuthnTestSupport"),
        .testTarget(name: "WebAuthnTests", dependencies: ["WebAuthn", "JOSE", "CCrypto", "WebAuthnTestSupport"]),
        // A raw-socket HTTP client shared by the tests that go over a real socket.
        .target(name: "HTTPTestSupport", path: "Tests/HTTPTestSupport"),
        .testTarget(name: "HTTPServerTests", dependencies: ["HTTPServer", "HTTPTestSupport"]),
        .testTarget(name: "GatehouseTests", dependencies: ["Gatehouse", "EmbeddedResources", "SQLiteEngine", "PostgresEngine", "D1Engine", "TestEngines", "CTestEngineRegistration"]),
        .testTarget(name: "ConsoleTests", dependencies: ["Console", "HTTPTestSupport", "WebAuthn", "WebAuthnTestSupport", "SQLiteEngine", "PostgresEngine", "D1Engine", "TestEngines", "CTestEngineRegistration"]),
        // Runs the built `gatehouse` binary the way a user does.
        .testTarget(name: "EndToEndTests", dependencies: ["HTTPTestSupport"]),
    ]
)
