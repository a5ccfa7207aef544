@testable import D1Engine
import Foundation
@testable import PostgresEngine
@testable import SQLiteEngine
import TestEngines
import XCTest

/// CLibPQ's shim.h copies libpq's types, constants and signatures instead of including libpq-fe.h (which building
/// must not need). Where libpq-dev happens to be installed, a C compiler checks every copy against the real header,
/// so a mistyped signature or constant cannot go unnoticed.
final class LibPQShimTests: XCTestCase {
    func testShimAgreesWithLibpqFeH() throws {
        let header = "/usr/include/postgresql/libpq-fe.h"
        guard FileManager.default.fileExists(atPath: header) else {
            throw XCTSkip("libpq-dev is not installed (\(header)): nothing to check the shim against")
        }
        guard let compiler = ["/usr/bin/cc", "/usr/bin/gcc", "/usr/bin/clang"].first(where: FileManager.default.isExecutableFile) else {
            throw XCTSkip("no C compiler to check the shim with")
        }
        let shim = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/CLibPQ/shim.h").standardized.path
        let constants = ["CONNECTION_OK", "CONNECTION_BAD", "PGRES_EMPTY_QUERY", "PGRES_COMMAND_OK", "PGRES_TUPLES_OK",
                         "PGRES_COPY_OUT", "PGRES_COPY_IN", "PGRES_BAD_RESPONSE", "PGRES_NONFATAL_ERROR", "PGRES_FATAL_ERROR",
                         "PGRES_SINGLE_TUPLE", "PGRES_PIPELINE_SYNC", "PGRES_PIPELINE_ABORTED",
                         "PQTRANS_IDLE", "PQTRANS_ACTIVE", "PQTRANS_INTRANS", "PQTRANS_INERROR", "PQTRANS_UNKNOWN",
                         "PG_DIAG_SQLSTATE", "PG_DIAG_MESSAGE_PRIMARY", "PG_DIAG_MESSAGE_HINT", "PG_DIAG_SCHEMA_NAME",
                         "PG_DIAG_TABLE_NAME", "PG_DIAG_COLUMN_NAME", "PG_DIAG_CONSTRAINT_NAME"]
        let functions = ["lib_version": "PQlibVersion", "connectdb_params": "PQconnectdbParams", "error_message": "PQerrorMessage",
                         "finish": "PQfinish", "server_version": "PQserverVersion", "set_notice_processor": "PQsetNoticeProcessor",
                         "exec": "PQexec", "exec_params": "PQexecParams", "result_error_message": "PQresultErrorMessage",
                         "result_error_field": "PQresultErrorField", "ntuples": "PQntuples", "nfields": "PQnfields",
                         "fname": "PQfname", "ftype": "PQftype", "cmd_tuples": "PQcmdTuples", "getvalue": "PQgetvalue",
                         "getlength": "PQgetlength", "getisnull": "PQgetisnull", "clear": "PQclear",
                         "send_query_params": "PQsendQueryParams", "flush": "PQflush", "pipeline": "PQenterPipelineMode",
                         "send_query_prepared": "PQsendQueryPrepared", "get_result": "PQgetResult",
                         "send_prepare": "PQsendPrepare", "send_describe_prepared": "PQsendDescribePrepared",
                         "socket": "PQsocket", "consume_input": "PQconsumeInput"]
        // Functions whose result is one of libpq's enums, declared `int` in the shim: the enum must be int-sized.
        // (Their arguments are one connection or result pointer each; the live tests call all three.)
        let enumResults = ["status": ("PQstatus", "ConnStatusType"), "transaction_status": ("PQtransactionStatus", "PGTransactionStatusType"),
                           "result_status": ("PQresultStatus", "ExecStatusType")]
        var source = "#include <libpq-fe.h>\nenum {\n"
        source += constants.map { "    real_\($0) = \($0)," }.joined(separator: "\n") + "\n};\n"
        source += "#include \"\(shim)\"\n"
        source += constants.map { "_Static_assert(\($0) == real_\($0), \"\($0)\");" }.joined(separator: "\n") + "\n"
        for (name, function) in functions.sorted(by: { $0.key < $1.key }) {
            source += "_Static_assert(__builtin_types_compatible_p(gatehouse_pq_\(name)_fn, __typeof__(&\(function))), \"\(function)\");\n"
        }
        for (name, (function, type)) in enumResults.sorted(by: { $0.key < $1.key }) {
            source += "_Static_assert(sizeof(\(type)) == sizeof(int), \"\(type)\");\n"
            source += "static const void *const check_\(name) = (const void *)&\(function);\n"
        }
        source += "_Static_assert(__builtin_types_compatible_p(gatehouse_pq_notice_processor, PQnoticeProcessor), \"PQnoticeProcessor\");\n"
        source += "_Static_assert(__builtin_types_compatible_p(Oid, unsigned int), \"Oid\");\n"

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-shim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("check.c")
        try source.write(to: file, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: compiler)
        process.arguments = ["-std=c11", "-fsyntax-only", "-Wall", "-Werror", "-Wno-unused-variable",
                             "-I/usr/include/postgresql", file.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "shim.h disagrees with libpq-fe.h:\n\(output)")
    }
}
