/* The static-peer engine (static_peers.h) on the node's loop: its dials go through the switch,
 * its deadlines through one libuv timer, its connection news come from the switch's events. */
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "node/events.h"
#include "node/node_internal.h"

#define TOPIC "node"

static void schedule(ld_node_t *node);

static void publish_state(ld_node_t *node, size_t index, bool connected, int err) {
  ld_multiaddr_t addr = node->cfg.static_nodes[index];
  ld_event_static_peer_t ev = {&addr, connected, err, ld_static_peers_due(node->statics, index)};
  ld_broker_publish(node->broker, LD_EVENT_STATIC_PEER, &ev);
}

static void on_static_dialed(ld_conn_t *c, int err, void *user_data) {
  (void)c;
  node_static_dial_t *d = user_data;
  ld_node_t *node = d->node;
  if (node->state == NODE_STOPPING || node->statics == NULL)
    return;
  ld_static_peers_dial_done(node->statics, d->index, err, uv_now(node->loop));
  if (err != 0 && ld_static_peers_state(node->statics, d->index) == LD_STATIC_PEER_IDLE) {
    char text[LD_MULTIADDR_TEXT_MAX];
    ld_multiaddr_to_text(&node->cfg.static_nodes[d->index], text, sizeof text);
    uint64_t due = ld_static_peers_due(node->statics, d->index);
    LD_WARN(TOPIC, "static peer %s: dial failed: %s; next attempt in %llu ms", text,
            ld_errname(err), (unsigned long long)(due - uv_now(node->loop)));
    publish_state(node, d->index, false, err);
  }
  schedule(node);
}

static int dial_static(void *user_data, size_t index, const ld_multiaddr_t *addr) {
  ld_node_t *node = user_data;
  node->static_dials[index] = (node_static_dial_t){node, index};
  int rc = ld_switch_dial(node->sw, addr, on_static_dialed, &node->static_dials[index]);
  if (rc != 0) {
    char text[LD_MULTIADDR_TEXT_MAX];
    ld_multiaddr_to_text(addr, text, sizeof text);
    LD_WARN(TOPIC, "static peer %s: cannot dial: %s", text, ld_errname(rc));
  }
  return rc;
}

static void on_static_timer(uv_timer_t *t) {
  ld_node_t *node = t->data;
  if (node->state == NODE_STOPPING)
    return;
  ld_static_peers_tick(node->statics, uv_now(node->loop));
  schedule(node);
}

/* Arms the timer for the engine's next deadline (or stops it when none). */
static void schedule(ld_node_t *node) {
  uint64_t next = ld_static_peers_next_deadline(node->statics);
  if (next == UINT64_MAX) {
    uv_timer_stop(&node->static_timer);
    return;
  }
  uint64_t now = uv_now(node->loop);
  uv_timer_start(&node->static_timer, on_static_timer, next > now ? next - now : 0, 0);
}

int ld_node_static_start(ld_node_t *node) {
  if (node->cfg.n_static_nodes == 0)
    return 0;
  ld_static_peers_config_t sc;
  ld_static_peers_config_default(&sc);
  sc.min_ms = node->cfg.reconnect_min_ms;
  sc.max_ms = node->cfg.reconnect_max_ms;
  node->statics = ld_static_peers_new(&sc, node->cfg.static_nodes, node->cfg.n_static_nodes,
                                      dial_static, node, uv_now(node->loop));
  if (node->statics == NULL)
    return LD_ERR_INVALID_ARG;
  uv_timer_init(node->loop, &node->static_timer);
  node->static_timer.data = node;
  node->static_timer_init = true;
  ld_static_peers_tick(node->statics, uv_now(node->loop));
  schedule(node);
  return 0;
}

static ssize_t static_index(const ld_node_t *node, const ld_peerid_t *peer) {
  for (size_t i = 0; i < ld_static_peers_count(node->statics); i++)
    if (ld_peerid_equal(ld_static_peers_peer(node->statics, i), peer))
      return (ssize_t)i;
  return -1;
}

void ld_node_static_conn(ld_node_t *node, const ld_peerid_t *peer, bool up) {
  if (node->statics == NULL)
    return;
  uint64_t now = uv_now(node->loop);
  bool known = up ? ld_static_peers_connected(node->statics, peer, now)
                  : ld_static_peers_disconnected(node->statics, peer, now);
  if (!known)
    return;
  ssize_t i = static_index(node, peer);
  ld_static_peer_state_t state = ld_static_peers_state(node->statics, (size_t)i);
  if (!up && state == LD_STATIC_PEER_IDLE) {
    char text[LD_MULTIADDR_TEXT_MAX];
    ld_multiaddr_to_text(&node->cfg.static_nodes[i], text, sizeof text);
    LD_INFO(TOPIC, "static peer %s disconnected; redialing in %llu ms", text,
            (unsigned long long)(ld_static_peers_due(node->statics, (size_t)i) - now));
  }
  publish_state(node, (size_t)i, state == LD_STATIC_PEER_CONNECTED, 0);
  schedule(node);
}

static void on_timer_closed(uv_handle_t *h) {
  ld_node_pending_done(h->data);
}

void ld_node_static_stop(ld_node_t *node) {
  if (!node->static_timer_init)
    return;
  node->pending++;
  uv_timer_stop(&node->static_timer);
  uv_close((uv_handle_t *)&node->static_timer, on_timer_closed);
}
