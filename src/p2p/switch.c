#include "p2p/switch.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/conn_internal.h"
#include "p2p/transport_tcp.h"

#define TOPIC "switch"

#define YAMUX_ID "/yamux/1.0.0"
#define MPLEX_ID "/mplex/6.7.0"

const char *const ld_switch_listen_muxers[2] = {YAMUX_ID, MPLEX_ID};

void ld_switch_config_default(ld_switch_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->max_connections = 50;
  cfg->max_streams_per_conn = 1024;
  cfg->dial_timeout_ms = 10000;
  cfg->handshake_timeout_ms = 10000;
  cfg->negotiation_timeout_ms = 10000;
  cfg->muxers[0] = YAMUX_ID;
  cfg->muxers[1] = MPLEX_ID;
}

/* ---- transports ------------------------------------------------------------------------- */

/* The switch's transports behind one dispatching transport, kept where the connections look for
 * their transport (sw->tcp): dial and listen go to the first member whose handles() accepts the
 * address; listeners and connections belong to that member. */
typedef struct transport_set {
  ld_transport_t base;
  ld_transport_t *members[LD_SWITCH_MAX_TRANSPORTS];
  size_t n;
} transport_set_t;

static ld_transport_t *pick_transport(const ld_transport_t *set, const ld_multiaddr_t *addr) {
  const transport_set_t *ts = (const transport_set_t *)set;
  for (size_t i = 0; i < ts->n; i++)
    if (ts->members[i]->ops->handles(addr))
      return ts->members[i];
  return NULL;
}

/* Not used: the set has no address of its own to answer for (pick_transport does). */
static bool set_handles(const ld_multiaddr_t *addr) {
  (void)addr;
  return false;
}

static int set_listen(ld_transport_t *set, const ld_multiaddr_t *addr,
                      ld_tlistener_accept_fn accept, void *user_data, ld_tlistener_t **out) {
  ld_transport_t *t = pick_transport(set, addr);
  return t != NULL ? t->ops->listen(t, addr, accept, user_data, out) : LD_ERR_UNSUPPORTED;
}

static void set_listener_close(ld_tlistener_t *l) {
  l->transport->ops->listener_close(l);
}

static int set_dial(ld_transport_t *set, const ld_multiaddr_t *addr, const ld_tconn_events_t *ev,
                    void *user_data, ld_tconn_t **out) {
  ld_transport_t *t = pick_transport(set, addr);
  return t != NULL ? t->ops->dial(t, addr, ev, user_data, out) : LD_ERR_UNSUPPORTED;
}

static void set_destroy(ld_transport_t *set) {
  transport_set_t *ts = (transport_set_t *)set;
  for (size_t i = 0; i < ts->n; i++)
    ts->members[i]->ops->destroy(ts->members[i]);
  free(ts);
}

static const ld_transport_ops_t transport_set_ops = {
    .name = "switch",
    .handles = set_handles,
    .listen = set_listen,
    .listener_close = set_listener_close,
    .dial = set_dial,
    .destroy = set_destroy,
};

static ld_transport_t *transport_set_new(uv_loop_t *loop) {
  transport_set_t *ts = calloc(1, sizeof *ts);
  if (ts == NULL)
    return NULL;
  ts->base.ops = &transport_set_ops;
  ts->base.loop = loop;
  if ((ts->members[0] = ld_transport_tcp_new(loop)) == NULL) {
    free(ts);
    return NULL;
  }
  ts->n = 1;
  return &ts->base;
}

int ld_switch_add_transport(ld_switch_t *sw, ld_transport_t *t) {
  transport_set_t *ts = (transport_set_t *)sw->tcp;
  if (t == NULL || t->loop != sw->loop)
    return LD_ERR_INVALID_ARG;
  if (sw->closing)
    return LD_ERR_CLOSED;
  for (size_t i = 0; i < ts->n; i++)
    if (ts->members[i] == t)
      return LD_ERR_EXISTS;
  if (ts->n == LD_SWITCH_MAX_TRANSPORTS)
    return LD_ERR_LIMIT;
  ts->members[ts->n++] = t;
  return 0;
}

/* ---- creation ---------------------------------------------------------------------------- */

static const char *known_muxer(const char *id) {
  for (size_t i = 0; i < 2; i++)
    if (id != NULL && strcmp(id, ld_switch_listen_muxers[i]) == 0)
      return ld_switch_listen_muxers[i];
  return NULL;
}

static bool set_muxers(ld_switch_t *sw, const ld_switch_config_t *cfg) {
  for (size_t i = 0; i < 2; i++) {
    if (cfg->muxers[i] == NULL)
      continue;
    const char *id = known_muxer(cfg->muxers[i]);
    if (id == NULL || (sw->n_dial_muxers == 1 && sw->dial_muxers[0] == id))
      return false;
    sw->dial_muxers[sw->n_dial_muxers++] = id;
  }
  return sw->n_dial_muxers > 0;
}

static void apply_defaults(ld_switch_config_t *c) {
  ld_switch_config_t d;
  ld_switch_config_default(&d);
  if (c->max_connections == 0)
    c->max_connections = d.max_connections;
  if (c->max_streams_per_conn == 0)
    c->max_streams_per_conn = d.max_streams_per_conn;
  if (c->dial_timeout_ms == 0)
    c->dial_timeout_ms = d.dial_timeout_ms;
  if (c->handshake_timeout_ms == 0)
    c->handshake_timeout_ms = d.handshake_timeout_ms;
  if (c->negotiation_timeout_ms == 0)
    c->negotiation_timeout_ms = d.negotiation_timeout_ms;
}

static int set_identity(ld_switch_t *sw, const ld_privkey_t *key) {
  ld_pubkey_t pub;
  sw->identity = *key;
  ld_privkey_public(key, &pub);
  return ld_peerid_from_pubkey(&sw->peer_id, &pub);
}

static void on_idle(uv_idle_t *h);

/* A write to a socket the peer has closed raises SIGPIPE, whose default action ends the process;
 * the switch handles the EPIPE error instead. Only the default disposition is replaced, so an
 * application's own handler stays. */
static void ignore_default_sigpipe(void) {
  struct sigaction current;
  if (sigaction(SIGPIPE, NULL, &current) == 0 && current.sa_handler == SIG_DFL)
    signal(SIGPIPE, SIG_IGN);
}

ld_switch_t *ld_switch_new(const ld_switch_config_t *cfg) {
  if (cfg == NULL || cfg->loop == NULL || cfg->identity == NULL)
    return NULL;
  ignore_default_sigpipe();
  ld_switch_t *sw = calloc(1, sizeof *sw);
  if (sw == NULL)
    return NULL;
  sw->cfg = *cfg;
  apply_defaults(&sw->cfg);
  sw->loop = cfg->loop;
  ld_muxer_config_default(&sw->mcfg);
  sw->mcfg.max_streams = 2 * sw->cfg.max_streams_per_conn;
  ld_list_init(&sw->conns);
  ld_list_init(&sw->pending);
  if (!set_muxers(sw, cfg) || set_identity(sw, cfg->identity) != 0 ||
      (sw->tcp = transport_set_new(sw->loop)) == NULL) {
    free(sw);
    return NULL;
  }
  uv_idle_init(sw->loop, &sw->idle);
  sw->idle.data = sw;
  return sw;
}

const ld_peerid_t *ld_switch_peer_id(const ld_switch_t *sw) {
  return &sw->peer_id;
}

const ld_privkey_t *ld_switch_identity(const ld_switch_t *sw) {
  return &sw->identity;
}

uv_loop_t *ld_switch_loop(const ld_switch_t *sw) {
  return sw->loop;
}

/* ---- deferred work ----------------------------------------------------------------------- */

void ld_switch_schedule(ld_conn_t *c, unsigned flags) {
  ld_switch_t *sw = c->sw;
  if (c->state == CONN_CLOSED)
    return;
  if (!ld_link_linked(&c->pendq))
    ld_list_push(&sw->pending, &c->pendq);
  c->pend |= flags;
  if (!sw->idle_on) {
    sw->idle_on = true;
    uv_idle_start(&sw->idle, on_idle);
  }
}

static void switch_freed(uv_handle_t *h) {
  ld_switch_t *sw = h->data;
  for (size_t i = 0; i < sw->n_protos; i++)
    free(sw->protos[i].id);
  free(sw->protos);
  ld_buf_clear(&sw->rx);
  ld_buf_clear(&sw->tx);
  ld_buf_clear(&sw->mss_out);
  free(sw);
}

static void finish_close(ld_switch_t *sw) {
  sw->finished = true;
  uv_idle_stop(&sw->idle);
  sw->idle_on = false;
  sw->tcp->ops->destroy(sw->tcp);
  sw->tcp = NULL;
  if (sw->done != NULL)
    sw->done(sw->done_data);
  uv_close((uv_handle_t *)&sw->idle, switch_freed);
}

static void list_move_all(ld_link_t *to, ld_link_t *from) {
  ld_list_init(to);
  if (ld_list_empty(from))
    return;
  to->next = from->next;
  to->prev = from->prev;
  to->next->prev = to;
  to->prev->next = to;
  ld_list_init(from);
}

static void on_idle(uv_idle_t *h) {
  ld_switch_t *sw = h->data;
  ld_link_t batch;
  list_move_all(&batch, &sw->pending);
  while (!ld_list_empty(&batch)) {
    ld_conn_t *c = LD_CONTAINER_OF(batch.next, ld_conn_t, pendq);
    ld_link_remove(&c->pendq);
    unsigned flags = c->pend;
    c->pend = 0;
    ld_conn_process(c, flags);
  }
  if (ld_list_empty(&sw->pending)) {
    uv_idle_stop(&sw->idle);
    sw->idle_on = false;
  }
  if (sw->closing && !sw->finished && sw->n_conns == 0)
    finish_close(sw);
}

void ld_switch_forget_conn(ld_switch_t *sw, ld_conn_t *c) {
  ld_link_remove(&c->pendq);
  c->pend = 0;
  if (ld_link_linked(&c->link)) {
    ld_link_remove(&c->link);
    sw->n_conns--;
  }
}

/* ---- closing ----------------------------------------------------------------------------- */

void ld_switch_close(ld_switch_t *sw, void (*done)(void *user_data), void *user_data) {
  if (sw->closing)
    return;
  sw->closing = true;
  sw->done = done;
  sw->done_data = user_data;
  for (size_t i = 0; i < sw->n_listeners; i++)
    set_listener_close(sw->listeners[i]);
  sw->n_listeners = 0;
  for (ld_link_t *l = sw->conns.next; l != &sw->conns; l = l->next) {
    ld_conn_t *c = LD_CONTAINER_OF(l, ld_conn_t, link);
    if (c->state < CONN_CLOSING) {
      c->stream_closed = true;
      ld_conn_fail(c, 0, true);
    }
  }
  if (!sw->idle_on) {
    sw->idle_on = true;
    uv_idle_start(&sw->idle, on_idle);
  }
}

/* ---- listening --------------------------------------------------------------------------- */

static void on_accept(ld_tlistener_t *l, ld_tconn_t *t, void *ud) {
  (void)l;
  ld_switch_t *sw = ud;
  if (sw->closing) {
    ld_tconn_close(t, false);
    return;
  }
  if (sw->n_conns >= sw->cfg.max_connections) {
    char addr[LD_MULTIADDR_TEXT_MAX];
    if (ld_multiaddr_to_text(&t->remote, addr, sizeof addr) < 0)
      strcpy(addr, "?");
    LD_INFO(TOPIC, "refusing inbound connection: addr=%s reason=%s", addr,
            ld_errname(LD_ERR_TOO_MANY_CONNECTIONS));
    ld_tconn_close(t, false);
    return;
  }
  ld_conn_t *c = ld_conn_new(sw, false);
  if (c == NULL) {
    ld_tconn_close(t, false);
    return;
  }
  int rc = ld_conn_accept(c, t);
  if (rc != 0)
    LD_WARN(TOPIC, "cannot start inbound upgrade: %s", ld_errname(rc));
}

int ld_switch_listen(ld_switch_t *sw, const ld_multiaddr_t *addr) {
  if (sw->closing)
    return LD_ERR_CLOSED;
  if (sw->n_listeners == LD_SWITCH_MAX_LISTENERS)
    return LD_ERR_LIMIT;
  ld_multiaddr_t a = *addr;
  ld_multiaddr_peerid(&a, NULL, true);
  ld_tlistener_t *l;
  int rc = set_listen(sw->tcp, &a, on_accept, sw, &l);
  if (rc != 0)
    return rc;
  sw->listeners[sw->n_listeners++] = l;
  char text[LD_MULTIADDR_TEXT_MAX];
  if (ld_multiaddr_to_text(&l->addr, text, sizeof text) >= 0)
    LD_INFO(TOPIC, "listening on %s", text);
  return 0;
}

size_t ld_switch_listen_addrs(const ld_switch_t *sw, ld_multiaddr_t *out, size_t max) {
  for (size_t i = 0; i < sw->n_listeners && i < max; i++)
    out[i] = sw->listeners[i]->addr;
  return sw->n_listeners;
}

/* ---- protocols --------------------------------------------------------------------------- */

static ld_switch_proto_t *find_proto(const ld_switch_t *sw, const char *p, size_t len) {
  for (size_t i = 0; i < sw->n_protos; i++)
    if (sw->protos[i].len == len && memcmp(sw->protos[i].id, p, len) == 0)
      return &sw->protos[i];
  return NULL;
}

const ld_switch_proto_t *ld_switch_find_protocol(const ld_switch_t *sw, const char *id) {
  return find_proto(sw, id, strlen(id));
}

const char *ld_switch_select_protocol(void *ud, const char *p, size_t len) {
  ld_switch_proto_t *proto = find_proto(ud, p, len);
  return proto != NULL ? proto->id : NULL;
}

size_t ld_switch_list_protocols(void *ud, const char **out, size_t max) {
  return ld_switch_protocols(ud, out, max);
}

int ld_switch_handle(ld_switch_t *sw, const char *protocol, ld_protocol_accept_fn accept,
                     void *user_data) {
  size_t len = protocol != NULL ? strlen(protocol) : 0;
  if (len == 0 || len > LD_SWITCH_PROTOCOL_MAX_LEN || accept == NULL)
    return LD_ERR_INVALID_ARG;
  if (find_proto(sw, protocol, len) != NULL)
    return LD_ERR_EXISTS;
  if (sw->n_protos == LD_SWITCH_MAX_PROTOCOLS)
    return LD_ERR_LIMIT;
  ld_switch_proto_t *arr = realloc(sw->protos, (sw->n_protos + 1) * sizeof *arr);
  if (arr == NULL)
    return LD_ERR_NOMEM;
  sw->protos = arr;
  char *id = strdup(protocol);
  if (id == NULL)
    return LD_ERR_NOMEM;
  arr[sw->n_protos++] = (ld_switch_proto_t){id, len, accept, user_data};
  return 0;
}

size_t ld_switch_protocols(const ld_switch_t *sw, const char **out, size_t max) {
  for (size_t i = 0; i < sw->n_protos && i < max; i++)
    out[i] = sw->protos[i].id;
  return sw->n_protos;
}

/* ---- connection events ------------------------------------------------------------------- */

int ld_switch_add_listener(ld_switch_t *sw, const ld_switch_events_t *ev, void *user_data) {
  if (ev == NULL)
    return LD_ERR_INVALID_ARG;
  if (sw->n_evl == LD_SWITCH_MAX_EVENT_LISTENERS)
    return LD_ERR_LIMIT;
  sw->evl[sw->n_evl++] = (ld_switch_listener_t){ev, user_data};
  return 0;
}

void ld_switch_notify_connected(ld_switch_t *sw, ld_conn_t *c) {
  for (size_t i = 0; i < sw->n_evl; i++)
    if (sw->evl[i].ev->on_connected != NULL)
      sw->evl[i].ev->on_connected(c, sw->evl[i].user_data);
}

void ld_switch_notify_disconnected(ld_switch_t *sw, ld_conn_t *c) {
  for (size_t i = 0; i < sw->n_evl; i++)
    if (sw->evl[i].ev->on_disconnected != NULL)
      sw->evl[i].ev->on_disconnected(c, c->reason, sw->evl[i].user_data);
}

/* ---- dialing ----------------------------------------------------------------------------- */

/* An open connection to `peer`, or a dial to it still upgrading. */
static ld_conn_t *find_conn(ld_switch_t *sw, const ld_peerid_t *peer) {
  for (ld_link_t *l = sw->conns.next; l != &sw->conns; l = l->next) {
    ld_conn_t *c = LD_CONTAINER_OF(l, ld_conn_t, link);
    if (c->state == CONN_OPEN && ld_peerid_equal(&c->peer, peer))
      return c;
    if (c->state < CONN_OPEN && c->outbound && c->has_expected &&
        ld_peerid_equal(&c->expected, peer))
      return c;
  }
  return NULL;
}

/* TCP dials IP addresses only; a transport such as WebSocket may resolve /dns* names itself. */
static int check_dial_addr(const ld_switch_t *sw, const ld_multiaddr_t *a) {
  if (a->len == 0)
    return LD_ERR_BAD_MULTIADDR;
  return pick_transport(sw->tcp, a) != NULL ? 0 : LD_ERR_UNSUPPORTED;
}

int ld_switch_dial(ld_switch_t *sw, const ld_multiaddr_t *addr, ld_dial_cb cb, void *user_data) {
  if (sw->closing)
    return LD_ERR_CLOSED;
  if (cb == NULL)
    return LD_ERR_INVALID_ARG;
  ld_multiaddr_t a = *addr;
  ld_peerid_t peer;
  bool has_peer = ld_multiaddr_peerid(&a, &peer, true);
  int rc = check_dial_addr(sw, &a);
  if (rc != 0)
    return rc;
  if (has_peer && ld_peerid_equal(&peer, &sw->peer_id))
    return LD_ERR_INVALID_ARG;
  ld_conn_t *c = has_peer ? find_conn(sw, &peer) : NULL;
  if (c != NULL)
    return ld_conn_add_waiter(c, cb, user_data);
  if (sw->n_conns >= sw->cfg.max_connections)
    return LD_ERR_TOO_MANY_CONNECTIONS;
  c = ld_conn_new(sw, true);
  if (c == NULL)
    return LD_ERR_NOMEM;
  rc = ld_conn_add_waiter(c, cb, user_data);
  if (rc != 0) {
    ld_conn_discard(c);
    return rc;
  }
  return ld_conn_dial(c, &a, has_peer ? &peer : NULL);
}

size_t ld_switch_connections(const ld_switch_t *sw, ld_conn_t **out, size_t max) {
  size_t n = 0;
  for (const ld_link_t *l = sw->conns.next; l != &sw->conns; l = l->next) {
    ld_conn_t *c = LD_CONTAINER_OF(l, ld_conn_t, link);
    if (c->state != CONN_OPEN)
      continue;
    if (n < max)
      out[n] = c;
    n++;
  }
  return n;
}

int ld_switch_open_stream(ld_switch_t *sw, ld_conn_t *c, const char *const *protocols,
                          size_t n_protocols, ld_open_stream_cb cb, void *user_data) {
  if (sw->closing || c->sw != sw)
    return sw->closing ? LD_ERR_CLOSED : LD_ERR_INVALID_ARG;
  return ld_conn_open_stream(c, protocols, n_protocols, cb, user_data);
}
