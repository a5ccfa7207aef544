#ifndef GATEHOUSE_CLIBCURL_SHIM_H
#define GATEHOUSE_CLIBCURL_SHIM_H
#include <stddef.h>

/* libcurl is neither linked nor needed to build: Gatehouse loads libcurl.so.4 with dlopen the first time it calls
   Apple (Gatehouse/Apple/AppleHTTPClient.swift), so no other command loads it (and the TLS library behind it) at
   start, and the static build needs no libcurl-dev. This header declares the few constants and function types used,
   copied from curl/curl.h of libcurl 7 and 8 (their values are part of the stable ABI). curl_easy_setopt and
   curl_easy_getinfo are variadic: the inline wrappers below make the variadic call from C, which Swift cannot. */

typedef void CURL;
struct curl_slist;

/* CURLoption values: LONG = 0, OBJECTPOINT = 10000, FUNCTIONPOINT = 20000. */
#define GH_CURLOPT_WRITEDATA 10001
#define GH_CURLOPT_URL 10002
#define GH_CURLOPT_USERAGENT 10018
#define GH_CURLOPT_HTTPHEADER 10023
#define GH_CURLOPT_HEADERDATA 10029
#define GH_CURLOPT_COPYPOSTFIELDS 10165
#define GH_CURLOPT_POSTFIELDSIZE 60
#define GH_CURLOPT_POST 47
#define GH_CURLOPT_NOSIGNAL 99
#define GH_CURLOPT_MAXFILESIZE 114
#define GH_CURLOPT_TIMEOUT_MS 155
#define GH_CURLOPT_CONNECTTIMEOUT_MS 156
#define GH_CURLOPT_PROTOCOLS 181
#define GH_CURLOPT_REDIR_PROTOCOLS 182
#define GH_CURLOPT_CAINFO 10065
#define GH_CURLOPT_SSL_VERIFYPEER 64
#define GH_CURLOPT_SSL_VERIFYHOST 81
#define GH_CURLOPT_WRITEFUNCTION 20011
#define GH_CURLOPT_HEADERFUNCTION 20079
#define GH_CURLPROTO_HTTP 1
#define GH_CURLPROTO_HTTPS 2
#define GH_CURLINFO_RESPONSE_CODE 0x200002
#define GH_CURLINFO_CONNECT_TIME 0x300005
#define GH_CURLINFO_APPCONNECT_TIME 0x300021
#define GH_CURL_GLOBAL_DEFAULT 3

/* CURLcode values Gatehouse words itself. */
#define GH_CURLE_OK 0
#define GH_CURLE_UNSUPPORTED_PROTOCOL 1
#define GH_CURLE_URL_MALFORMAT 3
#define GH_CURLE_COULDNT_RESOLVE_PROXY 5
#define GH_CURLE_WEIRD_SERVER_REPLY 8
#define GH_CURLE_COULDNT_RESOLVE_HOST 6
#define GH_CURLE_COULDNT_CONNECT 7
#define GH_CURLE_PARTIAL_FILE 18
#define GH_CURLE_WRITE_ERROR 23
#define GH_CURLE_OPERATION_TIMEDOUT 28
#define GH_CURLE_SSL_CONNECT_ERROR 35
#define GH_CURLE_GOT_NOTHING 52
#define GH_CURLE_SEND_ERROR 55
#define GH_CURLE_RECV_ERROR 56
#define GH_CURLE_PEER_FAILED_VERIFICATION 60
#define GH_CURLE_FILESIZE_EXCEEDED 63
#define GH_CURLE_SSL_CACERT_BADFILE 77

typedef size_t (*gatehouse_curl_write_callback)(char *data, size_t size, size_t count, void *context);

typedef int (*gatehouse_curl_global_init_fn)(long flags);
typedef CURL *(*gatehouse_curl_easy_init_fn)(void);
typedef void (*gatehouse_curl_easy_cleanup_fn)(CURL *handle);
typedef int (*gatehouse_curl_easy_perform_fn)(CURL *handle);
typedef const char *(*gatehouse_curl_easy_strerror_fn)(int code);
typedef int (*gatehouse_curl_easy_setopt_fn)(CURL *handle, int option, ...);
typedef int (*gatehouse_curl_easy_getinfo_fn)(CURL *handle, int info, ...);
typedef struct curl_slist *(*gatehouse_curl_slist_append_fn)(struct curl_slist *list, const char *text);
typedef void (*gatehouse_curl_slist_free_all_fn)(struct curl_slist *list);

static inline int gatehouse_curl_setopt_long(gatehouse_curl_easy_setopt_fn f, CURL *h, int option, long value) {
    return f(h, option, value);
}
static inline int gatehouse_curl_setopt_pointer(gatehouse_curl_easy_setopt_fn f, CURL *h, int option, const void *value) {
    return f(h, option, value);
}
static inline int gatehouse_curl_setopt_callback(gatehouse_curl_easy_setopt_fn f, CURL *h, int option, gatehouse_curl_write_callback value) {
    return f(h, option, value);
}
static inline int gatehouse_curl_getinfo_long(gatehouse_curl_easy_getinfo_fn f, CURL *h, int info, long *value) {
    return f(h, info, value);
}
static inline int gatehouse_curl_getinfo_double(gatehouse_curl_easy_getinfo_fn f, CURL *h, int info, double *value) {
    return f(h, info, value);
}

#endif
