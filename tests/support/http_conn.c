#include "http_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/clock.h"

#define SEND_WAIT_MS 5000

int hconn_open(hconn_t *c, uint16_t port) {
  c->len = 0;
  c->status = 0;
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0)
    return -1;
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(c->fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) {
    hconn_close(c);
    return -1;
  }
  return 0;
}

int hconn_send(hconn_t *c, const char *text) {
  size_t len = strlen(text);
  uint64_t deadline = ld_now_ms() + SEND_WAIT_MS;
  while (len > 0 && c->fd >= 0) {
    ssize_t n = send(c->fd, text, len, MSG_NOSIGNAL);
    if (n > 0) {
      text += n;
      len -= (size_t)n;
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOTCONN)
      return -1;
    if (ld_now_ms() > deadline)
      return -1;
    struct pollfd p = {.fd = c->fd, .events = POLLOUT};
    poll(&p, 1, 10);
  }
  return c->fd >= 0 ? 0 : -1;
}

/* The body length announced in the head `head` of `head_len` bytes, or -1. */
static long content_length(const char *head, size_t head_len) {
  static const char name[] = "\r\ncontent-length:";
  for (size_t i = 0; i + sizeof name - 1 <= head_len; i++) {
    if (strncasecmp(head + i, name, sizeof name - 1) == 0)
      return strtol(head + i + sizeof name - 1, NULL, 10);
  }
  return -1;
}

bool hconn_parse_response(const char *buf, size_t len, int *status, size_t *used) {
  const char *end = memmem(buf, len, "\r\n\r\n", 4);
  if (end == NULL)
    return false;
  size_t head_len = (size_t)(end - buf) + 4;
  long body = content_length(buf, head_len);
  if (body < 0 || len < head_len + (size_t)body)
    return false;
  *status = len > 9 && strncmp(buf, "HTTP/1.", 7) == 0 ? atoi(buf + 9) : 0;
  *used = head_len + (size_t)body;
  return true;
}

/* Whether buf holds a whole response; then stores its status and drops it from the buffer. */
static bool take_response(hconn_t *c) {
  size_t used = 0;
  if (!hconn_parse_response(c->buf, c->len, &c->status, &used))
    return false;
  memmove(c->buf, c->buf + used, c->len - used);
  c->len -= used;
  return true;
}

hconn_state_t hconn_poll(hconn_t *c) {
  while (c->fd >= 0 && c->len < sizeof c->buf) {
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, 0);
    if (n > 0) {
      c->len += (size_t)n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    /* EOF or reset: what arrived before still counts. */
    bool whole = take_response(c);
    hconn_close(c);
    return whole ? HCONN_DONE : HCONN_CLOSED;
  }
  if (take_response(c))
    return HCONN_DONE;
  return c->fd >= 0 ? HCONN_PENDING : HCONN_CLOSED;
}

void hconn_close(hconn_t *c) {
  if (c->fd >= 0)
    close(c->fd);
  c->fd = -1;
}

size_t hconn_wait_all(uv_loop_t *loop, hconn_t *conns, size_t n, hconn_state_t *states,
                      uint64_t ms) {
  for (size_t i = 0; i < n; i++)
    states[i] = HCONN_PENDING;
  size_t finished = 0, done = 0;
  uint64_t deadline = ld_now_ms() + ms;
  while (finished < n) {
    uv_run(loop, UV_RUN_NOWAIT);
    for (size_t i = 0; i < n; i++) {
      if (states[i] != HCONN_PENDING)
        continue;
      states[i] = hconn_poll(&conns[i]);
      if (states[i] != HCONN_PENDING)
        finished++;
      if (states[i] == HCONN_DONE)
        done++;
    }
    if (finished == n || ld_now_ms() >= deadline)
      break;
    poll(NULL, 0, 1);
  }
  return done;
}

int hconn_raise_fd_limit(size_t n) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
    return -1;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= n)
    return 0;
  if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < n)
    rl.rlim_max = n; /* allowed only with CAP_SYS_RESOURCE (root) */
  rl.rlim_cur = n;
  return setrlimit(RLIMIT_NOFILE, &rl) == 0 ? 0 : -1;
}
