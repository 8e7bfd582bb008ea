/* The static-peer engine (static_peers.h) on the node's loop: its dials go through the switch,
 * its deadlines through one libuv timer, its connection news come from the switch's events.
 * It keeps the static nodes connected and, as nwaku's connectivity loop does, the configured
 * service nodes (--storenode, --filternode, --lightpushnode): a relay-capable one becomes a
 * gossipsub peer like any other connection. LD_EVENT_STATIC_PEER is published for the static
 * nodes only. */
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "node/events.h"
#include "node/node_internal.h"

#define TOPIC "node"

_Static_assert(LD_NODE_MAX_STATIC_NODES + LD_NODE_SERVICES <= LD_STATIC_PEERS_MAX,
               "the static-peer engine holds every static node and service node");

static void schedule(ld_node_t *node);

static void publish_state(ld_node_t *node, size_t index, bool connected, int err) {
  if (index >= node->cfg.n_static_nodes)
    return; /* a service node */
  ld_multiaddr_t addr = node->kept[index];
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
    ld_multiaddr_to_text(&node->kept[d->index], text, sizeof text);
    uint64_t due = ld_static_peers_due(node->statics, d->index);
    LD_WARN(TOPIC, "%s %s: dial failed: %s; next attempt in %llu ms", node->kept_role[d->index],
            text, ld_errname(err), (unsigned long long)(due - uv_now(node->loop)));
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
    LD_WARN(TOPIC, "%s %s: cannot dial: %s", node->kept_role[index], text, ld_errname(rc));
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

static bool peer_of(const ld_multiaddr_t *addr, ld_peerid_t *id) {
  ld_multiaddr_t copy = *addr;
  return ld_multiaddr_peerid(&copy, id, false);
}

/* True when `id` is the node itself or already kept. */
static bool kept_already(const ld_node_t *node, const ld_peerid_t *id) {
  if (ld_peerid_equal(id, &node->peer_id))
    return true;
  for (size_t i = 0; i < node->n_kept; i++) {
    ld_peerid_t other;
    if (peer_of(&node->kept[i], &other) && ld_peerid_equal(&other, id))
      return true;
  }
  return false;
}

/* node->kept: the static nodes, then the configured service nodes not among them. */
static void collect_kept(ld_node_t *node) {
  static const char *const roles[LD_NODE_SERVICES] = {"store node", "filter node",
                                                      "lightpush node"};
  const ld_node_config_t *cfg = &node->cfg;
  node->n_kept = 0;
  for (size_t i = 0; i < cfg->n_static_nodes; i++) {
    node->kept_role[node->n_kept] = "static peer";
    node->kept[node->n_kept++] = cfg->static_nodes[i];
  }
  for (int s = 0; s < LD_NODE_SERVICES; s++) {
    ld_peerid_t id;
    if (!cfg->has_service_node[s] || !peer_of(&cfg->service_node[s], &id) ||
        kept_already(node, &id))
      continue;
    node->kept_role[node->n_kept] = roles[s];
    node->kept[node->n_kept++] = cfg->service_node[s];
  }
}

int ld_node_static_start(ld_node_t *node) {
  collect_kept(node);
  if (node->n_kept == 0)
    return 0;
  ld_static_peers_config_t sc;
  ld_static_peers_config_default(&sc);
  sc.min_ms = node->cfg.reconnect_min_ms;
  sc.max_ms = node->cfg.reconnect_max_ms;
  node->statics =
      ld_static_peers_new(&sc, node->kept, node->n_kept, dial_static, node, uv_now(node->loop));
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
    ld_multiaddr_to_text(&node->kept[i], text, sizeof text);
    LD_INFO(TOPIC, "%s %s disconnected; redialing in %llu ms", node->kept_role[i], text,
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
