#include "p2p/transport_ws.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/tls.h"
#include "p2p/transport_tcp.h"
#include "p2p/ws_session.h"

#define TOPIC "ws"

/* Scratch buffers bigger than this are released after use. */
#define WS_SCRATCH_KEEP (4u * 1024 * 1024)
#define WS_MAX_NAME 253

typedef enum ws_form {
  FORM_WS = 0,
  FORM_WSS,
  FORM_TLS_WS,
} ws_form_t;

typedef enum conn_state {
  C_RESOLVING = 0,
  C_CONNECTING,
  C_HANDSHAKE,
  C_OPEN,
} conn_state_t;

/* A WebSocket address taken apart (values point into the multiaddr). */
typedef struct ws_addr {
  uint32_t host_code;
  const uint8_t *host;
  size_t host_len;
  uint16_t port;
  ws_form_t form;
  const uint8_t *sni;
  size_t sni_len;
} ws_addr_t;

typedef struct ws_transport {
  ld_transport_t base;
  ld_transport_t *tcp;
  ld_tls_ctx_t *server_tls;
  ld_tls_ctx_t *client_tls; /* made at the first secure dial (OpenSSL's TLS state costs memory) */
  bool tls_verify;
  char *tls_ca_path;
  uint64_t max_frame;
  uint32_t handshake_timeout_ms;
  size_t max_pending;
  char path[LD_WS_MAX_PATH + 1];
  /* Scratch buffers. A read fills in_plain and in_app and sends out_tls; frames (read replies or
   * the owner's writes) go through out_ws and, with TLS, out_wire. No callback runs while one of
   * them is in use except in_app, which is only read by its delivery. */
  ld_buf_t in_plain, in_app, out_tls, out_ws, out_wire;
} ws_transport_t;

typedef struct ws_listener ws_listener_t;

typedef struct ws_conn {
  ld_tconn_t base;
  ws_transport_t *t;
  ws_listener_t *listener; /* inbound, until the handshake completed */
  struct ws_conn *lprev, *lnext;
  ld_tconn_t *raw;
  ld_tls_t *tls;
  ld_ws_session_t *ws;
  uv_timer_t timer; /* handshake deadline, then deferred delivery */
  uv_getaddrinfo_t *gai;
  const ld_tconn_events_t *ev;
  void *user_data;
  ld_buf_t pending; /* payload held while paused or not started */
  conn_state_t state;
  ws_form_t form;
  int refs; /* the timer handle and a pending name lookup */
  uint16_t port;
  bool closed;
  bool failed;
  bool paused;
  char host[WS_MAX_NAME + 1]; /* name or IP text being dialed */
  char sni[WS_MAX_NAME + 1];
} ws_conn_t;

struct ws_listener {
  ld_tlistener_t base;
  ws_transport_t *t;
  ld_tlistener_t *tcp;
  ld_tlistener_accept_fn accept;
  void *user_data;
  ws_form_t form;
  ws_conn_t *pending;
  size_t n_pending;
};

static const ld_tconn_ops_t ws_conn_ops;
static const ld_tconn_events_t raw_events;

/* ---- addresses ------------------------------------------------------------------------------ */

static bool parse_tail(const ld_multiaddr_t *a, size_t *off, ws_addr_t *w) {
  ld_multiaddr_component_t c;
  if (ld_multiaddr_next(a, off, &c) != 1)
    return false;
  if (c.code == LD_MA_WS || c.code == LD_MA_WSS) {
    w->form = c.code == LD_MA_WS ? FORM_WS : FORM_WSS;
    return true;
  }
  if (c.code != LD_MA_TLS || ld_multiaddr_next(a, off, &c) != 1)
    return false;
  if (c.code == LD_MA_SNI) {
    w->sni = c.value;
    w->sni_len = c.value_len;
    if (ld_multiaddr_next(a, off, &c) != 1)
      return false;
  }
  w->form = FORM_TLS_WS;
  return c.code == LD_MA_WS;
}

static bool parse_addr(const ld_multiaddr_t *a, ws_addr_t *w) {
  size_t off = 0;
  ld_multiaddr_component_t c;
  memset(w, 0, sizeof *w);
  if (ld_multiaddr_next(a, &off, &c) != 1)
    return false;
  if (c.code != LD_MA_IP4 && c.code != LD_MA_IP6 && c.code != LD_MA_DNS && c.code != LD_MA_DNS4 &&
      c.code != LD_MA_DNS6)
    return false;
  w->host_code = c.code;
  w->host = c.value;
  w->host_len = c.value_len;
  if (ld_multiaddr_next(a, &off, &c) != 1 || c.code != LD_MA_TCP || c.value_len != 2)
    return false;
  w->port = (uint16_t)(c.value[0] << 8 | c.value[1]);
  if (!parse_tail(a, &off, w))
    return false;
  while (ld_multiaddr_next(a, &off, &c) == 1)
    if (c.code != LD_MA_P2P)
      return false;
  return true;
}

bool ld_transport_ws_handles(const ld_multiaddr_t *addr) {
  ws_addr_t w;
  return parse_addr(addr, &w);
}

static bool is_ip(uint32_t code) {
  return code == LD_MA_IP4 || code == LD_MA_IP6;
}

static bool name_text(char *dst, const uint8_t *p, size_t n) {
  if (n == 0 || n > WS_MAX_NAME)
    return false;
  for (size_t i = 0; i < n; i++)
    if (p[i] <= 0x20 || p[i] >= 0x7f || p[i] == '/')
      return false;
  memcpy(dst, p, n);
  dst[n] = '\0';
  return true;
}

/* The host being dialed as text: an IP literal or the DNS name. */
static bool host_text(char *dst, const ws_addr_t *w) {
  if (w->host_code == LD_MA_IP4)
    return w->host_len == 4 && inet_ntop(AF_INET, w->host, dst, WS_MAX_NAME + 1) != NULL;
  if (w->host_code == LD_MA_IP6)
    return w->host_len == 16 && inet_ntop(AF_INET6, w->host, dst, WS_MAX_NAME + 1) != NULL;
  return name_text(dst, w->host, w->host_len);
}

static void add_suffix(ld_multiaddr_t *m, ws_form_t form) {
  if (form == FORM_WS) {
    ld_multiaddr_push(m, LD_MA_WS, NULL, 0);
  } else if (form == FORM_WSS) {
    ld_multiaddr_push(m, LD_MA_WSS, NULL, 0);
  } else {
    ld_multiaddr_push(m, LD_MA_TLS, NULL, 0);
    ld_multiaddr_push(m, LD_MA_WS, NULL, 0);
  }
}

/* /ip4|ip6/<host>/tcp/<port> of an address whose host is an IP. */
static int tcp_addr(const ws_addr_t *w, ld_multiaddr_t *out) {
  uint8_t port[2] = {(uint8_t)(w->port >> 8), (uint8_t)w->port};
  memset(out, 0, sizeof *out);
  int rc = ld_multiaddr_push(out, w->host_code, w->host, w->host_len);
  if (rc == 0)
    rc = ld_multiaddr_push(out, LD_MA_TCP, port, sizeof port);
  return rc;
}

static const char *addr_text(const ld_multiaddr_t *m, char *buf, size_t cap) {
  if (m->len == 0 || ld_multiaddr_to_text(m, buf, cap) < 0)
    snprintf(buf, cap, "?");
  return buf;
}

/* ---- scratch buffers ------------------------------------------------------------------------ */

static void trim(ld_buf_t *b) {
  if (b->cap > WS_SCRATCH_KEEP)
    ld_buf_clear(b);
  else
    ld_buf_reset(b);
}

/* Hands wire bytes to the TCP connection (which takes the buffer's memory when it queues). */
static int send_raw(ws_conn_t *c, ld_buf_t *b) {
  int rc = 0;
  if (b->len > 0)
    rc = c->raw != NULL ? ld_tconn_write(c->raw, b) : LD_ERR_CLOSED;
  trim(b);
  return rc;
}

/* Sends WebSocket bytes, through TLS when the connection has it. */
static int send_plain(ws_conn_t *c, ld_buf_t *b) {
  if (b->len == 0 || c->tls == NULL)
    return send_raw(c, b);
  ld_buf_t *wire = &c->t->out_wire;
  ld_buf_reset(wire);
  int rc = ld_tls_write(c->tls, b->data, b->len, wire);
  trim(b);
  if (rc == 0)
    rc = send_raw(c, wire);
  else
    trim(wire);
  return rc;
}

/* ---- connection lifetime -------------------------------------------------------------------- */

static void conn_release(ws_conn_t *c) {
  if (--c->refs > 0)
    return;
  ld_tls_free(c->tls);
  ld_ws_session_free(c->ws);
  ld_buf_clear(&c->pending);
  free(c);
}

static void timer_closed(uv_handle_t *h) {
  conn_release(h->data);
}

static ws_conn_t *conn_new(ws_transport_t *t, bool outbound, ws_form_t form) {
  ws_conn_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  if (uv_timer_init(t->base.loop, &c->timer) != 0) {
    free(c);
    return NULL;
  }
  c->timer.data = c;
  c->refs = 1;
  c->base.ops = &ws_conn_ops;
  c->base.transport = &t->base;
  c->base.outbound = outbound;
  c->t = t;
  c->form = form;
  ld_buf_init(&c->pending);
  return c;
}

static void listener_remove(ws_conn_t *c) {
  ws_listener_t *l = c->listener;
  if (l == NULL)
    return;
  if (c->lprev != NULL)
    c->lprev->lnext = c->lnext;
  else
    l->pending = c->lnext;
  if (c->lnext != NULL)
    c->lnext->lprev = c->lprev;
  c->lprev = c->lnext = NULL;
  c->listener = NULL;
  l->n_pending--;
}

static void listener_add(ws_listener_t *l, ws_conn_t *c) {
  c->listener = l;
  c->lnext = l->pending;
  if (l->pending != NULL)
    l->pending->lprev = c;
  l->pending = c;
  l->n_pending++;
}

/* Releases the socket, the lookup and the timer; the memory goes with the timer's close. */
static void conn_dispose(ws_conn_t *c, bool graceful) {
  c->closed = true;
  c->ev = NULL;
  listener_remove(c);
  if (c->gai != NULL)
    uv_cancel((uv_req_t *)c->gai);
  if (c->raw != NULL)
    ld_tconn_close(c->raw, graceful);
  c->raw = NULL;
  uv_close((uv_handle_t *)&c->timer, timer_closed);
}

static void log_failure(ws_conn_t *c, const char *what, int err, const char *why) {
  char text[LD_MULTIADDR_TEXT_MAX];
  addr_text(&c->base.remote, text, sizeof text);
  if (err == LD_ERR_CLOSED || err == LD_ERR_TIMEOUT)
    LD_INFO(TOPIC, "%s: addr=%s reason=%s (%s)", what, text, ld_errname(err), why);
  else
    LD_WARN(TOPIC, "%s: addr=%s reason=%s (%s)", what, text, ld_errname(err), why);
}

static void fail_outbound(ws_conn_t *c, int err, const char *why) {
  const ld_tconn_events_t *ev = c->ev;
  void *ud = c->user_data;
  log_failure(c, "ws dial failed", err, why);
  conn_dispose(c, false);
  ev->on_connect(&c->base, err, ud);
}

/* A failure before the owner has the connection ends it here; afterwards it is reported. */
static void conn_failed(ws_conn_t *c, int err, const char *why) {
  if (c->closed || c->failed)
    return;
  if (c->state < C_OPEN && c->base.outbound) {
    fail_outbound(c, err, why);
    return;
  }
  if (c->state < C_OPEN) {
    log_failure(c, "ws handshake failed", err, why);
    conn_dispose(c, true); /* flush a refusal or an alert */
    return;
  }
  c->failed = true;
  if (c->raw != NULL)
    ld_tconn_pause(c->raw, true);
  if (err != LD_ERR_CLOSED)
    log_failure(c, "ws connection failed", err, why);
  else
    LD_DEBUG(TOPIC, "closed by the peer: %s", why[0] != '\0' ? why : "end of stream");
  if (c->ev != NULL && c->ev->on_error != NULL)
    c->ev->on_error(&c->base, err, c->user_data);
}

/* ---- delivery ------------------------------------------------------------------------------- */

static void on_timer(uv_timer_t *h);

static void schedule_delivery(ws_conn_t *c) {
  if (c->pending.len > 0 && !c->closed)
    uv_timer_start(&c->timer, on_timer, 0, 0);
}

static void deliver(ws_conn_t *c, const uint8_t *data, size_t len) {
  if (len == 0 || c->closed)
    return;
  if (c->paused || c->ev == NULL || c->pending.len > 0) {
    if (ld_buf_append(&c->pending, data, len) != 0)
      conn_failed(c, LD_ERR_NOMEM, "out of memory");
    return;
  }
  c->ev->on_read(&c->base, data, len, c->user_data);
}

static void deliver_pending(ws_conn_t *c) {
  if (c->paused || c->ev == NULL || c->failed || c->pending.len == 0)
    return;
  ld_buf_t p = c->pending;
  ld_buf_init(&c->pending);
  c->ev->on_read(&c->base, p.data, p.len, c->user_data);
  ld_buf_clear(&p);
}

static void on_timer(uv_timer_t *h) {
  ws_conn_t *c = h->data;
  if (c->closed)
    return;
  if (c->state < C_OPEN)
    conn_failed(c, LD_ERR_TIMEOUT, "handshake not finished in time");
  else
    deliver_pending(c);
}

/* The WebSocket handshake completed: the owner gets the connection. */
static void conn_opened(ws_conn_t *c) {
  c->state = C_OPEN;
  uv_timer_stop(&c->timer);
  if (c->paused && c->raw != NULL)
    ld_tconn_pause(c->raw, true);
  if (c->base.outbound) {
    c->ev->on_connect(&c->base, 0, c->user_data);
    return;
  }
  ws_listener_t *l = c->listener;
  listener_remove(c);
  l->accept(&l->base, &c->base, l->user_data);
}

/* ---- the read path -------------------------------------------------------------------------- */

static int start_ws_client(ws_conn_t *c) {
  ld_buf_t *out = &c->t->out_ws;
  ld_buf_reset(out);
  int rc = ld_ws_session_start(c->ws, out);
  if (rc == 0)
    rc = send_plain(c, out);
  return rc;
}

/* Decrypts into in_plain and sends what TLS has to say. */
static int tls_input(ws_conn_t *c, const uint8_t *data, size_t len, const char **why) {
  ws_transport_t *t = c->t;
  bool was_established = ld_tls_established(c->tls);
  ld_buf_reset(&t->out_tls);
  int rc = ld_tls_read(c->tls, data, len, &t->in_plain, &t->out_tls);
  int wrc = send_raw(c, &t->out_tls);
  *why = ld_tls_why(c->tls);
  if (rc == 0 && wrc != 0)
    rc = wrc, *why = "write failed";
  if (rc == 0 && !was_established && ld_tls_established(c->tls) && c->base.outbound)
    rc = start_ws_client(c), *why = "cannot start the WebSocket handshake";
  return rc;
}

/* Runs the WebSocket session over plaintext: payload into in_app, replies sent. */
static int ws_input(ws_conn_t *c, const uint8_t *data, size_t len, const char **why) {
  ld_buf_t *out = &c->t->out_ws;
  ld_buf_reset(out);
  int rc = ld_ws_session_read(c->ws, data, len, &c->t->in_app, out);
  *why = ld_ws_session_why(c->ws);
  int wrc = send_plain(c, out);
  if (rc == 0 && wrc != 0)
    rc = wrc, *why = "write failed";
  return rc;
}

static void raw_read(ld_tconn_t *raw, const uint8_t *data, size_t len, void *ud) {
  (void)raw;
  ws_conn_t *c = ud;
  ws_transport_t *t = c->t;
  if (c->closed || c->failed)
    return;
  const char *tls_why = "", *ws_why = "";
  int tls_rc = 0, ws_rc = 0;
  ld_buf_reset(&t->in_plain);
  ld_buf_reset(&t->in_app);
  if (c->tls != NULL) {
    tls_rc = tls_input(c, data, len, &tls_why);
    data = t->in_plain.data;
    len = t->in_plain.len;
  }
  bool was_open = ld_ws_session_is_open(c->ws);
  if (len > 0)
    ws_rc = ws_input(c, data, len, &ws_why);
  if (!was_open && ld_ws_session_is_open(c->ws) && ws_rc == 0 && tls_rc == 0 && !c->closed)
    conn_opened(c);
  deliver(c, t->in_app.data, t->in_app.len);
  trim(&t->in_plain);
  trim(&t->in_app);
  if (ws_rc != 0)
    conn_failed(c, ws_rc, ws_why);
  else if (tls_rc != 0)
    conn_failed(c, tls_rc, tls_why);
}

static void raw_drain(ld_tconn_t *raw, void *ud) {
  (void)raw;
  ws_conn_t *c = ud;
  if (!c->closed && c->state == C_OPEN && c->ev != NULL && c->ev->on_drain != NULL)
    c->ev->on_drain(&c->base, c->user_data);
}

static void raw_error(ld_tconn_t *raw, int err, void *ud) {
  (void)raw;
  conn_failed(ud, err, err == LD_ERR_CLOSED ? "connection closed by the peer" : "socket error");
}

/* ---- dialing -------------------------------------------------------------------------------- */

static void raw_connected(ld_tconn_t *raw, int err, void *ud) {
  ws_conn_t *c = ud;
  if (c->closed)
    return;
  if (err != 0) {
    c->raw = NULL; /* the TCP transport closed it */
    fail_outbound(c, err, "TCP connect failed");
    return;
  }
  c->base.local = raw->local;
  c->base.remote = raw->remote;
  add_suffix(&c->base.local, c->form);
  add_suffix(&c->base.remote, c->form);
  c->state = C_HANDSHAKE;
  int rc;
  if (c->form == FORM_WS) {
    rc = start_ws_client(c);
  } else {
    ld_buf_t *out = &c->t->out_tls;
    ld_buf_reset(out);
    rc = ld_tls_start(c->tls, out);
    if (rc == 0)
      rc = send_raw(c, out);
  }
  if (rc != 0)
    fail_outbound(c, rc, "cannot start the handshake");
}

static int connect_tcp(ws_conn_t *c, const ld_multiaddr_t *tcp) {
  c->state = C_CONNECTING;
  return c->t->tcp->ops->dial(c->t->tcp, tcp, &raw_events, c, &c->raw);
}

static void on_resolved(uv_getaddrinfo_t *req, int status, struct addrinfo *res) {
  ws_conn_t *c = req->data;
  free(req);
  c->gai = NULL;
  bool closed = c->closed;
  ld_multiaddr_t tcp;
  int rc = status == 0 && res != NULL ? 0 : LD_ERR_UNREACHABLE;
  if (rc == 0 && !closed) {
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    memcpy(&ss, res->ai_addr, res->ai_addrlen < sizeof ss ? res->ai_addrlen : sizeof ss);
    if (ss.ss_family == AF_INET)
      ((struct sockaddr_in *)&ss)->sin_port = htons(c->port);
    else
      ((struct sockaddr_in6 *)&ss)->sin6_port = htons(c->port);
    rc = ld_multiaddr_from_sockaddr(&tcp, &ss);
  }
  uv_freeaddrinfo(res);
  conn_release(c); /* while it is open, the timer's reference keeps it */
  if (closed)
    return;
  if (rc == 0)
    rc = connect_tcp(c, &tcp);
  if (rc != 0)
    fail_outbound(c, rc, status != 0 ? uv_strerror(status) : "cannot connect");
}

static int start_resolve(ws_conn_t *c, uint32_t code) {
  uv_getaddrinfo_t *req = malloc(sizeof *req);
  if (req == NULL)
    return LD_ERR_NOMEM;
  struct addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = code == LD_MA_DNS4 ? AF_INET : code == LD_MA_DNS6 ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  req->data = c;
  int rc = uv_getaddrinfo(c->t->base.loop, req, on_resolved, c->host, NULL, &hints);
  if (rc != 0) {
    free(req);
    return LD_ERR_IO;
  }
  c->gai = req;
  c->refs++;
  c->state = C_RESOLVING;
  return 0;
}

/* Host header, TLS name and the engines of an outbound connection. */
static int setup_outbound(ws_conn_t *c, const ws_addr_t *w) {
  ws_transport_t *t = c->t;
  if (!host_text(c->host, w) || (w->sni != NULL && !name_text(c->sni, w->sni, w->sni_len)))
    return LD_ERR_UNSUPPORTED;
  if (w->sni == NULL)
    memcpy(c->sni, c->host, sizeof c->sni);
  char hosthdr[LD_WS_MAX_HOST + 1];
  snprintf(hosthdr, sizeof hosthdr, w->host_code == LD_MA_IP6 ? "[%s]:%u" : "%s:%u", c->host,
           (unsigned)w->port);
  ld_ws_session_config_t scfg = {
      .server = false, .max_frame = t->max_frame, .host = hosthdr, .path = t->path};
  c->ws = ld_ws_session_new(&scfg);
  if (c->ws == NULL)
    return LD_ERR_NOMEM;
  if (w->form != FORM_WS && t->client_tls == NULL) {
    int rc = ld_tls_client_ctx_new(t->tls_verify, t->tls_ca_path, &t->client_tls);
    if (rc != 0)
      return rc;
  }
  if (w->form != FORM_WS && (c->tls = ld_tls_new(t->client_tls, c->sni)) == NULL)
    return LD_ERR_NOMEM;
  c->port = w->port;
  return 0;
}

static int ws_dial(ld_transport_t *base, const ld_multiaddr_t *addr, const ld_tconn_events_t *ev,
                   void *user_data, ld_tconn_t **out) {
  ws_transport_t *t = (ws_transport_t *)base;
  ws_addr_t w;
  if (!parse_addr(addr, &w) || w.port == 0)
    return LD_ERR_UNSUPPORTED;
  ws_conn_t *c = conn_new(t, true, w.form);
  if (c == NULL)
    return LD_ERR_NOMEM;
  c->base.remote = *addr;
  ld_multiaddr_peerid(&c->base.remote, NULL, true);
  int rc = setup_outbound(c, &w);
  if (rc == 0 && is_ip(w.host_code)) {
    ld_multiaddr_t tcp;
    rc = tcp_addr(&w, &tcp);
    if (rc == 0)
      rc = connect_tcp(c, &tcp);
  } else if (rc == 0) {
    rc = start_resolve(c, w.host_code);
  }
  if (rc != 0) {
    conn_dispose(c, false);
    return rc;
  }
  c->ev = ev;
  c->user_data = user_data;
  uv_timer_start(&c->timer, on_timer, t->handshake_timeout_ms, 0);
  *out = &c->base;
  return 0;
}

/* ---- the connection vtable ------------------------------------------------------------------ */

static void ws_start(ld_tconn_t *base, const ld_tconn_events_t *ev, void *user_data) {
  ws_conn_t *c = (ws_conn_t *)base;
  c->ev = ev;
  c->user_data = user_data;
  schedule_delivery(c);
}

static int ws_write(ld_tconn_t *base, ld_buf_t *data) {
  ws_conn_t *c = (ws_conn_t *)base;
  if (c->closed || c->failed || c->state != C_OPEN || c->raw == NULL)
    return LD_ERR_CLOSED;
  if (data->len == 0)
    return 0;
  ld_buf_t *out = &c->t->out_ws;
  ld_buf_reset(out);
  int rc = ld_ws_session_write(c->ws, data->data, data->len, out);
  ld_buf_reset(data);
  if (rc != 0) {
    trim(out);
    return rc;
  }
  return send_plain(c, out);
}

static size_t ws_queued(const ld_tconn_t *base) {
  const ws_conn_t *c = (const ws_conn_t *)base;
  return c->raw != NULL ? ld_tconn_queued(c->raw) : 0;
}

static void ws_pause(ld_tconn_t *base, bool paused) {
  ws_conn_t *c = (ws_conn_t *)base;
  c->paused = paused;
  if (c->closed || c->state != C_OPEN)
    return;
  if (c->raw != NULL && !c->failed)
    ld_tconn_pause(c->raw, paused);
  if (!paused)
    schedule_delivery(c);
}

/* A close frame and TLS close_notify ahead of the TCP half-close. */
static void say_goodbye(ws_conn_t *c) {
  ld_buf_t *out = &c->t->out_ws;
  ld_buf_reset(out);
  if (ld_ws_session_close(c->ws, LD_WS_CLOSE_NORMAL, out) == 0 && send_plain(c, out) == 0 &&
      c->tls != NULL) {
    ld_buf_t *wire = &c->t->out_wire;
    ld_buf_reset(wire);
    if (ld_tls_shutdown(c->tls, wire) == 0)
      send_raw(c, wire);
  }
  trim(out);
}

static void ws_close(ld_tconn_t *base, bool graceful) {
  ws_conn_t *c = (ws_conn_t *)base;
  if (c->closed)
    return;
  if (graceful && c->state == C_OPEN && !c->failed && c->raw != NULL)
    say_goodbye(c);
  conn_dispose(c, graceful);
}

static const ld_tconn_ops_t ws_conn_ops = {
    .start = ws_start,
    .write = ws_write,
    .queued = ws_queued,
    .pause = ws_pause,
    .close = ws_close,
};

static const ld_tconn_events_t raw_events = {
    .on_connect = raw_connected,
    .on_read = raw_read,
    .on_drain = raw_drain,
    .on_error = raw_error,
};

/* ---- listening ------------------------------------------------------------------------------ */

static int setup_inbound(ws_conn_t *c, ld_tconn_t *raw) {
  ws_transport_t *t = c->t;
  c->raw = raw;
  c->base.local = raw->local;
  c->base.remote = raw->remote;
  add_suffix(&c->base.local, c->form);
  add_suffix(&c->base.remote, c->form);
  ld_ws_session_config_t scfg = {.server = true, .max_frame = t->max_frame};
  c->ws = ld_ws_session_new(&scfg);
  if (c->ws == NULL)
    return LD_ERR_NOMEM;
  if (c->form != FORM_WS && (c->tls = ld_tls_new(t->server_tls, NULL)) == NULL)
    return LD_ERR_NOMEM;
  c->state = C_HANDSHAKE;
  return 0;
}

static void on_tcp_accept(ld_tlistener_t *tl, ld_tconn_t *raw, void *ud) {
  (void)tl;
  ws_listener_t *l = ud;
  ws_transport_t *t = l->t;
  if (l->n_pending >= t->max_pending) {
    char text[LD_MULTIADDR_TEXT_MAX];
    LD_WARN(TOPIC, "refusing inbound connection: addr=%s reason=%s (%zu handshakes running)",
            addr_text(&raw->remote, text, sizeof text), ld_errname(LD_ERR_LIMIT), l->n_pending);
    ld_tconn_close(raw, false);
    return;
  }
  ws_conn_t *c = conn_new(t, false, l->form);
  if (c == NULL) {
    ld_tconn_close(raw, false);
    return;
  }
  listener_add(l, c);
  if (setup_inbound(c, raw) != 0) {
    conn_dispose(c, false);
    return;
  }
  uv_timer_start(&c->timer, on_timer, t->handshake_timeout_ms, 0);
  ld_tconn_start(raw, &raw_events, c);
}

static int ws_listen(ld_transport_t *base, const ld_multiaddr_t *addr,
                     ld_tlistener_accept_fn accept, void *user_data, ld_tlistener_t **out) {
  ws_transport_t *t = (ws_transport_t *)base;
  ws_addr_t w;
  ld_multiaddr_t tcp;
  if (!parse_addr(addr, &w) || !is_ip(w.host_code) || w.sni != NULL || tcp_addr(&w, &tcp) != 0)
    return LD_ERR_UNSUPPORTED;
  if (w.form != FORM_WS && t->server_tls == NULL) {
    LD_WARN(TOPIC, "cannot listen securely without a certificate and key");
    return LD_ERR_UNSUPPORTED;
  }
  ws_listener_t *l = calloc(1, sizeof *l);
  if (l == NULL)
    return LD_ERR_NOMEM;
  int rc = t->tcp->ops->listen(t->tcp, &tcp, on_tcp_accept, l, &l->tcp);
  if (rc != 0) {
    free(l);
    return rc;
  }
  l->t = t;
  l->accept = accept;
  l->user_data = user_data;
  l->form = w.form;
  l->base.transport = base;
  l->base.addr = l->tcp->addr;
  add_suffix(&l->base.addr, w.form);
  *out = &l->base;
  return 0;
}

static void ws_listener_close(ld_tlistener_t *base) {
  ws_listener_t *l = (ws_listener_t *)base;
  l->t->tcp->ops->listener_close(l->tcp);
  while (l->pending != NULL)
    conn_dispose(l->pending, false);
  free(l);
}

/* ---- the transport -------------------------------------------------------------------------- */

static void ws_destroy(ld_transport_t *base) {
  ws_transport_t *t = (ws_transport_t *)base;
  if (t->tcp != NULL)
    t->tcp->ops->destroy(t->tcp);
  ld_tls_ctx_free(t->server_tls);
  ld_tls_ctx_free(t->client_tls);
  free(t->tls_ca_path);
  ld_buf_clear(&t->in_plain);
  ld_buf_clear(&t->in_app);
  ld_buf_clear(&t->out_tls);
  ld_buf_clear(&t->out_ws);
  ld_buf_clear(&t->out_wire);
  free(t);
}

static const ld_transport_ops_t ws_transport_ops = {
    .name = "ws",
    .handles = ld_transport_ws_handles,
    .listen = ws_listen,
    .listener_close = ws_listener_close,
    .dial = ws_dial,
    .destroy = ws_destroy,
};

void ld_ws_config_default(ld_ws_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->max_frame = LD_WS_DEFAULT_MAX_FRAME;
  cfg->handshake_timeout_ms = LD_WS_HANDSHAKE_TIMEOUT_MS;
  cfg->max_pending_handshakes = LD_WS_MAX_PENDING_HANDSHAKES;
  cfg->path = "/";
}

static int apply_config(ws_transport_t *t, const ld_ws_config_t *cfg) {
  const char *path = cfg->path != NULL ? cfg->path : "/";
  if ((cfg->tls_cert_path == NULL) != (cfg->tls_key_path == NULL) || path[0] != '/' ||
      strlen(path) > LD_WS_MAX_PATH)
    return LD_ERR_INVALID_ARG;
  for (const char *p = path; *p != '\0'; p++)
    if ((uint8_t)*p <= 0x20 || (uint8_t)*p >= 0x7f)
      return LD_ERR_INVALID_ARG;
  strcpy(t->path, path);
  t->max_frame = cfg->max_frame != 0 ? cfg->max_frame : LD_WS_DEFAULT_MAX_FRAME;
  t->handshake_timeout_ms =
      cfg->handshake_timeout_ms != 0 ? cfg->handshake_timeout_ms : LD_WS_HANDSHAKE_TIMEOUT_MS;
  t->max_pending =
      cfg->max_pending_handshakes != 0 ? cfg->max_pending_handshakes : LD_WS_MAX_PENDING_HANDSHAKES;
  int rc = 0;
  if (cfg->tls_cert_path != NULL)
    rc = ld_tls_server_ctx_new(cfg->tls_cert_path, cfg->tls_key_path, &t->server_tls);
  t->tls_verify = cfg->tls_verify;
  if (rc == 0 && cfg->tls_ca_path != NULL && (t->tls_ca_path = strdup(cfg->tls_ca_path)) == NULL)
    rc = LD_ERR_NOMEM;
  if (rc == 0 && (t->tcp = ld_transport_tcp_new(t->base.loop)) == NULL)
    rc = LD_ERR_NOMEM;
  return rc;
}

ld_transport_t *ld_transport_ws_new(uv_loop_t *loop, const ld_ws_config_t *cfg, int *err) {
  ld_ws_config_t defaults;
  if (cfg == NULL) {
    ld_ws_config_default(&defaults);
    cfg = &defaults;
  }
  ws_transport_t *t = calloc(1, sizeof *t);
  int rc = t != NULL ? 0 : LD_ERR_NOMEM;
  if (t != NULL) {
    t->base.ops = &ws_transport_ops;
    t->base.loop = loop;
    rc = apply_config(t, cfg);
  }
  if (rc != 0 && t != NULL) {
    ws_destroy(&t->base);
    t = NULL;
  }
  if (err != NULL)
    *err = rc;
  return t != NULL ? &t->base : NULL;
}
