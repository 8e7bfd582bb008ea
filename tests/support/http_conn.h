/* Keep-alive HTTP/1.1 client connections for tests that hold many of them open at once against a
 * server running on the test's own loop: non-blocking sockets, so the test sends, then runs its
 * loop, then collects what arrived (hconn_poll) without ever blocking the server.
 *
 * Responses must carry a Content-Length (libmicrohttpd's buffer responses do) and fit in
 * HCONN_BUF bytes. */
#ifndef LD_TESTS_HTTP_CONN_H
#define LD_TESTS_HTTP_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define HCONN_BUF (16u * 1024u)

typedef enum hconn_state {
  HCONN_PENDING = 0, /* no complete response yet, connection open */
  HCONN_DONE = 1,    /* a complete response: see status */
  HCONN_CLOSED = -1, /* the server closed (or reset) the connection before a complete response */
} hconn_state_t;

typedef struct hconn {
  int fd; /* -1 when closed */
  char buf[HCONN_BUF];
  size_t len;
  int status; /* of the last complete response */
} hconn_t;

/* Connects to 127.0.0.1:`port` without blocking (the connection may still sit in the server's
 * accept queue). Returns 0 or -1 (socket errors, e.g. no file descriptor left). */
int hconn_open(hconn_t *c, uint16_t port);

/* Sends `text` whole (waits up to 5 s for the socket to take it). Returns 0 or -1. */
int hconn_send(hconn_t *c, const char *text);

/* Reads what has arrived. Returns HCONN_DONE once a whole response is there (then c->status is
 * its status and the connection is ready for the next request), HCONN_PENDING, or HCONN_CLOSED. */
hconn_state_t hconn_poll(hconn_t *c);

/* Closes the socket (idempotent). */
void hconn_close(hconn_t *c);

/* "GET `path` HTTP/1.1" with Host and keep-alive, as a dashboard sends it. */
#define HCONN_GET(path) "GET " path " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n"

/* Runs `loop` in short turns until every one of conns[0..n) reached HCONN_DONE or HCONN_CLOSED,
 * or `ms` milliseconds passed. Stores each final state in states[i] (HCONN_PENDING for those that
 * did not finish) and returns how many are HCONN_DONE. */
size_t hconn_wait_all(uv_loop_t *loop, hconn_t *conns, size_t n, hconn_state_t *states,
                      uint64_t ms);

/* Whether buf[0..len) starts with a whole response (head and Content-Length body). Then stores
 * its status (0 when the status line is not HTTP/1.x) and its length in *used, and returns true. */
bool hconn_parse_response(const char *buf, size_t len, int *status, size_t *used);

/* Raises this process's RLIMIT_NOFILE soft limit (and the hard one when allowed) to at least
 * `n`. Returns 0, or -1 when the system does not allow that many descriptors. */
int hconn_raise_fd_limit(size_t n);

#endif
