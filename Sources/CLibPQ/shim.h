#ifndef GATEHOUSE_CLIBPQ_SHIM_H
#define GATEHOUSE_CLIBPQ_SHIM_H
#include <stddef.h>

/* libpq is neither linked nor needed to build: Storage loads libpq.so.5 with dlopen the first time a Postgres
   store is opened (Storage/Postgres/LibPQ.swift), so a SQLite-only user never needs it and libpq-dev is not a
   build dependency. This header declares the few types, constants and function types Storage uses, copied from
   libpq-fe.h and postgres_ext.h of libpq 5 (whose ABI is stable: the values below are part of it). Nothing here
   is a function declaration, so nothing can be called without going through the loader. */

/* Opaque handles. */
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef unsigned int Oid;

/* ConnStatusType (an enum, int-sized in the ABI). */
#define CONNECTION_OK 0
#define CONNECTION_BAD 1

/* ExecStatusType. */
#define PGRES_EMPTY_QUERY 0
#define PGRES_COMMAND_OK 1
#define PGRES_TUPLES_OK 2
#define PGRES_COPY_OUT 3
#define PGRES_COPY_IN 4
#define PGRES_BAD_RESPONSE 5
#define PGRES_NONFATAL_ERROR 6
#define PGRES_FATAL_ERROR 7
#define PGRES_SINGLE_TUPLE 9
#define PGRES_PIPELINE_SYNC 10
#define PGRES_PIPELINE_ABORTED 11

/* PGTransactionStatusType. */
#define PQTRANS_IDLE 0
#define PQTRANS_ACTIVE 1
#define PQTRANS_INTRANS 2
#define PQTRANS_INERROR 3
#define PQTRANS_UNKNOWN 4

/* PQresultErrorField field codes (postgres_ext.h). */
#define PG_DIAG_SQLSTATE 'C'
#define PG_DIAG_MESSAGE_PRIMARY 'M'
#define PG_DIAG_MESSAGE_HINT 'H'
#define PG_DIAG_SCHEMA_NAME 's'
#define PG_DIAG_TABLE_NAME 't'
#define PG_DIAG_COLUMN_NAME 'c'
#define PG_DIAG_CONSTRAINT_NAME 'n'

/* Function types, one per libpq function Storage calls; enum results and arguments are `int`. */
typedef void (*gatehouse_pq_notice_processor)(void *arg, const char *message);

typedef int (*gatehouse_pq_lib_version_fn)(void);
typedef PGconn *(*gatehouse_pq_connectdb_params_fn)(const char *const *keywords, const char *const *values, int expand_dbname);
typedef int (*gatehouse_pq_status_fn)(const PGconn *conn);
typedef char *(*gatehouse_pq_error_message_fn)(const PGconn *conn);
typedef void (*gatehouse_pq_finish_fn)(PGconn *conn);
typedef int (*gatehouse_pq_transaction_status_fn)(const PGconn *conn);
typedef int (*gatehouse_pq_server_version_fn)(const PGconn *conn);
typedef gatehouse_pq_notice_processor (*gatehouse_pq_set_notice_processor_fn)(PGconn *conn, gatehouse_pq_notice_processor proc, void *arg);
typedef PGresult *(*gatehouse_pq_exec_fn)(PGconn *conn, const char *query);
typedef PGresult *(*gatehouse_pq_exec_params_fn)(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                                                 const char *const *paramValues, const int *paramLengths,
                                                 const int *paramFormats, int resultFormat);
typedef PGresult *(*gatehouse_pq_prepare_fn)(PGconn *conn, const char *stmtName, const char *query, int nParams,
                                             const Oid *paramTypes);
typedef PGresult *(*gatehouse_pq_describe_prepared_fn)(PGconn *conn, const char *stmtName);
typedef int (*gatehouse_pq_send_prepare_fn)(PGconn *conn, const char *stmtName, const char *query, int nParams,
                                            const Oid *paramTypes);
typedef int (*gatehouse_pq_send_describe_prepared_fn)(PGconn *conn, const char *stmtName);
typedef PGresult *(*gatehouse_pq_exec_prepared_fn)(PGconn *conn, const char *stmtName, int nParams,
                                                   const char *const *paramValues, const int *paramLengths,
                                                   const int *paramFormats, int resultFormat);
typedef int (*gatehouse_pq_send_query_prepared_fn)(PGconn *conn, const char *stmtName, int nParams,
                                                   const char *const *paramValues, const int *paramLengths,
                                                   const int *paramFormats, int resultFormat);
typedef int (*gatehouse_pq_set_single_row_mode_fn)(PGconn *conn);
typedef int (*gatehouse_pq_send_query_params_fn)(PGconn *conn, const char *command, int nParams, const Oid *paramTypes,
                                                 const char *const *paramValues, const int *paramLengths,
                                                 const int *paramFormats, int resultFormat);
/* Pipeline mode (libpq 14 and later): enter, exit, sync; and flushing the output buffer. */
typedef int (*gatehouse_pq_pipeline_fn)(PGconn *conn);
typedef int (*gatehouse_pq_flush_fn)(PGconn *conn);
typedef PGresult *(*gatehouse_pq_get_result_fn)(PGconn *conn);
typedef int (*gatehouse_pq_put_copy_data_fn)(PGconn *conn, const char *buffer, int nbytes);
typedef int (*gatehouse_pq_put_copy_end_fn)(PGconn *conn, const char *errormsg);
typedef int (*gatehouse_pq_nparams_fn)(const PGresult *res);
typedef Oid (*gatehouse_pq_paramtype_fn)(const PGresult *res, int param_num);
typedef int (*gatehouse_pq_result_status_fn)(const PGresult *res);
typedef char *(*gatehouse_pq_result_error_message_fn)(const PGresult *res);
typedef char *(*gatehouse_pq_result_error_field_fn)(const PGresult *res, int fieldcode);
typedef int (*gatehouse_pq_ntuples_fn)(const PGresult *res);
typedef int (*gatehouse_pq_nfields_fn)(const PGresult *res);
typedef char *(*gatehouse_pq_fname_fn)(const PGresult *res, int field_num);
typedef Oid (*gatehouse_pq_ftype_fn)(const PGresult *res, int field_num);
typedef char *(*gatehouse_pq_cmd_tuples_fn)(PGresult *res);
typedef char *(*gatehouse_pq_getvalue_fn)(const PGresult *res, int tup_num, int field_num);
typedef int (*gatehouse_pq_getlength_fn)(const PGresult *res, int tup_num, int field_num);
typedef int (*gatehouse_pq_getisnull_fn)(const PGresult *res, int tup_num, int field_num);
typedef void (*gatehouse_pq_clear_fn)(PGresult *res);
/* The connection's socket, and reading what the server sent without waiting: how an idle pooled connection is
   found dead (a restarted server, a terminated backend) before a request uses it. */
typedef int (*gatehouse_pq_socket_fn)(const PGconn *conn);
typedef int (*gatehouse_pq_consume_input_fn)(PGconn *conn);

#endif
