/* A tiny HTTP/1.1 client for the REST and metrics tests: one request per connection (it sends
 * "Connection: close" and reads until the server closes), blocking sockets with a 60 s receive
 * timeout, Content-Length and chunked bodies.
 *
 * The servers under test run on the test's libuv loop, so a blocking request from the loop's
 * thread would deadlock: the *_on_loop variants run the request in a helper thread and run the
 * loop until it is done. */
#ifndef LD_TESTS_HTTP_CLIENT_H
#define LD_TESTS_HTTP_CLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct http_response {
  int status;    /* 0 when no valid status line arrived */
  char *headers; /* the raw header lines, NUL-terminated */
  char *body;    /* NUL-terminated (also when it holds binary data) */
  size_t body_len;
} http_response_t;

/* Sends `method path` to 127.0.0.1:`port` with the extra header lines `headers` ("K: V\r\n"…,
 * may be NULL) and `len` bytes of `body` (a Content-Length is added when body is not NULL).
 * Fills `out` (free with http_response_free). Returns 0, or -1 on a socket error or a response
 * that cannot be parsed. */
int http_request(uint16_t port, const char *method, const char *path, const char *headers,
                 const void *body, size_t len, http_response_t *out);

/* Sends raw bytes and reads whatever comes back, parsed as a response when possible. */
int http_raw(uint16_t port, const void *data, size_t len, http_response_t *out);

/* The same, run in a helper thread while `loop` runs on the calling thread. */
int http_request_on_loop(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                         const char *headers, const void *body, size_t len, http_response_t *out);
int http_raw_on_loop(uv_loop_t *loop, uint16_t port, const void *data, size_t len,
                     http_response_t *out);

/* The value of header `name` (case-insensitive) copied into `buf`, or NULL. */
const char *http_header(const http_response_t *r, const char *name, char *buf, size_t cap);

void http_response_free(http_response_t *r);

#endif
