#ifndef GATEHOUSE_CMICROHTTPD_SHIM_H
#define GATEHOUSE_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <stdarg.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/* libmicrohttpd is not linked: HTTPServer loads it with dlopen when a server starts (MicroHTTPD.swift),
   because linking it makes every gatehouse command load GnuTLS and its eight dependencies at start.
   This header only declares types; each function is called through the pointer dlsym found, typed
   after its own declaration in microhttpd.h so that a mismatch cannot compile. */

typedef __typeof__(&MHD_stop_daemon) gatehouse_mhd_stop_daemon_fn;
typedef __typeof__(&MHD_get_connection_values) gatehouse_mhd_get_connection_values_fn;
typedef __typeof__(&MHD_queue_response) gatehouse_mhd_queue_response_fn;
typedef __typeof__(&MHD_suspend_connection) gatehouse_mhd_suspend_connection_fn;
typedef __typeof__(&MHD_resume_connection) gatehouse_mhd_resume_connection_fn;
typedef __typeof__(&MHD_create_response_from_buffer) gatehouse_mhd_create_response_from_buffer_fn;
typedef __typeof__(&MHD_add_response_header) gatehouse_mhd_add_response_header_fn;
typedef __typeof__(&MHD_destroy_response) gatehouse_mhd_destroy_response_fn;

/* Swift cannot call libmicrohttpd's variadic functions; these wrappers fix the argument lists and call
   the function at the address given (dlsym's answer for the name in the comment). */

/* The URI log callback's type has no typedef in microhttpd.h. */
typedef void *(*gatehouse_mhd_uri_log_callback)(void *cls, const char *uri, struct MHD_Connection *connection);

/* MHD_start_daemon: starts a daemon listening on `address` (its port included) with the options HTTPServer needs. */
static inline struct MHD_Daemon *gatehouse_mhd_start_daemon(
    const void *start_daemon,
    unsigned int flags,
    const struct sockaddr *address,
    MHD_AccessHandlerCallback access_handler, void *access_handler_cls,
    MHD_RequestCompletedCallback completed, void *completed_cls,
    gatehouse_mhd_uri_log_callback uri_log, void *uri_log_cls,
    MHD_NotifyConnectionCallback notify_connection, void *notify_connection_cls,
    unsigned int thread_pool_size,
    unsigned int connection_limit,
    unsigned int connection_timeout_seconds,
    size_t connection_memory_limit)
{
    return ((__typeof__(&MHD_start_daemon))start_daemon)(
        flags, 0 /* the port comes from MHD_OPTION_SOCK_ADDR */,
        NULL, NULL,
        access_handler, access_handler_cls,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
        MHD_OPTION_URI_LOG_CALLBACK, uri_log, uri_log_cls,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_cls,
        MHD_OPTION_END);
}

/* MHD_get_daemon_info: the port the daemon is bound to (useful when it was started on port 0), or 0 if unknown. */
static inline uint16_t gatehouse_mhd_bound_port(const void *get_daemon_info, struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = ((__typeof__(&MHD_get_daemon_info))get_daemon_info)(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}

/* MHD_get_daemon_info: the listening socket, or -1 if unknown. */
static inline int gatehouse_mhd_listen_fd(const void *get_daemon_info, struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = ((__typeof__(&MHD_get_daemon_info))get_daemon_info)(daemon, MHD_DAEMON_INFO_LISTEN_FD);
    return info != NULL ? info->listen_fd : -1;
}

/* MHD_get_connection_info: the client's socket address, or NULL if unknown. */
static inline const struct sockaddr *gatehouse_mhd_client_address(const void *get_connection_info, struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        ((__typeof__(&MHD_get_connection_info))get_connection_info)(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info != NULL ? info->client_addr : NULL;
}

/* MHD_get_connection_info: the connection's socket, or -1 if unknown. */
static inline int gatehouse_mhd_connection_fd(const void *get_connection_info, struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        ((__typeof__(&MHD_get_connection_info))get_connection_info)(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? info->connect_fd : -1;
}

#endif
