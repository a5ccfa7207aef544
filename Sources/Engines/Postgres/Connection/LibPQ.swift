import CLibPQ
import Glibc
import Storage

/// libpq, loaded with `dlopen` the first time a Postgres store is opened rather than linked.
///
/// The product links against libsqlite3, libcrypto and libmicrohttpd only: a SQLite-only user never needs libpq,
/// and building needs no libpq header (CLibPQ's shim.h declares the few types and function types used). The
/// functions Storage calls are looked up once here, each typed after its declaration in libpq-fe.h.
///
///     let pq = try LibPQ.load()
///     let connection = pq.connectdbParams(keywords, values, 0)
struct LibPQ: @unchecked Sendable { // function pointers, looked up once and never changed
    /// The library's file name: libpq's ABI has been version 5 since PostgreSQL 8.2.
    static let soname = "libpq.so.5"
    /// The Debian package that installs it.
    static let package = "libpq5"

    let libVersion: gatehouse_pq_lib_version_fn
    let connectdbParams: gatehouse_pq_connectdb_params_fn
    let status: gatehouse_pq_status_fn
    let errorMessage: gatehouse_pq_error_message_fn
    let finish: gatehouse_pq_finish_fn
    let transactionStatus: gatehouse_pq_transaction_status_fn
    let serverVersion: gatehouse_pq_server_version_fn
    let setNoticeProcessor: gatehouse_pq_set_notice_processor_fn
    let exec: gatehouse_pq_exec_fn
    let execParams: gatehouse_pq_exec_params_fn
    let prepare: gatehouse_pq_prepare_fn
    let describePrepared: gatehouse_pq_describe_prepared_fn
    let execPrepared: gatehouse_pq_exec_prepared_fn
    let sendQueryPrepared: gatehouse_pq_send_query_prepared_fn
    let setSingleRowMode: gatehouse_pq_set_single_row_mode_fn
    let sendQueryParams: gatehouse_pq_send_query_params_fn
    let sendPrepare: gatehouse_pq_send_prepare_fn
    let sendDescribePrepared: gatehouse_pq_send_describe_prepared_fn
    let flush: gatehouse_pq_flush_fn
    /// Pipeline mode, when the library has it (libpq 14 and later; Debian 12's is 15).
    let pipeline: Pipeline?

    struct Pipeline {
        let enter: gatehouse_pq_pipeline_fn
        let exit: gatehouse_pq_pipeline_fn
        let sync: gatehouse_pq_pipeline_fn
    }
    let getResult: gatehouse_pq_get_result_fn
    let putCopyData: gatehouse_pq_put_copy_data_fn
    let putCopyEnd: gatehouse_pq_put_copy_end_fn
    let nparams: gatehouse_pq_nparams_fn
    let paramtype: gatehouse_pq_paramtype_fn
    let resultStatus: gatehouse_pq_result_status_fn
    let resultErrorMessage: gatehouse_pq_result_error_message_fn
    let resultErrorField: gatehouse_pq_result_error_field_fn
    let ntuples: gatehouse_pq_ntuples_fn
    let nfields: gatehouse_pq_nfields_fn
    let fname: gatehouse_pq_fname_fn
    let ftype: gatehouse_pq_ftype_fn
    let cmdTuples: gatehouse_pq_cmd_tuples_fn
    let getvalue: gatehouse_pq_getvalue_fn
    let getlength: gatehouse_pq_getlength_fn
    let getisnull: gatehouse_pq_getisnull_fn
    let clear: gatehouse_pq_clear_fn
    let socket: gatehouse_pq_socket_fn
    let consumeInput: gatehouse_pq_consume_input_fn

    /// The library, loaded on first use and kept for the life of the process; or why it cannot be.
    private static let loaded = Result { () throws(PostgresError) in try LibPQ(soname: soname) }

    /// The loaded library. Throws one line naming the library and the Debian package to install when it is missing.
    static func load() throws(PostgresError) -> LibPQ { try loaded.get() }

    /// Opens `soname` and looks up every function Storage calls. Tests pass a name that does not exist to see
    /// the message a user without libpq gets.
    init(soname: String) throws(PostgresError) {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            throw PostgresError(kind: .library, message: "A Postgres store needs libpq (\(soname)), which could not be loaded: "
                                + Self.lastError() + ". Install it: apt-get install \(Self.package).")
        }
        func symbol<F>(_ name: String, as type: F.Type) throws(PostgresError) -> F {
            guard let address = dlsym(handle, name) else {
                let error = Self.lastError()
                dlclose(handle)
                throw PostgresError(kind: .library, message: "A Postgres store needs a libpq with \(name), which \(soname) lacks "
                                    + "(\(error)). Install the current \(Self.package).")
            }
            return unsafeBitCast(address, to: type)
        }
        libVersion = try symbol("PQlibVersion", as: gatehouse_pq_lib_version_fn.self)
        connectdbParams = try symbol("PQconnectdbParams", as: gatehouse_pq_connectdb_params_fn.self)
        status = try symbol("PQstatus", as: gatehouse_pq_status_fn.self)
        errorMessage = try symbol("PQerrorMessage", as: gatehouse_pq_error_message_fn.self)
        finish = try symbol("PQfinish", as: gatehouse_pq_finish_fn.self)
        transactionStatus = try symbol("PQtransactionStatus", as: gatehouse_pq_transaction_status_fn.self)
        serverVersion = try symbol("PQserverVersion", as: gatehouse_pq_server_version_fn.self)
        setNoticeProcessor = try symbol("PQsetNoticeProcessor", as: gatehouse_pq_set_notice_processor_fn.self)
        exec = try symbol("PQexec", as: gatehouse_pq_exec_fn.self)
        execParams = try symbol("PQexecParams", as: gatehouse_pq_exec_params_fn.self)
        prepare = try symbol("PQprepare", as: gatehouse_pq_prepare_fn.self)
        describePrepared = try symbol("PQdescribePrepared", as: gatehouse_pq_describe_prepared_fn.self)
        execPrepared = try symbol("PQexecPrepared", as: gatehouse_pq_exec_prepared_fn.self)
        sendQueryPrepared = try symbol("PQsendQueryPrepared", as: gatehouse_pq_send_query_prepared_fn.self)
        setSingleRowMode = try symbol("PQsetSingleRowMode", as: gatehouse_pq_set_single_row_mode_fn.self)
        sendQueryParams = try symbol("PQsendQueryParams", as: gatehouse_pq_send_query_params_fn.self)
        sendPrepare = try symbol("PQsendPrepare", as: gatehouse_pq_send_prepare_fn.self)
        sendDescribePrepared = try symbol("PQsendDescribePrepared", as: gatehouse_pq_send_describe_prepared_fn.self)
        flush = try symbol("PQflush", as: gatehouse_pq_flush_fn.self)
        if let enter = dlsym(handle, "PQenterPipelineMode"), let exit = dlsym(handle, "PQexitPipelineMode"),
           let sync = dlsym(handle, "PQpipelineSync") {
            pipeline = Pipeline(enter: unsafeBitCast(enter, to: gatehouse_pq_pipeline_fn.self),
                                exit: unsafeBitCast(exit, to: gatehouse_pq_pipeline_fn.self),
                                sync: unsafeBitCast(sync, to: gatehouse_pq_pipeline_fn.self))
        } else {
            pipeline = nil
        }
        getResult = try symbol("PQgetResult", as: gatehouse_pq_get_result_fn.self)
        putCopyData = try symbol("PQputCopyData", as: gatehouse_pq_put_copy_data_fn.self)
        putCopyEnd = try symbol("PQputCopyEnd", as: gatehouse_pq_put_copy_end_fn.self)
        nparams = try symbol("PQnparams", as: gatehouse_pq_nparams_fn.self)
        paramtype = try symbol("PQparamtype", as: gatehouse_pq_paramtype_fn.self)
        resultStatus = try symbol("PQresultStatus", as: gatehouse_pq_result_status_fn.self)
        resultErrorMessage = try symbol("PQresultErrorMessage", as: gatehouse_pq_result_error_message_fn.self)
        resultErrorField = try symbol("PQresultErrorField", as: gatehouse_pq_result_error_field_fn.self)
        ntuples = try symbol("PQntuples", as: gatehouse_pq_ntuples_fn.self)
        nfields = try symbol("PQnfields", as: gatehouse_pq_nfields_fn.self)
        fname = try symbol("PQfname", as: gatehouse_pq_fname_fn.self)
        ftype = try symbol("PQftype", as: gatehouse_pq_ftype_fn.self)
        cmdTuples = try symbol("PQcmdTuples", as: gatehouse_pq_cmd_tuples_fn.self)
        getvalue = try symbol("PQgetvalue", as: gatehouse_pq_getvalue_fn.self)
        getlength = try symbol("PQgetlength", as: gatehouse_pq_getlength_fn.self)
        getisnull = try symbol("PQgetisnull", as: gatehouse_pq_getisnull_fn.self)
        clear = try symbol("PQclear", as: gatehouse_pq_clear_fn.self)
        socket = try symbol("PQsocket", as: gatehouse_pq_socket_fn.self)
        consumeInput = try symbol("PQconsumeInput", as: gatehouse_pq_consume_input_fn.self)
    }

    private static func lastError() -> String { dlerror().map { String(cString: $0) } ?? "unknown error" }
}
