/*
 * The baseline for the console's static-file benchmark (ops/bench.d/50-console.sh): a bare
 * libmicrohttpd server that answers every request with one constant body, read once from a file at
 * start, with the same daemon flags as the console (internal polling thread, epoll). Not product
 * code: it only measures what libmicrohttpd alone can do on this machine.
 *
 *   cc -O2 -o bare-mhd bare-mhd.c $(pkg-config --cflags --libs libmicrohttpd)
 *   ./bare-mhd Public/index.html      # prints the port it listens on (127.0.0.1, a free port)
 */
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct MHD_Response *constant;

static int seen;

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                              const char *version, const char *upload_data, size_t *upload_data_size, void **state) {
    (void)cls; (void)url; (void)method; (void)version; (void)upload_data;
    /* The first call only announces the request; answering before the (empty) body is read would make
       libmicrohttpd close the connection after every response, which is not what a real server does. */
    if (*state == NULL) { *state = &seen; return MHD_YES; }
    if (*upload_data_size != 0) { *upload_data_size = 0; return MHD_YES; }
    return MHD_queue_response(connection, MHD_HTTP_OK, constant);
}

static volatile sig_atomic_t stopping = 0;
static void stop(int signal_number) { (void)signal_number; stopping = 1; }

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: bare-mhd BODY_FILE\n"); return 2; }
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 1; }
    static char body[1 << 20];
    size_t length = fread(body, 1, sizeof body, file);
    fclose(file);
    constant = MHD_create_response_from_buffer(length, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(constant, "Content-Type", "text/html; charset=utf-8");

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    struct MHD_Daemon *daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL, 0, NULL, NULL, answer, NULL,
                                                 MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                                                 MHD_OPTION_CONNECTION_LIMIT, 512u, MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!daemon) { fprintf(stderr, "bare-mhd: cannot start the daemon\n"); return 1; }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    printf("%u\n", info ? (unsigned)info->port : 0u);
    fflush(stdout);
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    while (!stopping) pause();
    MHD_stop_daemon(daemon);
    MHD_destroy_response(constant);
    return 0;
}
