#include "p2p/transport_tcp.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"

#define TOPIC "tcp"

typedef struct tcp_transport {
  ld_transport_t base;
  uint8_t *rbuf;
} tcp_transport_t;

typedef struct tcp_conn {
  ld_tconn_t base;
  uv_tcp_t handle;
  uv_connect_t connect_req;
  uv_shutdown_t shutdown_req;
  uv_timer_t linger;
  const ld_tconn_events_t *ev;
  void *user_data;
  size_t queued;
  int handles; /* libuv handles still open; the memory goes when it reaches 0 */
  bool connected;
  bool closed;
  bool failed;
  bool reading;
  bool paused;     /* by the owner */
  bool backlogged; /* passed LD_TCONN_HIGH_WATER: on_drain is owed */
  bool read_stop;  /* passed LD_TCONN_READ_STOP: not reading */
} tcp_conn_t;

typedef struct tcp_write {
  uv_write_t req;
  uint8_t *data;
  size_t len;
} tcp_write_t;

typedef struct tcp_listener {
  ld_tlistener_t base;
  uv_tcp_t handle;
  ld_tlistener_accept_fn accept;
  void *user_data;
} tcp_listener_t;

static const ld_tconn_ops_t tcp_conn_ops;

int ld_tcp_map_uv_error(int uverr) {
  switch (uverr) {
  case UV_ECONNREFUSED:
    return LD_ERR_REFUSED;
  case UV_ENETUNREACH:
  case UV_EHOSTUNREACH:
  case UV_EADDRNOTAVAIL:
    return LD_ERR_UNREACHABLE;
  case UV_ETIMEDOUT:
    return LD_ERR_TIMEOUT;
  case UV_EADDRINUSE:
    return LD_ERR_ADDR_IN_USE;
  case UV_EOF:
  case UV_ECONNRESET:
  case UV_EPIPE:
    return LD_ERR_CLOSED;
  case UV_ENOMEM:
  case UV_ENOBUFS:
    return LD_ERR_NOMEM;
  default:
    return LD_ERR_IO;
  }
}

/* ---- addresses -------------------------------------------------------------------------- */

static bool tcp_handles(const ld_multiaddr_t *addr) {
  size_t off = 0;
  ld_multiaddr_component_t c;
  if (ld_multiaddr_next(addr, &off, &c) != 1 || (c.code != LD_MA_IP4 && c.code != LD_MA_IP6))
    return false;
  if (ld_multiaddr_next(addr, &off, &c) != 1 || c.code != LD_MA_TCP)
    return false;
  while (ld_multiaddr_next(addr, &off, &c) == 1)
    if (c.code != LD_MA_P2P)
      return false;
  return true;
}

static void fill_addrs(tcp_conn_t *c) {
  struct sockaddr_storage ss;
  int len = sizeof ss;
  if (uv_tcp_getsockname(&c->handle, (struct sockaddr *)&ss, &len) == 0)
    ld_multiaddr_from_sockaddr(&c->base.local, &ss);
  len = sizeof ss;
  if (uv_tcp_getpeername(&c->handle, (struct sockaddr *)&ss, &len) == 0)
    ld_multiaddr_from_sockaddr(&c->base.remote, &ss);
}

/* ---- connection lifetime ---------------------------------------------------------------- */

static tcp_conn_t *conn_new(tcp_transport_t *t, bool outbound) {
  tcp_conn_t *c = calloc(1, sizeof *c);
  if (c == NULL)
    return NULL;
  if (uv_tcp_init(t->base.loop, &c->handle) != 0) {
    free(c);
    return NULL;
  }
  c->base.ops = &tcp_conn_ops;
  c->base.transport = &t->base;
  c->base.outbound = outbound;
  c->handle.data = c;
  c->handles = 1;
  return c;
}

static void handle_closed(uv_handle_t *h) {
  tcp_conn_t *c = h->data;
  if (--c->handles == 0)
    free(c);
}

static void close_handles(tcp_conn_t *c) {
  if (!uv_is_closing((uv_handle_t *)&c->handle))
    uv_close((uv_handle_t *)&c->handle, handle_closed);
  if (c->handles == 2 && !uv_is_closing((uv_handle_t *)&c->linger))
    uv_close((uv_handle_t *)&c->linger, handle_closed);
}

static void shutdown_done(uv_shutdown_t *req, int status) {
  (void)status;
  close_handles(req->data);
}

static void linger_expired(uv_timer_t *t) {
  close_handles(t->data);
}

static bool start_linger(tcp_conn_t *c) {
  if (!c->connected || c->failed)
    return false;
  c->shutdown_req.data = c;
  if (uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->handle, shutdown_done) != 0)
    return false;
  uv_timer_init(c->handle.loop, &c->linger);
  c->linger.data = c;
  c->handles = 2;
  uv_timer_start(&c->linger, linger_expired, LD_TCP_LINGER_MS, 0);
  uv_unref((uv_handle_t *)&c->linger);
  return true;
}

static void tcp_close(ld_tconn_t *base, bool graceful) {
  tcp_conn_t *c = (tcp_conn_t *)base;
  if (c->closed)
    return;
  c->closed = true;
  c->ev = NULL;
  if (c->reading)
    uv_read_stop((uv_stream_t *)&c->handle);
  c->reading = false;
  if (!graceful || !start_linger(c))
    close_handles(c);
}

/* ---- reading ---------------------------------------------------------------------------- */

static void alloc_read(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  (void)suggested;
  tcp_conn_t *c = h->data;
  tcp_transport_t *t = (tcp_transport_t *)c->base.transport;
  if (t->rbuf == NULL)
    t->rbuf = malloc(LD_TRANSPORT_READ_BUF);
  *buf = uv_buf_init((char *)t->rbuf, t->rbuf != NULL ? LD_TRANSPORT_READ_BUF : 0);
}

static void report_error(tcp_conn_t *c, int err) {
  if (c->failed || c->closed)
    return;
  c->failed = true;
  if (c->reading)
    uv_read_stop((uv_stream_t *)&c->handle);
  c->reading = false;
  if (c->ev->on_error != NULL)
    c->ev->on_error(&c->base, err, c->user_data);
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  tcp_conn_t *c = s->data;
  if (c->closed)
    return;
  if (nread > 0)
    c->ev->on_read(&c->base, (const uint8_t *)buf->base, (size_t)nread, c->user_data);
  else if (nread < 0)
    report_error(c, nread == UV_ENOBUFS ? LD_ERR_NOMEM : ld_tcp_map_uv_error((int)nread));
}

static void update_reading(tcp_conn_t *c) {
  bool want = !c->closed && !c->failed && c->connected && !c->paused && !c->read_stop;
  if (want == c->reading)
    return;
  if (want)
    want = uv_read_start((uv_stream_t *)&c->handle, alloc_read, on_read) == 0;
  else
    uv_read_stop((uv_stream_t *)&c->handle);
  c->reading = want;
}

static void tcp_pause(ld_tconn_t *base, bool paused) {
  tcp_conn_t *c = (tcp_conn_t *)base;
  c->paused = paused;
  update_reading(c);
}

static void tcp_start(ld_tconn_t *base, const ld_tconn_events_t *ev, void *user_data) {
  tcp_conn_t *c = (tcp_conn_t *)base;
  c->ev = ev;
  c->user_data = user_data;
  update_reading(c);
}

/* ---- writing ---------------------------------------------------------------------------- */

static void write_done(uv_write_t *req, int status) {
  tcp_write_t *w = (tcp_write_t *)req;
  tcp_conn_t *c = req->data;
  c->queued -= w->len;
  free(w->data);
  free(w);
  if (c->closed)
    return;
  if (status < 0) {
    report_error(c, ld_tcp_map_uv_error(status));
    return;
  }
  if (c->backlogged && c->queued < LD_TCONN_LOW_WATER) {
    c->backlogged = false;
    c->read_stop = false;
    update_reading(c);
    if (c->ev->on_drain != NULL)
      c->ev->on_drain(&c->base, c->user_data);
  }
}

/* Writes what the kernel takes at once when libuv has nothing queued for the socket: no write
 * request, no completion callback and no re-arming of the poll watcher. UV_EAGAIN (libuv's queue
 * busy, socket full) and socket errors give 0: uv_write then queues or reports as before. */
static size_t write_now(tcp_conn_t *c, const ld_buf_t *data) {
  uv_buf_t b = uv_buf_init((char *)data->data, (unsigned)data->len);
  int n = uv_try_write((uv_stream_t *)&c->handle, &b, 1);
  return n > 0 ? (size_t)n : 0;
}

static int queue_write(tcp_conn_t *c, ld_buf_t *data, size_t off) {
  tcp_write_t *w = malloc(sizeof *w);
  if (w == NULL)
    return LD_ERR_NOMEM;
  w->data = data->data;
  w->len = data->len - off;
  w->req.data = c;
  uv_buf_t b = uv_buf_init((char *)w->data + off, (unsigned)w->len);
  int rc = uv_write(&w->req, (uv_stream_t *)&c->handle, &b, 1, write_done);
  if (rc != 0) {
    free(w);
    return ld_tcp_map_uv_error(rc);
  }
  ld_buf_init(data);
  c->queued += w->len;
  if (c->queued > LD_TCONN_HIGH_WATER)
    c->backlogged = true;
  if (c->queued > LD_TCONN_READ_STOP && !c->read_stop) {
    c->read_stop = true;
    update_reading(c);
  }
  return 0;
}

static int tcp_write(ld_tconn_t *base, ld_buf_t *data) {
  tcp_conn_t *c = (tcp_conn_t *)base;
  if (c->closed || c->failed || !c->connected)
    return LD_ERR_CLOSED;
  if (data->len == 0)
    return 0;
  size_t n = write_now(c, data);
  if (n == data->len) {
    ld_buf_reset(data);
    return 0;
  }
  return queue_write(c, data, n);
}

static size_t tcp_queued(const ld_tconn_t *base) {
  const tcp_conn_t *c = (const tcp_conn_t *)base;
  return c->queued;
}

static const ld_tconn_ops_t tcp_conn_ops = {
    .start = tcp_start,
    .write = tcp_write,
    .queued = tcp_queued,
    .pause = tcp_pause,
    .close = tcp_close,
};

static void set_options(tcp_conn_t *c) {
  uv_tcp_nodelay(&c->handle, 1);
}

/* ---- dialing ---------------------------------------------------------------------------- */

static void connect_done(uv_connect_t *req, int status) {
  tcp_conn_t *c = req->data;
  if (c->closed)
    return;
  const ld_tconn_events_t *ev = c->ev;
  if (status < 0) {
    c->closed = true;
    close_handles(c);
    ev->on_connect(&c->base, ld_tcp_map_uv_error(status), c->user_data);
    return;
  }
  c->connected = true;
  set_options(c);
  fill_addrs(c);
  ev->on_connect(&c->base, 0, c->user_data);
  update_reading(c);
}

static int tcp_dial(ld_transport_t *base, const ld_multiaddr_t *addr, const ld_tconn_events_t *ev,
                    void *user_data, ld_tconn_t **out) {
  struct sockaddr_storage ss;
  if (!tcp_handles(addr) || ld_multiaddr_to_sockaddr(addr, &ss) != 0)
    return LD_ERR_UNSUPPORTED;
  tcp_conn_t *c = conn_new((tcp_transport_t *)base, true);
  if (c == NULL)
    return LD_ERR_NOMEM;
  c->ev = ev;
  c->user_data = user_data;
  c->connect_req.data = c;
  c->base.remote = *addr;
  ld_multiaddr_peerid(&c->base.remote, NULL, true);
  int rc = uv_tcp_connect(&c->connect_req, &c->handle, (struct sockaddr *)&ss, connect_done);
  if (rc != 0) {
    c->closed = true;
    close_handles(c);
    return ld_tcp_map_uv_error(rc);
  }
  *out = &c->base;
  return 0;
}

/* ---- listening -------------------------------------------------------------------------- */

static void on_connection(uv_stream_t *server, int status) {
  tcp_listener_t *l = server->data;
  if (status < 0) {
    LD_WARN(TOPIC, "accept failed: %s", uv_strerror(status));
    return;
  }
  tcp_conn_t *c = conn_new((tcp_transport_t *)l->base.transport, false);
  if (c == NULL)
    return;
  if (uv_accept(server, (uv_stream_t *)&c->handle) != 0) {
    c->closed = true;
    close_handles(c);
    return;
  }
  c->connected = true;
  set_options(c);
  fill_addrs(c);
  l->accept(&l->base, &c->base, l->user_data);
}

static void listener_closed(uv_handle_t *h) {
  free(h->data);
}

static int bind_and_listen(tcp_listener_t *l, const struct sockaddr_storage *ss) {
  int rc = uv_tcp_bind(&l->handle, (const struct sockaddr *)ss, 0);
  if (rc == 0)
    rc = uv_listen((uv_stream_t *)&l->handle, LD_TCP_BACKLOG, on_connection);
  if (rc != 0)
    return ld_tcp_map_uv_error(rc);
  struct sockaddr_storage bound;
  int len = sizeof bound;
  rc = uv_tcp_getsockname(&l->handle, (struct sockaddr *)&bound, &len);
  if (rc != 0)
    return ld_tcp_map_uv_error(rc);
  return ld_multiaddr_from_sockaddr(&l->base.addr, &bound);
}

static int tcp_listen(ld_transport_t *base, const ld_multiaddr_t *addr,
                      ld_tlistener_accept_fn accept, void *user_data, ld_tlistener_t **out) {
  struct sockaddr_storage ss;
  if (!tcp_handles(addr) || ld_multiaddr_to_sockaddr(addr, &ss) != 0)
    return LD_ERR_UNSUPPORTED;
  tcp_listener_t *l = calloc(1, sizeof *l);
  if (l == NULL)
    return LD_ERR_NOMEM;
  if (uv_tcp_init(base->loop, &l->handle) != 0) {
    free(l);
    return LD_ERR_IO;
  }
  l->handle.data = l;
  l->base.transport = base;
  l->accept = accept;
  l->user_data = user_data;
  int rc = bind_and_listen(l, &ss);
  if (rc != 0) {
    uv_close((uv_handle_t *)&l->handle, listener_closed);
    return rc;
  }
  *out = &l->base;
  return 0;
}

static void tcp_listener_close(ld_tlistener_t *base) {
  tcp_listener_t *l = (tcp_listener_t *)base;
  if (!uv_is_closing((uv_handle_t *)&l->handle))
    uv_close((uv_handle_t *)&l->handle, listener_closed);
}

static void tcp_destroy(ld_transport_t *base) {
  tcp_transport_t *t = (tcp_transport_t *)base;
  free(t->rbuf);
  free(t);
}

static const ld_transport_ops_t tcp_transport_ops = {
    .name = "tcp",
    .handles = tcp_handles,
    .listen = tcp_listen,
    .listener_close = tcp_listener_close,
    .dial = tcp_dial,
    .destroy = tcp_destroy,
};

ld_transport_t *ld_transport_tcp_new(uv_loop_t *loop) {
  tcp_transport_t *t = calloc(1, sizeof *t);
  if (t == NULL)
    return NULL;
  t->base.ops = &tcp_transport_ops;
  t->base.loop = loop;
  return &t->base;
}
