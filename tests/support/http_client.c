#include "http_client.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* Longer than the longest a server under test may take to answer: a REST publish with RLN waits
 * for its proof up to 30 s (a loaded machine under the sanitizers comes near it). */
#define READ_TIMEOUT_S 60
#define MAX_RESPONSE (256u * 1024 * 1024)

static int connect_local(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return -1;
  struct timeval tv = {.tv_sec = READ_TIMEOUT_S};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

static int send_all(int fd, const void *data, size_t len) {
  const char *p = data;
  while (len > 0) {
    ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
    if (n <= 0)
      return -1;
    p += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Reads until EOF (or an error after some data, as when the server resets after answering). */
static char *read_all(int fd, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  while (buf != NULL) {
    if (n == cap) {
      char *grown = cap < MAX_RESPONSE ? realloc(buf, cap * 2 + 1) : NULL;
      if (grown == NULL)
        break;
      buf = grown;
      cap *= 2;
    }
    ssize_t r = recv(fd, buf + n, cap - n, 0);
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  if (buf != NULL)
    buf[n] = '\0';
  *len = n;
  return buf;
}

static const char *find_header(const char *headers, const char *name, size_t *vlen) {
  size_t nlen = strlen(name);
  for (const char *line = headers; line != NULL && *line != '\0';) {
    const char *eol = strstr(line, "\r\n");
    size_t llen = eol != NULL ? (size_t)(eol - line) : strlen(line);
    if (llen > nlen && strncasecmp(line, name, nlen) == 0 && line[nlen] == ':') {
      const char *v = line + nlen + 1;
      while (*v == ' ')
        v++;
      *vlen = llen - (size_t)(v - line);
      return v;
    }
    line = eol != NULL ? eol + 2 : NULL;
  }
  return NULL;
}

const char *http_header(const http_response_t *r, const char *name, char *buf, size_t cap) {
  size_t vlen = 0;
  const char *v = r->headers != NULL ? find_header(r->headers, name, &vlen) : NULL;
  if (v == NULL || vlen >= cap)
    return NULL;
  memcpy(buf, v, vlen);
  buf[vlen] = '\0';
  return buf;
}

static int dechunk(const char *in, size_t len, char **out, size_t *outlen) {
  char *buf = malloc(len + 1);
  size_t o = 0, i = 0;
  while (buf != NULL && i < len) {
    char *end = NULL;
    unsigned long size = strtoul(in + i, &end, 16);
    const char *crlf = strstr(in + i, "\r\n");
    if (end == in + i || crlf == NULL)
      break;
    i = (size_t)(crlf - in) + 2;
    if (size == 0 || i + size > len)
      break;
    memcpy(buf + o, in + i, size);
    o += size;
    i += size + 2;
  }
  if (buf == NULL)
    return -1;
  buf[o] = '\0';
  *out = buf;
  *outlen = o;
  return 0;
}

static int parse_response(char *raw, size_t len, http_response_t *out) {
  memset(out, 0, sizeof *out);
  char *sep = strstr(raw, "\r\n\r\n");
  if (sep == NULL || sscanf(raw, "HTTP/1.%*d %d", &out->status) != 1) {
    out->status = 0;
    out->body = raw;
    out->body_len = len;
    return -1;
  }
  char *line_end = strstr(raw, "\r\n");
  size_t hlen = (size_t)(sep - line_end) - 2;
  out->headers = malloc(hlen + 1);
  memcpy(out->headers, line_end + 2, hlen);
  out->headers[hlen] = '\0';
  const char *body = sep + 4;
  size_t blen = len - (size_t)(body - raw);
  char te[64];
  if (http_header(out, "Transfer-Encoding", te, sizeof te) != NULL &&
      strcasecmp(te, "chunked") == 0) {
    dechunk(body, blen, &out->body, &out->body_len);
  } else {
    char cl[32];
    if (http_header(out, "Content-Length", cl, sizeof cl) != NULL && strtoul(cl, NULL, 10) < blen)
      blen = strtoul(cl, NULL, 10);
    out->body = malloc(blen + 1);
    memcpy(out->body, body, blen);
    out->body[blen] = '\0';
    out->body_len = blen;
  }
  free(raw);
  return 0;
}

int http_raw(uint16_t port, const void *data, size_t len, http_response_t *out) {
  memset(out, 0, sizeof *out);
  int fd = connect_local(port);
  if (fd < 0)
    return -1;
  /* A server may answer before it has read the whole request (413 on a body over its cap) and
   * close, failing the rest of the send: the answer it gave is still read, as curl would. */
  int rc = send_all(fd, data, len);
  size_t n = 0;
  char *raw = read_all(fd, &n);
  close(fd);
  if (raw != NULL && rc != 0 && n == 0) {
    free(raw);
    raw = NULL;
  }
  if (raw == NULL)
    return -1;
  return parse_response(raw, n, out);
}

int http_request(uint16_t port, const char *method, const char *path, const char *headers,
                 const void *body, size_t len, http_response_t *out) {
  size_t cap = strlen(method) + strlen(path) + (headers ? strlen(headers) : 0) + 256 + len;
  char *req = malloc(cap);
  if (req == NULL)
    return -1;
  int n = snprintf(req, cap, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n%s",
                   method, path, port, headers != NULL ? headers : "");
  if (body != NULL)
    n += snprintf(req + n, cap - (size_t)n, "Content-Length: %zu\r\n", len);
  n += snprintf(req + n, cap - (size_t)n, "\r\n");
  if (body != NULL)
    memcpy(req + n, body, len);
  int rc = http_raw(port, req, (size_t)n + (body != NULL ? len : 0), out);
  free(req);
  return rc;
}

void http_response_free(http_response_t *r) {
  free(r->headers);
  free(r->body);
  memset(r, 0, sizeof *r);
}

/* ---- on a loop ------------------------------------------------------------------------------- */

typedef struct job {
  uint16_t port;
  const char *method, *path, *headers;
  const void *body;
  size_t len;
  bool raw;
  http_response_t *out;
  int rc;
  atomic_bool done;
  uv_async_t wake;
  bool closed;
} job_t;

static void *run_job(void *arg) {
  job_t *j = arg;
  j->rc = j->raw ? http_raw(j->port, j->body, j->len, j->out)
                 : http_request(j->port, j->method, j->path, j->headers, j->body, j->len, j->out);
  atomic_store(&j->done, true);
  uv_async_send(&j->wake);
  return NULL;
}

static void on_wake(uv_async_t *a) {
  (void)a;
}

static void on_closed(uv_handle_t *h) {
  ((job_t *)h->data)->closed = true;
}

static int run_on_loop(uv_loop_t *loop, job_t *j) {
  atomic_init(&j->done, false);
  uv_async_init(loop, &j->wake, on_wake);
  j->wake.data = j;
  pthread_t t;
  if (pthread_create(&t, NULL, run_job, j) != 0)
    return -1;
  while (!atomic_load(&j->done))
    uv_run(loop, UV_RUN_ONCE);
  pthread_join(t, NULL);
  uv_close((uv_handle_t *)&j->wake, on_closed);
  while (!j->closed)
    uv_run(loop, UV_RUN_ONCE);
  return j->rc;
}

int http_request_on_loop(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                         const char *headers, const void *body, size_t len, http_response_t *out) {
  job_t j = {.port = port,
             .method = method,
             .path = path,
             .headers = headers,
             .body = body,
             .len = len,
             .out = out};
  return run_on_loop(loop, &j);
}

int http_raw_on_loop(uv_loop_t *loop, uint16_t port, const void *data, size_t len,
                     http_response_t *out) {
  job_t j = {.port = port, .body = data, .len = len, .raw = true, .out = out};
  return run_on_loop(loop, &j);
}
