#include "waku/discovery/discv5_uv.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"

/* Room for one datagram and then some: a larger one arrives cut (UV_UDP_PARTIAL) at this size,
 * which the engine refuses as too large. */
#define READ_BUF (LD_DISCV5_MAX_PACKET + 256)

struct ld_discv5_uv {
  uv_loop_t *loop;
  uv_udp_t udp;
  uv_timer_t timer;
  int open_handles;
  bool started, closing;
  uint16_t port;
  ld_discv5_t *engine;
  ld_waku_discv5_t *search;
  ld_discv5_uv_callbacks_t cb;
  void *ud;
  size_t queued;
  uint64_t drops;
  uint8_t rbuf[READ_BUF];
};

typedef struct send_req {
  uv_udp_send_t req;
  ld_discv5_uv_t *u;
  size_t len;
  uint8_t data[];
} send_req_t;

/* ---- addresses ------------------------------------------------------------------------------ */

static void to_sockaddr(const ld_discv5_addr_t *a, struct sockaddr_storage *ss) {
  memset(ss, 0, sizeof *ss);
  if (a->ip_len == 4) {
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    in->sin_family = AF_INET;
    in->sin_port = htons(a->port);
    memcpy(&in->sin_addr, a->ip, 4);
  } else {
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(a->port);
    memcpy(&in6->sin6_addr, a->ip, 16);
  }
}

/* IPv4-mapped IPv6 senders (a dual-stack socket) become plain IPv4. */
static bool from_sockaddr(const struct sockaddr *sa, ld_discv5_addr_t *a) {
  static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  memset(a, 0, sizeof *a);
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    a->ip_len = 4;
    memcpy(a->ip, &in->sin_addr, 4);
    a->port = ntohs(in->sin_port);
    return true;
  }
  if (sa->sa_family == AF_INET6) {
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
    const uint8_t *ip = (const uint8_t *)&in6->sin6_addr;
    a->port = ntohs(in6->sin6_port);
    if (memcmp(ip, mapped, sizeof mapped) == 0) {
      a->ip_len = 4;
      memcpy(a->ip, ip + 12, 4);
    } else {
      a->ip_len = 16;
      memcpy(a->ip, ip, 16);
    }
    return true;
  }
  return false;
}

/* ---- timer ---------------------------------------------------------------------------------- */

static void on_timer(uv_timer_t *t);

static void rearm(ld_discv5_uv_t *u) {
  if (!u->started || u->closing)
    return;
  uint64_t deadline = ld_discv5_next_deadline(u->engine);
  if (u->search != NULL) {
    uint64_t s = ld_waku_discv5_next_deadline(u->search);
    if (s < deadline)
      deadline = s;
  }
  if (deadline == UINT64_MAX) {
    uv_timer_stop(&u->timer);
    return;
  }
  uint64_t now = uv_now(u->loop);
  uv_timer_start(&u->timer, on_timer, deadline > now ? deadline - now : 0, 0);
}

void ld_discv5_uv_update(ld_discv5_uv_t *u) {
  rearm(u);
}

static void on_timer(uv_timer_t *t) {
  ld_discv5_uv_t *u = t->data;
  uint64_t now = uv_now(u->loop);
  ld_discv5_handle_timeout(u->engine, now);
  if (u->search != NULL && !u->closing)
    ld_waku_discv5_handle_timeout(u->search, now);
  rearm(u);
}

/* ---- sending -------------------------------------------------------------------------------- */

static void on_sent(uv_udp_send_t *req, int status) {
  send_req_t *s = (send_req_t *)req;
  (void)status;
  s->u->queued--;
  free(s);
}

static void adapter_send(void *ud, const ld_discv5_addr_t *to, const uint8_t *data, size_t len) {
  ld_discv5_uv_t *u = ud;
  struct sockaddr_storage ss;
  to_sockaddr(to, &ss);
  uv_buf_t buf = uv_buf_init((char *)data, (unsigned)len);
  int rc = uv_udp_try_send(&u->udp, &buf, 1, (const struct sockaddr *)&ss);
  if (rc == (int)len)
    return;
  if (rc != UV_EAGAIN || u->queued >= LD_DISCV5_UV_MAX_QUEUED) {
    u->drops++;
    return;
  }
  send_req_t *s = malloc(sizeof *s + len);
  if (s == NULL) {
    u->drops++;
    return;
  }
  s->u = u;
  s->len = len;
  memcpy(s->data, data, len);
  buf = uv_buf_init((char *)s->data, (unsigned)len);
  if (uv_udp_send(&s->req, &u->udp, &buf, 1, (const struct sockaddr *)&ss, on_sent) != 0) {
    free(s);
    u->drops++;
    return;
  }
  u->queued++;
}

/* ---- events --------------------------------------------------------------------------------- */

static void adapter_peer(void *ud, const ld_enr_t *enr) {
  ld_discv5_uv_t *u = ud;
  if (u->cb.peer != NULL)
    u->cb.peer(u->ud, enr);
}

static void adapter_event(void *ud, ld_discv5_event_t *ev) {
  ld_discv5_uv_t *u = ud;
  if (u->search != NULL)
    ld_waku_discv5_on_event(u->search, ev, uv_now(u->loop));
  if (u->cb.event != NULL)
    u->cb.event(u->ud, ev);
}

/* ---- receiving ------------------------------------------------------------------------------ */

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  ld_discv5_uv_t *u = h->data;
  (void)suggested;
  *buf = uv_buf_init((char *)u->rbuf, sizeof u->rbuf);
}

static void on_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *addr,
                    unsigned flags) {
  ld_discv5_uv_t *u = h->data;
  ld_discv5_addr_t from;
  (void)flags;
  if (nread < 0) {
    LD_DEBUG("discv5", "UDP read error: %s", uv_strerror((int)nread));
    return;
  }
  if (nread == 0 || addr == NULL || u->closing || !from_sockaddr(addr, &from))
    return;
  ld_discv5_receive(u->engine, &from, (const uint8_t *)buf->base, (size_t)nread, uv_now(u->loop));
  rearm(u);
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

int ld_discv5_uv_open(uv_loop_t *loop, const char *ip, uint16_t port, ld_discv5_uv_t **out) {
  struct sockaddr_storage ss;
  if (ip == NULL)
    ip = "0.0.0.0";
  if (uv_ip4_addr(ip, port, (struct sockaddr_in *)&ss) != 0 &&
      uv_ip6_addr(ip, port, (struct sockaddr_in6 *)&ss) != 0)
    return LD_ERR_INVALID_ARG;
  ld_discv5_uv_t *u = calloc(1, sizeof *u);
  if (u == NULL)
    return LD_ERR_NOMEM;
  u->loop = loop;
  if (uv_udp_init(loop, &u->udp) != 0) {
    free(u);
    return LD_ERR_IO;
  }
  u->udp.data = u;
  uv_timer_init(loop, &u->timer);
  u->timer.data = u;
  u->open_handles = 2;
  int rc = uv_udp_bind(&u->udp, (const struct sockaddr *)&ss, 0);
  if (rc == 0) {
    struct sockaddr_storage bound;
    int len = sizeof bound;
    ld_discv5_addr_t a;
    rc = uv_udp_getsockname(&u->udp, (struct sockaddr *)&bound, &len);
    if (rc == 0 && from_sockaddr((const struct sockaddr *)&bound, &a))
      u->port = a.port;
  }
  if (rc != 0) {
    ld_discv5_uv_close(u);
    return rc == UV_EADDRINUSE ? LD_ERR_ADDR_IN_USE : LD_ERR_IO;
  }
  *out = u;
  return 0;
}

uint16_t ld_discv5_uv_port(const ld_discv5_uv_t *u) {
  return u->port;
}

int ld_discv5_uv_start(ld_discv5_uv_t *u, const ld_discv5_config_t *cfg,
                       const ld_waku_discv5_config_t *search, const ld_discv5_uv_callbacks_t *cb,
                       void *ud) {
  if (u->started || u->closing)
    return LD_ERR_STATE;
  ld_discv5_callbacks_t engine_cb = {adapter_send, adapter_event};
  uint64_t now = uv_now(u->loop);
  if (cb != NULL)
    u->cb = *cb;
  u->ud = ud;
  u->engine = ld_discv5_new(cfg, &engine_cb, u, now);
  if (u->engine == NULL)
    return LD_ERR_INVALID_ARG;
  if (search != NULL &&
      (u->search = ld_waku_discv5_new(u->engine, search, adapter_peer, u, now)) == NULL) {
    ld_discv5_free(u->engine);
    u->engine = NULL;
    return LD_ERR_NOMEM;
  }
  if (uv_udp_recv_start(&u->udp, on_alloc, on_recv) != 0) {
    ld_waku_discv5_free(u->search);
    ld_discv5_free(u->engine);
    u->search = NULL;
    u->engine = NULL;
    return LD_ERR_IO;
  }
  u->started = true;
  rearm(u);
  return 0;
}

ld_discv5_t *ld_discv5_uv_engine(ld_discv5_uv_t *u) {
  return u->engine;
}

ld_waku_discv5_t *ld_discv5_uv_search(ld_discv5_uv_t *u) {
  return u->search;
}

uint64_t ld_discv5_uv_send_drops(const ld_discv5_uv_t *u) {
  return u->drops;
}

static void on_closed(uv_handle_t *h) {
  ld_discv5_uv_t *u = h->data;
  if (--u->open_handles == 0)
    free(u);
}

void ld_discv5_uv_close(ld_discv5_uv_t *u) {
  if (u == NULL || u->closing)
    return;
  u->closing = true;
  uv_udp_recv_stop(&u->udp);
  uv_timer_stop(&u->timer);
  ld_waku_discv5_free(u->search);
  ld_discv5_free(u->engine);
  u->search = NULL;
  u->engine = NULL;
  uv_close((uv_handle_t *)&u->udp, on_closed);
  uv_close((uv_handle_t *)&u->timer, on_closed);
}
