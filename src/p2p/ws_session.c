#include "p2p/ws_session.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <wslay/wslay.h>

#include "base/base64.h"
#include "base/cursor.h"
#include "base/error.h"
#include "crypto/crypto.h"

#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
#define WS_KEY_RAW_LEN 16
#define WS_MAX_KEY_INPUT 128

/* ---- header block scanning ------------------------------------------------------------------ */

static bool is_tchar(uint8_t ch) {
  if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
    return true;
  return ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

static bool is_value_char(uint8_t ch) {
  return ch == ' ' || ch == '\t' || (ch >= 0x21 && ch != 0x7f);
}

static bool is_ows(uint8_t ch) {
  return ch == ' ' || ch == '\t';
}

/* Checks the bytes so far for control characters and lone CR or LF (so that a peer speaking
 * something else is refused at once) and finds the blank line that ends the block. */
static int scan_block(const uint8_t *data, size_t len, size_t *end, const char **why) {
  size_t lim = len < LD_WS_MAX_HEADER_BLOCK ? len : LD_WS_MAX_HEADER_BLOCK;
  for (size_t i = 0; i < lim; i++) {
    uint8_t ch = data[i];
    if (ch == '\n') {
      if (i == 0 || data[i - 1] != '\r') {
        *why = "bare LF in the header block";
        return LD_ERR_MALFORMED;
      }
      if (i >= 3 && data[i - 2] == '\n') {
        *end = i + 1;
        return 0;
      }
    } else if (ch == '\r') {
      if (i + 1 < lim && data[i + 1] != '\n') {
        *why = "bare CR in the header block";
        return LD_ERR_MALFORMED;
      }
    } else if (ch < 0x20 && ch != '\t') {
      *why = "control character in the header block";
      return LD_ERR_MALFORMED;
    }
  }
  *why = len >= LD_WS_MAX_HEADER_BLOCK ? "header block larger than 8 KiB" : "";
  return len >= LD_WS_MAX_HEADER_BLOCK ? LD_ERR_TOO_LARGE : LD_ERR_TRUNCATED;
}

/* Takes the next line (without its CRLF) from the block; the block was scanned, so every line
 * ends in CRLF. */
static void next_line(ld_cursor_t *c, ld_cursor_t *line) {
  const uint8_t *p = ld_cursor_ptr(c);
  size_t n = 0;
  while (n + 1 < ld_cursor_remaining(c) && !(p[n] == '\r' && p[n + 1] == '\n'))
    n++;
  const uint8_t *bytes = p;
  ld_cursor_bytes(c, n, &bytes);
  ld_cursor_skip(c, 2);
  ld_cursor_init(line, bytes, n);
}

/* Takes the bytes before the next `stop` and skips the stop; false when there is none. */
static bool take_until(ld_cursor_t *c, uint8_t stop, const uint8_t **p, size_t *n) {
  const uint8_t *start = ld_cursor_ptr(c);
  const uint8_t *hit = memchr(start, stop, ld_cursor_remaining(c));
  if (hit == NULL)
    return false;
  *n = (size_t)(hit - start);
  ld_cursor_bytes(c, *n, p);
  ld_cursor_skip(c, 1);
  return true;
}

static bool ieq(const uint8_t *p, size_t n, const char *lit) {
  return n == strlen(lit) && strncasecmp((const char *)p, lit, n) == 0;
}

static bool eq(const uint8_t *p, size_t n, const char *lit) {
  return n == strlen(lit) && memcmp(p, lit, n) == 0;
}

/* True when the comma-separated list holds `token` (case-insensitive). */
static bool list_has(const uint8_t *v, size_t n, const char *token) {
  size_t i = 0;
  while (i <= n) {
    size_t start = i;
    while (i < n && v[i] != ',')
      i++;
    size_t a = start, b = i;
    while (a < b && is_ows(v[a]))
      a++;
    while (b > a && is_ows(v[b - 1]))
      b--;
    if (ieq(v + a, b - a, token))
      return true;
    i++;
  }
  return false;
}

/* ---- header lines ------------------------------------------------------------------------- */

typedef struct header {
  const uint8_t *name, *value;
  size_t name_len, value_len;
} header_t;

static int parse_header(ld_cursor_t *line, header_t *h, const char **why) {
  if (!ld_cursor_empty(line) && is_ows(*ld_cursor_ptr(line))) {
    *why = "obsolete line folding";
    return LD_ERR_MALFORMED;
  }
  if (!take_until(line, ':', &h->name, &h->name_len) || h->name_len == 0) {
    *why = "header line without a name";
    return LD_ERR_MALFORMED;
  }
  for (size_t i = 0; i < h->name_len; i++)
    if (!is_tchar(h->name[i])) {
      *why = "invalid character in a header name";
      return LD_ERR_MALFORMED;
    }
  const uint8_t *v = ld_cursor_ptr(line);
  size_t n = ld_cursor_remaining(line);
  for (size_t i = 0; i < n; i++)
    if (!is_value_char(v[i])) {
      *why = "invalid character in a header value";
      return LD_ERR_MALFORMED;
    }
  while (n > 0 && is_ows(*v))
    v++, n--;
  while (n > 0 && is_ows(v[n - 1]))
    n--;
  h->value = v;
  h->value_len = n;
  return 0;
}

typedef int (*header_fn)(void *state, const header_t *h, const char **why);

/* Parses every header line after the first line of the block. */
static int parse_headers(ld_cursor_t *block, header_fn fn, void *state, const char **why) {
  for (unsigned count = 0;; count++) {
    ld_cursor_t line;
    next_line(block, &line);
    if (ld_cursor_empty(&line))
      return 0;
    if (count == LD_WS_MAX_HEADER_LINES) {
      *why = "too many header lines";
      return LD_ERR_TOO_LARGE;
    }
    header_t h;
    int rc = parse_header(&line, &h, why);
    if (rc == 0)
      rc = fn(state, &h, why);
    if (rc != 0)
      return rc;
  }
}

/* Upgrade: websocket and Connection: Upgrade, shared by both roles. */
typedef struct upgrade_seen {
  bool upgrade;
  bool connection;
} upgrade_seen_t;

static bool upgrade_header(upgrade_seen_t *u, const header_t *h) {
  if (ieq(h->name, h->name_len, "Upgrade")) {
    u->upgrade = u->upgrade || list_has(h->value, h->value_len, "websocket");
    return true;
  }
  if (ieq(h->name, h->name_len, "Connection")) {
    u->connection = u->connection || list_has(h->value, h->value_len, "Upgrade");
    return true;
  }
  return false;
}

static int check_upgrade(const upgrade_seen_t *u, const char **why) {
  if (!u->upgrade) {
    *why = "no Upgrade: websocket";
    return LD_ERR_HANDSHAKE;
  }
  if (!u->connection) {
    *why = "no Connection: Upgrade";
    return LD_ERR_HANDSHAKE;
  }
  return 0;
}

/* ---- requests ----------------------------------------------------------------------------- */

typedef struct request_state {
  ld_ws_request_t *req;
  upgrade_seen_t u;
  bool host, key, version;
} request_state_t;

static int request_key(request_state_t *st, const header_t *h, const char **why) {
  uint8_t raw[WS_KEY_RAW_LEN + 2];
  size_t n = 0;
  if (st->key) {
    *why = "Sec-WebSocket-Key given twice";
    return LD_ERR_HANDSHAKE;
  }
  if (h->value_len != LD_WS_KEY_TEXT_LEN ||
      ld_base64_decode((const char *)h->value, h->value_len, raw, sizeof raw, &n) != 0 ||
      n != WS_KEY_RAW_LEN) {
    *why = "Sec-WebSocket-Key is not 16 bytes in base64";
    return LD_ERR_HANDSHAKE;
  }
  memcpy(st->req->key, h->value, LD_WS_KEY_TEXT_LEN);
  st->req->key[LD_WS_KEY_TEXT_LEN] = '\0';
  st->key = true;
  return 0;
}

static int request_header(void *state, const header_t *h, const char **why) {
  request_state_t *st = state;
  if (upgrade_header(&st->u, h))
    return 0;
  if (ieq(h->name, h->name_len, "Host")) {
    if (st->host || h->value_len == 0) {
      *why = st->host ? "Host given twice" : "empty Host";
      return LD_ERR_HANDSHAKE;
    }
    st->host = true;
  } else if (ieq(h->name, h->name_len, "Sec-WebSocket-Key")) {
    return request_key(st, h, why);
  } else if (ieq(h->name, h->name_len, "Sec-WebSocket-Version")) {
    if (st->version || !eq(h->value, h->value_len, "13")) {
      *why = st->version ? "Sec-WebSocket-Version given twice" : "Sec-WebSocket-Version is not 13";
      return st->version ? LD_ERR_HANDSHAKE : LD_ERR_UNSUPPORTED;
    }
    st->version = true;
  } else if (ieq(h->name, h->name_len, "Sec-WebSocket-Extensions")) {
    st->req->offered_extensions = true;
  } else if (ieq(h->name, h->name_len, "Sec-WebSocket-Protocol")) {
    st->req->offered_protocols = true;
  }
  return 0;
}

static int parse_request_line(ld_cursor_t *line, const char **why) {
  const uint8_t *method, *target;
  size_t mlen, tlen;
  if (!take_until(line, ' ', &method, &mlen) || !take_until(line, ' ', &target, &tlen) ||
      mlen == 0 || tlen == 0) {
    *why = "not an HTTP request line";
    return LD_ERR_MALFORMED;
  }
  for (size_t i = 0; i < mlen; i++)
    if (!is_tchar(method[i])) {
      *why = "not an HTTP request line";
      return LD_ERR_MALFORMED;
    }
  for (size_t i = 0; i < tlen; i++)
    if (target[i] < 0x21 || target[i] == 0x7f) {
      *why = "invalid request target";
      return LD_ERR_MALFORMED;
    }
  if (!eq(ld_cursor_ptr(line), ld_cursor_remaining(line), "HTTP/1.1")) {
    *why = "request is not HTTP/1.1";
    return LD_ERR_MALFORMED;
  }
  if (!eq(method, mlen, "GET")) {
    *why = "request method is not GET";
    return LD_ERR_HANDSHAKE;
  }
  return 0;
}

static int check_request(const request_state_t *st, const char **why) {
  int rc = check_upgrade(&st->u, why);
  if (rc != 0)
    return rc;
  if (!st->host)
    *why = "no Host";
  else if (!st->key)
    *why = "no Sec-WebSocket-Key";
  else if (!st->version)
    *why = "no Sec-WebSocket-Version";
  else
    return 0;
  return LD_ERR_HANDSHAKE;
}

int ld_ws_parse_request(const uint8_t *data, size_t len, ld_ws_request_t *req, size_t *consumed,
                        const char **why) {
  const char *dummy;
  why = why != NULL ? why : &dummy;
  *why = "";
  size_t end = 0;
  int rc = scan_block(data, len, &end, why);
  if (rc != 0)
    return rc;
  ld_cursor_t block, line;
  ld_cursor_init(&block, data, end);
  next_line(&block, &line);
  if ((rc = parse_request_line(&line, why)) != 0)
    return rc;
  ld_ws_request_t out;
  memset(&out, 0, sizeof out);
  request_state_t st = {.req = &out};
  if ((rc = parse_headers(&block, request_header, &st, why)) != 0 ||
      (rc = check_request(&st, why)) != 0)
    return rc;
  *req = out;
  *consumed = end;
  return 0;
}

/* ---- responses ---------------------------------------------------------------------------- */

typedef struct response_state {
  const char *expected;
  upgrade_seen_t u;
  bool accept;
} response_state_t;

static int response_header(void *state, const header_t *h, const char **why) {
  response_state_t *st = state;
  if (upgrade_header(&st->u, h))
    return 0;
  if (ieq(h->name, h->name_len, "Sec-WebSocket-Accept")) {
    if (st->accept || !eq(h->value, h->value_len, st->expected)) {
      *why = st->accept ? "Sec-WebSocket-Accept given twice" : "wrong Sec-WebSocket-Accept";
      return LD_ERR_HANDSHAKE;
    }
    st->accept = true;
  } else if (ieq(h->name, h->name_len, "Sec-WebSocket-Extensions")) {
    *why = "server selected an extension that was not offered";
    return LD_ERR_HANDSHAKE;
  } else if (ieq(h->name, h->name_len, "Sec-WebSocket-Protocol")) {
    *why = "server selected a subprotocol that was not offered";
    return LD_ERR_HANDSHAKE;
  }
  return 0;
}

static int parse_status_line(ld_cursor_t *line, const char **why) {
  const uint8_t *version, *code;
  size_t vlen;
  if (!take_until(line, ' ', &version, &vlen) || !eq(version, vlen, "HTTP/1.1") ||
      ld_cursor_bytes(line, 3, &code) != 0 ||
      (!ld_cursor_empty(line) && *ld_cursor_ptr(line) != ' ')) {
    *why = "not an HTTP/1.1 status line";
    return LD_ERR_MALFORMED;
  }
  for (int i = 0; i < 3; i++)
    if (code[i] < '0' || code[i] > '9') {
      *why = "not an HTTP/1.1 status line";
      return LD_ERR_MALFORMED;
    }
  if (memcmp(code, "101", 3) != 0) {
    *why = "server refused the upgrade (status is not 101)";
    return LD_ERR_HANDSHAKE;
  }
  return 0;
}

int ld_ws_parse_response(const uint8_t *data, size_t len, const char *expected_accept,
                         size_t *consumed, const char **why) {
  const char *dummy;
  why = why != NULL ? why : &dummy;
  *why = "";
  size_t end = 0;
  int rc = scan_block(data, len, &end, why);
  if (rc != 0)
    return rc;
  ld_cursor_t block, line;
  ld_cursor_init(&block, data, end);
  next_line(&block, &line);
  if ((rc = parse_status_line(&line, why)) != 0)
    return rc;
  response_state_t st = {.expected = expected_accept};
  if ((rc = parse_headers(&block, response_header, &st, why)) != 0 ||
      (rc = check_upgrade(&st.u, why)) != 0)
    return rc;
  if (!st.accept) {
    *why = "no Sec-WebSocket-Accept";
    return LD_ERR_HANDSHAKE;
  }
  *consumed = end;
  return 0;
}

/* ---- writing handshake messages ------------------------------------------------------------ */

int ld_ws_accept_for_key(const char *key, size_t key_len, char out[LD_WS_ACCEPT_TEXT_LEN + 1]) {
  uint8_t input[WS_MAX_KEY_INPUT + sizeof WS_GUID];
  uint8_t md[EVP_MAX_MD_SIZE];
  unsigned md_len = 0;
  if (key_len > WS_MAX_KEY_INPUT)
    return LD_ERR_INVALID_ARG;
  memcpy(input, key, key_len);
  memcpy(input + key_len, WS_GUID, sizeof WS_GUID - 1);
  if (EVP_Digest(input, key_len + sizeof WS_GUID - 1, md, &md_len, EVP_sha1(), NULL) != 1 ||
      md_len != 20)
    return LD_ERR_CRYPTO;
  return ld_base64_encode(md, md_len, out, LD_WS_ACCEPT_TEXT_LEN + 1) == LD_WS_ACCEPT_TEXT_LEN
             ? 0
             : LD_ERR_CRYPTO;
}

void ld_ws_new_key(char out[LD_WS_KEY_TEXT_LEN + 1]) {
  uint8_t raw[WS_KEY_RAW_LEN];
  ld_random_bytes(raw, sizeof raw);
  ld_base64_encode(raw, sizeof raw, out, LD_WS_KEY_TEXT_LEN + 1);
}

static bool visible_text(const char *s, size_t max) {
  size_t n = s != NULL ? strlen(s) : 0;
  if (n == 0 || n > max)
    return false;
  for (size_t i = 0; i < n; i++)
    if ((uint8_t)s[i] < 0x21 || (uint8_t)s[i] >= 0x7f)
      return false;
  return true;
}

static int append_str(ld_buf_t *out, const char *s) {
  return ld_buf_append(out, s, strlen(s));
}

/* Appends the NULL-terminated list of strings, all or nothing. */
static int append_all(ld_buf_t *out, const char *const *parts) {
  size_t mark = out->len;
  for (size_t i = 0; parts[i] != NULL; i++)
    if (append_str(out, parts[i]) != 0) {
      out->len = mark;
      return LD_ERR_NOMEM;
    }
  return 0;
}

int ld_ws_write_request(ld_buf_t *out, const char *host, const char *path, const char *key) {
  if (!visible_text(host, LD_WS_MAX_HOST) || !visible_text(path, LD_WS_MAX_PATH) ||
      path[0] != '/' || !visible_text(key, LD_WS_KEY_TEXT_LEN))
    return LD_ERR_INVALID_ARG;
  const char *parts[] = {"GET ",
                         path,
                         " HTTP/1.1\r\nHost: ",
                         host,
                         "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ",
                         key,
                         "\r\nSec-WebSocket-Version: 13\r\n\r\n",
                         NULL};
  return append_all(out, parts);
}

int ld_ws_write_response(ld_buf_t *out, const char *accept) {
  const char *parts[] = {"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                         "Connection: Upgrade\r\nSec-WebSocket-Accept: ",
                         accept, "\r\n\r\n", NULL};
  return append_all(out, parts);
}

int ld_ws_write_reject(ld_buf_t *out, int err) {
  const char *status = err == LD_ERR_UNSUPPORTED ? "426 Upgrade Required\r\n"
                                                   "Sec-WebSocket-Version: 13"
                       : err == LD_ERR_TOO_LARGE ? "431 Request Header Fields Too Large"
                                                 : "400 Bad Request";
  const char *parts[] = {"HTTP/1.1 ", status, "\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
                         NULL};
  return append_all(out, parts);
}

/* ---- sessions ----------------------------------------------------------------------------- */

typedef enum session_state {
  S_HANDSHAKE = 0,
  S_OPEN,
  S_DONE, /* failed, or the peer closed */
} session_state_t;

struct ld_ws_session {
  bool server;
  bool started;
  bool opened; /* the handshake completed */
  bool nomem;
  session_state_t state;
  uint8_t opcode; /* of the frame being received */
  uint16_t close_code;
  uint64_t max_frame;
  wslay_event_context_ptr ctx;
  const char *why;
  ld_cursor_t in; /* input being handed to wslay */
  ld_buf_t *app;  /* outputs of the call in progress */
  ld_buf_t *out;
  ld_buf_t hs; /* handshake bytes so far */
  char key[LD_WS_KEY_TEXT_LEN + 1];
  char accept[LD_WS_ACCEPT_TEXT_LEN + 1];
  char host[LD_WS_MAX_HOST + 1];
  char path[LD_WS_MAX_PATH + 1];
};

static ssize_t on_wslay_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags,
                             void *ud) {
  (void)flags;
  ld_ws_session_t *s = ud;
  size_t n = ld_cursor_remaining(&s->in);
  if (n == 0) {
    wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
    return -1;
  }
  n = n < len ? n : len;
  ld_cursor_copy(&s->in, buf, n);
  return (ssize_t)n;
}

static ssize_t on_wslay_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len,
                             int flags, void *ud) {
  (void)flags;
  ld_ws_session_t *s = ud;
  if (ld_buf_append(s->out, data, len) != 0) {
    s->nomem = true;
    wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
  }
  return (ssize_t)len;
}

static int on_wslay_genmask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *ud) {
  (void)ctx;
  (void)ud;
  ld_random_bytes(buf, len);
  return 0;
}

static void on_wslay_frame_start(wslay_event_context_ptr ctx,
                                 const struct wslay_event_on_frame_recv_start_arg *arg, void *ud) {
  (void)ctx;
  ((ld_ws_session_t *)ud)->opcode = arg->opcode;
}

static void on_wslay_frame_chunk(wslay_event_context_ptr ctx,
                                 const struct wslay_event_on_frame_recv_chunk_arg *arg, void *ud) {
  (void)ctx;
  ld_ws_session_t *s = ud;
  if (wslay_is_ctrl_frame(s->opcode) || arg->data_length == 0)
    return;
  if (ld_buf_append(s->app, arg->data, arg->data_length) != 0)
    s->nomem = true;
}

static const struct wslay_event_callbacks wslay_callbacks = {
    .recv_callback = on_wslay_recv,
    .send_callback = on_wslay_send,
    .genmask_callback = on_wslay_genmask,
    .on_frame_recv_start_callback = on_wslay_frame_start,
    .on_frame_recv_chunk_callback = on_wslay_frame_chunk,
};

static bool copy_text(char *dst, size_t cap, const char *src) {
  size_t n = strlen(src);
  if (n >= cap)
    return false;
  memcpy(dst, src, n + 1);
  return true;
}

static bool client_setup(ld_ws_session_t *s, const ld_ws_session_config_t *cfg) {
  const char *path = cfg->path != NULL ? cfg->path : "/";
  if (!visible_text(cfg->host, LD_WS_MAX_HOST) || !visible_text(path, LD_WS_MAX_PATH) ||
      path[0] != '/')
    return false;
  copy_text(s->host, sizeof s->host, cfg->host);
  copy_text(s->path, sizeof s->path, path);
  ld_ws_new_key(s->key);
  return ld_ws_accept_for_key(s->key, LD_WS_KEY_TEXT_LEN, s->accept) == 0;
}

ld_ws_session_t *ld_ws_session_new(const ld_ws_session_config_t *cfg) {
  ld_ws_session_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  s->server = cfg->server;
  s->max_frame = cfg->max_frame != 0 ? cfg->max_frame : LD_WS_DEFAULT_MAX_FRAME;
  s->why = "";
  ld_buf_init(&s->hs);
  int rc = s->server ? wslay_event_context_server_init(&s->ctx, &wslay_callbacks, s)
                     : wslay_event_context_client_init(&s->ctx, &wslay_callbacks, s);
  if (rc != 0 || (!s->server && !client_setup(s, cfg))) {
    if (rc == 0)
      wslay_event_context_free(s->ctx);
    free(s);
    return NULL;
  }
  wslay_event_config_set_no_buffering(s->ctx, 1);
  wslay_event_config_set_max_recv_msg_length(s->ctx, s->max_frame);
  return s;
}

void ld_ws_session_free(ld_ws_session_t *s) {
  if (s == NULL)
    return;
  wslay_event_context_free(s->ctx);
  ld_buf_clear(&s->hs);
  free(s);
}

int ld_ws_session_start(ld_ws_session_t *s, ld_buf_t *out) {
  if (s->server || s->started)
    return LD_ERR_STATE;
  int rc = ld_ws_write_request(out, s->host, s->path, s->key);
  if (rc == 0)
    s->started = true;
  return rc;
}

bool ld_ws_session_is_open(const ld_ws_session_t *s) {
  return s->opened;
}

const char *ld_ws_session_why(const ld_ws_session_t *s) {
  return s->why;
}

uint16_t ld_ws_session_close_code(const ld_ws_session_t *s) {
  return s->close_code;
}

static int session_fail(ld_ws_session_t *s, int err, const char *why) {
  s->state = S_DONE;
  s->why = why;
  ld_buf_clear(&s->hs);
  return err;
}

/* ---- reading frames ----------------------------------------------------------------------- */

/* Names what made wslay stop reading (after its close frame was flushed). */
static int read_stopped(ld_ws_session_t *s) {
  if (wslay_event_get_close_received(s->ctx)) {
    s->close_code = wslay_event_get_status_code_received(s->ctx);
    return session_fail(s, LD_ERR_CLOSED, "the peer closed the WebSocket");
  }
  switch (wslay_event_get_status_code_sent(s->ctx)) {
  case WSLAY_CODE_MESSAGE_TOO_BIG:
    return session_fail(s, LD_ERR_FRAME_TOO_LARGE, "data frame larger than the cap (1009)");
  case WSLAY_CODE_INVALID_FRAME_PAYLOAD_DATA:
    return session_fail(s, LD_ERR_MALFORMED, "invalid UTF-8 in a text or close frame (1007)");
  default:
    return session_fail(s, LD_ERR_PROTOCOL, "frame breaks RFC 6455 (1002)");
  }
}

static int read_frames(ld_ws_session_t *s, const uint8_t *data, size_t len) {
  if (len == 0)
    return 0;
  ld_cursor_init(&s->in, data, len);
  int r = wslay_event_recv(s->ctx);
  int sent = wslay_event_send(s->ctx);
  ld_cursor_init(&s->in, NULL, 0);
  if (s->nomem || r == WSLAY_ERR_NOMEM || sent != 0)
    return session_fail(s, LD_ERR_NOMEM, "out of memory");
  if (r != 0)
    return session_fail(s, LD_ERR_PROTOCOL, "invalid frame header");
  if (!wslay_event_get_read_enabled(s->ctx))
    return read_stopped(s);
  return 0;
}

/* ---- reading the handshake ---------------------------------------------------------------- */

static int server_answer(ld_ws_session_t *s, size_t *consumed) {
  ld_ws_request_t req;
  const char *why = "";
  int rc = ld_ws_parse_request(s->hs.data, s->hs.len, &req, consumed, &why);
  if (rc == LD_ERR_TRUNCATED)
    return rc;
  if (rc != 0) {
    ld_ws_write_reject(s->out, rc);
    return session_fail(s, rc, why);
  }
  char accept[LD_WS_ACCEPT_TEXT_LEN + 1];
  rc = ld_ws_accept_for_key(req.key, LD_WS_KEY_TEXT_LEN, accept);
  if (rc == 0)
    rc = ld_ws_write_response(s->out, accept);
  return rc != 0 ? session_fail(s, rc, "cannot answer the handshake") : 0;
}

static int client_check(ld_ws_session_t *s, size_t *consumed) {
  const char *why = "";
  int rc = ld_ws_parse_response(s->hs.data, s->hs.len, s->accept, consumed, &why);
  if (rc == 0 || rc == LD_ERR_TRUNCATED)
    return rc;
  return session_fail(s, rc, why);
}

/* Collects handshake bytes; once the block is complete, answers (server) or checks (client)
 * and feeds what follows it to the framing layer. */
static int read_handshake(ld_ws_session_t *s, const uint8_t *data, size_t len) {
  if (!s->server && !s->started)
    return LD_ERR_STATE;
  size_t room = LD_WS_MAX_HEADER_BLOCK - s->hs.len;
  size_t take = len < room ? len : room;
  if (ld_buf_append(&s->hs, data, take) != 0)
    return session_fail(s, LD_ERR_NOMEM, "out of memory");
  size_t consumed = 0;
  int rc = s->server ? server_answer(s, &consumed) : client_check(s, &consumed);
  if (rc == LD_ERR_TRUNCATED)
    return 0;
  if (rc != 0)
    return rc;
  s->state = S_OPEN;
  s->opened = true;
  ld_buf_t hs = s->hs;
  ld_buf_init(&s->hs);
  rc = read_frames(s, hs.data + consumed, hs.len - consumed);
  ld_buf_clear(&hs);
  if (rc == 0 && len > take)
    rc = read_frames(s, data + take, len - take);
  return rc;
}

int ld_ws_session_read(ld_ws_session_t *s, const uint8_t *data, size_t len, ld_buf_t *app,
                       ld_buf_t *out) {
  if (s->state == S_DONE)
    return LD_ERR_STATE;
  s->app = app;
  s->out = out;
  if (s->state == S_HANDSHAKE)
    return read_handshake(s, data, len);
  return read_frames(s, data, len);
}

/* ---- writing ------------------------------------------------------------------------------ */

int ld_ws_session_write(ld_ws_session_t *s, const uint8_t *data, size_t len, ld_buf_t *out) {
  if (s->state == S_HANDSHAKE)
    return LD_ERR_STATE;
  if (s->state == S_DONE || !wslay_event_get_write_enabled(s->ctx))
    return LD_ERR_CLOSED;
  s->out = out;
  while (len > 0) {
    size_t n = len < LD_WS_SEND_MESSAGE_MAX ? len : LD_WS_SEND_MESSAGE_MAX;
    struct wslay_event_msg msg = {.opcode = WSLAY_BINARY_FRAME, .msg = data, .msg_length = n};
    int r = wslay_event_queue_msg(s->ctx, &msg);
    if (r == WSLAY_ERR_NO_MORE_MSG)
      return LD_ERR_CLOSED;
    if (r != 0 || wslay_event_send(s->ctx) != 0)
      return LD_ERR_NOMEM;
    data += n;
    len -= n;
  }
  return 0;
}

int ld_ws_session_close(ld_ws_session_t *s, uint16_t code, ld_buf_t *out) {
  if (!s->opened || !wslay_event_get_write_enabled(s->ctx))
    return 0;
  s->out = out;
  int r = wslay_event_queue_close(s->ctx, code, NULL, 0);
  if (r == WSLAY_ERR_NO_MORE_MSG)
    return 0;
  if (r != 0 || wslay_event_send(s->ctx) != 0)
    return LD_ERR_NOMEM;
  return 0;
}
