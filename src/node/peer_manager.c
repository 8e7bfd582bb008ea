/* The peer manager's glue on the node's loop (peer_manager.h): events in, actions out. */
#include "node/peer_manager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/events.h"
#include "node/node_internal.h"
#include "node/node_peers.h"
#include "node/peer_db.h"
#include "p2p/ping.h"
#include "waku/core/codecs.h"

#define TOPIC "peer_manager"
#define POKE_DELAY_MS 100
#define MAX_ACTIONS 256
#define PM_TIMERS 3

struct node_pm {
  ld_node_t *node;
  ld_pm_t *core;
  ld_peer_db_t *db;
  uv_timer_t conn_timer, prune_timer, keepalive_timer, act_timer;
  unsigned open_handles;
  int64_t sub_conn, sub_meta;
  ld_pm_action_t *queue; /* actions decided inside event handlers, run on the next loop turn */
  size_t n_queue, cap_queue;
  uint64_t next_run_ms; /* when conn_timer fires */
};

typedef struct pm_call {
  ld_node_t *node;
  ld_peerid_t peer;
} pm_call_t;

/* nwaku: the store holds at least every connection. */
static size_t capacity_of(const ld_node_config_t *cfg) {
  size_t cap = cfg->pm.peer_store_capacity > 0 ? cfg->pm.peer_store_capacity : 1000;
  return cap > cfg->max_connections ? cap : cfg->max_connections;
}

static uint64_t now_ms(const ld_node_t *node) {
  return uv_now(node->loop);
}

ld_pm_t *ld_node_pm(ld_node_t *node) {
  return node->pm != NULL ? node->pm->core : NULL;
}

/* ---- persistence ------------------------------------------------------------------------------
 */

static void persist(node_pm_t *pm, const ld_peerid_t *id) {
  const ld_pm_peer_t *p = pm->db != NULL ? ld_pm_get(pm->core, id) : NULL;
  if (p != NULL)
    ld_peer_db_put(pm->db, p, p->conns > 0 ? 0 : (int64_t)time(NULL));
}

/* ---- actions ----------------------------------------------------------------------------------
 */

static void on_dialed(ld_conn_t *c, int err, void *user_data) {
  (void)c;
  pm_call_t *call = user_data;
  ld_node_t *node = call->node;
  if (node->state != NODE_STOPPING && node->pm != NULL) {
    ld_pm_on_dial_result(node->pm->core, &call->peer, err == 0, now_ms(node));
    if (err != 0) {
      char id[LD_PEERID_TEXT_MAX];
      ld_peerid_to_text(&call->peer, id, sizeof id);
      LD_DEBUG(TOPIC, "dial of %s failed: %s", id, ld_strerror(err));
    }
  }
  free(call);
}

static void dial_peer(node_pm_t *pm, const ld_peerid_t *id) {
  ld_node_t *node = pm->node;
  const ld_pm_peer_t *p = ld_pm_get(pm->core, id);
  pm_call_t *call = p != NULL && p->n_addrs > 0 ? malloc(sizeof *call) : NULL;
  ld_multiaddr_t ma;
  int rc = LD_ERR_NOMEM;
  if (call != NULL) {
    *call = (pm_call_t){node, *id};
    ma = p->addrs[0];
    rc = ld_multiaddr_push(&ma, LD_MA_P2P, id->bytes, id->len);
  }
  if (rc == 0)
    rc = ld_switch_dial(node->sw, &ma, on_dialed, call);
  if (rc != 0) {
    free(call);
    ld_pm_on_dial_result(pm->core, id, false, now_ms(node));
  }
}

static void forget_peer(node_pm_t *pm, const ld_peerid_t *id) {
  if (pm->db != NULL)
    ld_peer_db_delete(pm->db, id);
  ld_peerstore_remove(pm->node->peerstore, id);
  if (pm->node->enr_cache != NULL)
    ld_enr_cache_remove(pm->node->enr_cache, id);
}

static void run_actions(node_pm_t *pm, const ld_pm_action_t *a, size_t n) {
  for (size_t i = 0; i < n && pm->node->state != NODE_STOPPING; i++) {
    switch (a[i].type) {
    case LD_PM_DIAL:
      dial_peer(pm, &a[i].peer);
      break;
    case LD_PM_DISCONNECT:
      ld_node_disconnect_peer(pm->node, &a[i].peer);
      break;
    case LD_PM_FORGET:
      forget_peer(pm, &a[i].peer);
      break;
    }
  }
}

static void on_act_timer(uv_timer_t *t) {
  node_pm_t *pm = t->data;
  ld_pm_action_t *q = pm->queue;
  size_t n = pm->n_queue;
  pm->queue = NULL;
  pm->n_queue = pm->cap_queue = 0;
  run_actions(pm, q, n);
  free(q);
}

/* Queues actions decided inside an event handler (closing a connection there is not safe). */
static void defer_actions(node_pm_t *pm, const ld_pm_action_t *a, size_t n) {
  if (n == 0)
    return;
  if (pm->n_queue + n > pm->cap_queue) {
    size_t cap = (pm->n_queue + n) * 2;
    ld_pm_action_t *grown = realloc(pm->queue, cap * sizeof *grown);
    if (grown == NULL)
      return;
    pm->queue = grown;
    pm->cap_queue = cap;
  }
  memcpy(pm->queue + pm->n_queue, a, n * sizeof *a);
  pm->n_queue += n;
  uv_timer_start(&pm->act_timer, on_act_timer, 0, 0);
}

/* ---- loops ------------------------------------------------------------------------------------
 */

static void on_conn_timer(uv_timer_t *t);

static void schedule(node_pm_t *pm, uint64_t delay_ms) {
  pm->next_run_ms = now_ms(pm->node) + delay_ms;
  uv_timer_start(&pm->conn_timer, on_conn_timer, delay_ms, 0);
}

static void on_conn_timer(uv_timer_t *t) {
  node_pm_t *pm = t->data;
  ld_node_t *node = pm->node;
  ld_pm_action_t a[MAX_ACTIONS];
  size_t n = node->relay != NULL ? ld_pm_connectivity(pm->core, now_ms(node), a, MAX_ACTIONS) : 0;
  run_actions(pm, a, n < MAX_ACTIONS ? n : MAX_ACTIONS);
  schedule(pm, ld_pm_next_interval(pm->core, node->cfg.pm.connectivity_interval_ms));
}

void ld_node_pm_hold_off(ld_node_t *node, const ld_peerid_t *peer) {
  node_pm_t *pm = node->pm;
  if (pm == NULL)
    return;
  uint64_t until = now_ms(node) + node->cfg.pm.initial_backoff_ms;
  for (size_t i = 0; peer == NULL && i < ld_pm_count(pm->core); i++)
    ld_pm_hold_off(pm->core, &ld_pm_at(pm->core, i)->id, until);
  if (peer != NULL)
    ld_pm_hold_off(pm->core, peer, until);
}

void ld_node_pm_poke(ld_node_t *node) {
  node_pm_t *pm = node->pm;
  if (pm == NULL || node->state == NODE_STOPPING)
    return;
  if (pm->next_run_ms > now_ms(node) + POKE_DELAY_MS)
    schedule(pm, POKE_DELAY_MS);
}

static void on_prune_timer(uv_timer_t *t) {
  node_pm_t *pm = t->data;
  ld_pm_action_t a[MAX_ACTIONS];
  size_t n = ld_pm_prune(pm->core, a, MAX_ACTIONS);
  run_actions(pm, a, n < MAX_ACTIONS ? n : MAX_ACTIONS);
}

static void on_ping(int err, unsigned index, uint64_t rtt_us, bool done, void *user_data) {
  (void)index, (void)rtt_us;
  pm_call_t *call = user_data;
  if (!done)
    return;
  ld_node_t *node = call->node;
  if (err != 0 && err != LD_ERR_CLOSED && err != LD_ERR_PROTOCOL_UNSUPPORTED &&
      node->state != NODE_STOPPING) {
    char id[LD_PEERID_TEXT_MAX];
    ld_peerid_to_text(&call->peer, id, sizeof id);
    LD_INFO(TOPIC, "keep-alive ping of %s failed (%s): disconnecting", id, ld_strerror(err));
    ld_node_disconnect_peer(node, &call->peer);
  }
  free(call);
}

static void on_keepalive_timer(uv_timer_t *t) {
  node_pm_t *pm = t->data;
  ld_node_t *node = pm->node;
  for (size_t i = 0; i < ld_pm_count(pm->core); i++) {
    const ld_pm_peer_t *p = ld_pm_at(pm->core, i);
    ld_conn_t *c = p->conns > 0 ? ld_node_peer_conn(node, &p->id) : NULL;
    pm_call_t *call = c != NULL ? malloc(sizeof *call) : NULL;
    if (call == NULL)
      continue;
    *call = (pm_call_t){node, p->id};
    if (ld_ping(node->sw, c, 1, on_ping, call) != 0)
      free(call);
  }
}

/* ---- events -----------------------------------------------------------------------------------
 */

/* The IP address of a connection's remote end as text ("" when it has none). */
static void remote_ip(ld_conn_t *c, char *out, size_t cap) {
  const ld_multiaddr_t *ma = ld_conn_remote_addr(c);
  ld_multiaddr_component_t comp;
  size_t off = 0;
  out[0] = '\0';
  if (ma == NULL || ld_multiaddr_next(ma, &off, &comp) != 0)
    return;
  char text[LD_MULTIADDR_TEXT_MAX];
  if (ld_multiaddr_to_text(ma, text, sizeof text) <= 0)
    return;
  /* "/ip4/1.2.3.4/tcp/…": the second field */
  const char *start = strchr(text + 1, '/');
  const char *end = start != NULL ? strchr(start + 1, '/') : NULL;
  if (start == NULL)
    return;
  size_t len = end != NULL ? (size_t)(end - start - 1) : strlen(start + 1);
  if (len < cap) {
    memcpy(out, start + 1, len);
    out[len] = '\0';
  }
}

static void on_connection(int kind, const void *payload, void *user_data) {
  (void)kind;
  node_pm_t *pm = user_data;
  const ld_event_connection_t *ev = payload;
  ld_node_t *node = pm->node;
  if (!ev->connected) {
    ld_pm_on_disconnected(pm->core, ev->peer, now_ms(node));
    persist(pm, ev->peer);
    return;
  }
  if (ev->outbound) { /* the address that worked */
    ld_pm_peer_info_t info = {.addrs = ld_conn_remote_addr(ev->conn), .n_addrs = 1};
    ld_pm_add(pm->core, ev->peer, &info, now_ms(node), NULL, 0);
  }
  char ip[LD_PM_IP_MAX];
  remote_ip(ev->conn, ip, sizeof ip);
  ld_pm_action_t a[16];
  size_t n = ld_pm_on_connected(pm->core, ev->peer, ev->outbound, ip, now_ms(node), a, 16);
  persist(pm, ev->peer);
  defer_actions(pm, a, n < 16 ? n : 16);
}

static void on_metadata(int kind, const void *payload, void *user_data) {
  (void)kind;
  node_pm_t *pm = user_data;
  const ld_event_peer_metadata_t *ev = payload;
  if (ev->info == NULL || !ev->info->has_cluster)
    return;
  uint16_t shards[LD_PM_MAX_PEER_SHARDS];
  size_t n_shards = ld_metadata_info_shards(ev->info, shards, LD_PM_MAX_PEER_SHARDS);
  n_shards = n_shards < LD_PM_MAX_PEER_SHARDS ? n_shards : LD_PM_MAX_PEER_SHARDS;
  ld_pm_action_t a[4];
  size_t n = ld_pm_on_metadata(pm->core, ev->peer, ev->info->cluster_id, shards, n_shards, a, 4);
  if (n > 0) {
    char id[LD_PEERID_TEXT_MAX];
    ld_peerid_to_text(ev->peer, id, sizeof id);
    LD_INFO(TOPIC, "disconnecting from peer %s: different clusterId reported: %u vs %u", id,
            pm->node->cfg.cluster_id, (unsigned)ev->info->cluster_id);
  }
  persist(pm, ev->peer);
  /* a rejected peer's connection is closed by metadata itself, after a grace that lets the peer
   * read our metadata first: only forget it here */
  size_t kept = 0;
  for (size_t i = 0; i < n && i < 4; i++)
    if (ev->rejected == 0 || a[i].type != LD_PM_DISCONNECT)
      a[kept++] = a[i];
  defer_actions(pm, a, kept);
}

static unsigned services_of(const ld_identify_info_t *info) {
  static const struct {
    const char *codec;
    unsigned bit;
  } k[] = {{LD_WAKU_RELAY_CODEC, LD_PM_RELAY},
           {LD_WAKU_STORE_CODEC, LD_PM_STORE},
           {LD_WAKU_FILTER_SUBSCRIBE_CODEC, LD_PM_FILTER},
           {LD_WAKU_LIGHTPUSH_CODEC, LD_PM_LIGHTPUSH},
           {LD_WAKU_LEGACY_LIGHTPUSH_CODEC, LD_PM_LIGHTPUSH},
           {LD_WAKU_PEER_EXCHANGE_CODEC, LD_PM_PX}};
  unsigned s = 0;
  for (size_t i = 0; i < info->n_protocols; i++)
    for (size_t j = 0; j < sizeof k / sizeof k[0]; j++)
      if (strcmp(info->protocols[i], k[j].codec) == 0)
        s |= k[j].bit;
  return s;
}

void ld_node_pm_identified(ld_node_t *node, ld_conn_t *c, const ld_identify_info_t *info) {
  node_pm_t *pm = node->pm;
  if (pm == NULL || node->state == NODE_STOPPING)
    return;
  const ld_peerid_t *id = ld_conn_remote_peer(c);
  ld_pm_peer_info_t pi = {.addrs = info->listen_addrs,
                          .n_addrs = info->listen_addrs_present ? info->n_listen_addrs : 0,
                          .services = info->protocols_present ? services_of(info) : 0};
  ld_pm_add(pm->core, id, &pi, now_ms(node), NULL, 0);
  if (info->protocols_present)
    ld_pm_set_services(pm->core, id, pi.services);
  persist(pm, id);
  /* a relay peer that came in above the inbound target */
  const ld_pm_peer_t *p = ld_pm_get(pm->core, id);
  size_t in_relay, out_relay;
  ld_pm_relay_counts(pm->core, &in_relay, &out_relay);
  if (p != NULL && !p->outbound && (p->services & LD_PM_RELAY) &&
      p->origin != LD_PM_ORIGIN_STATIC && in_relay > ld_pm_targets(pm->core)->in_relay) {
    ld_pm_action_t a = {LD_PM_DISCONNECT, *id};
    defer_actions(pm, &a, 1);
  }
}

/* ---- adding peers -----------------------------------------------------------------------------
 */

int ld_node_add_peer(ld_node_t *node, const ld_peerid_t *id, const ld_multiaddr_t *addrs, size_t n,
                     ld_pm_origin_t origin) {
  if (node->pm == NULL || node->state != NODE_STARTED)
    return LD_ERR_STATE;
  if (ld_peerid_equal(id, &node->peer_id))
    return LD_ERR_INVALID_ARG;
  ld_pm_peer_info_t info = {.addrs = addrs, .n_addrs = n, .origin = origin};
  ld_pm_action_t a[MAX_ACTIONS];
  int rc = ld_pm_add(node->pm->core, id, &info, now_ms(node), a, MAX_ACTIONS);
  if (rc < 0)
    return rc;
  run_actions(node->pm, a, (size_t)rc < MAX_ACTIONS ? (size_t)rc : MAX_ACTIONS);
  ld_peerstore_add_addrs(node->peerstore, id, addrs, n, ld_now_ms());
  persist(node->pm, id);
  return 0;
}

static unsigned services_of_caps(uint8_t caps) {
  unsigned s = 0;
  s |= caps & LD_ENR_RELAY ? LD_PM_RELAY : 0;
  s |= caps & LD_ENR_STORE ? LD_PM_STORE : 0;
  s |= caps & LD_ENR_FILTER ? LD_PM_FILTER : 0;
  s |= caps & LD_ENR_LIGHTPUSH ? LD_PM_LIGHTPUSH : 0;
  return s;
}

int ld_node_add_peer_enr(ld_node_t *node, const ld_enr_t *enr, ld_pm_origin_t origin) {
  if (node->pm == NULL || node->state != NODE_STARTED)
    return LD_ERR_STATE;
  if (ld_enr_cluster_mismatch(enr, node->cfg.cluster_id))
    return LD_ERR_INVALID_ARG;
  ld_peerid_t id;
  int rc = ld_enr_peer_id(enr, &id);
  if (rc != 0)
    return rc;
  ld_multiaddr_t addrs[LD_PM_MAX_ADDRS];
  size_t n = ld_enr_dial_addrs(enr, addrs, LD_PM_MAX_ADDRS);
  n = n < LD_PM_MAX_ADDRS ? n : LD_PM_MAX_ADDRS;
  if (n == 0)
    return LD_ERR_NOT_FOUND;
  rc = ld_node_add_peer(node, &id, addrs, n, origin);
  if (rc != 0)
    return rc;
  uint8_t caps = 0;
  ld_enr_shards_t es;
  ld_pm_peer_info_t info = {.origin = origin};
  uint16_t shards[LD_PM_MAX_PEER_SHARDS];
  if (ld_enr_waku2(enr, &caps) == 0)
    info.services = services_of_caps(caps);
  if (ld_enr_shards(enr, &es) == 0) {
    size_t k = 0;
    for (uint16_t s = 0; s <= LD_ENR_MAX_SHARD && k < LD_PM_MAX_PEER_SHARDS; s++)
      if (ld_enr_shards_has(&es, s))
        shards[k++] = s;
    info.has_shards = true;
    info.cluster_id = es.cluster_id;
    info.shards = shards;
    info.n_shards = k;
  }
  const ld_pm_peer_t *p = ld_pm_get(node->pm->core, &id);
  if (p != NULL && p->conns > 0)
    info.services = 0; /* identify knows better */
  ld_pm_add(node->pm->core, &id, &info, now_ms(node), NULL, 0);
  persist(node->pm, &id);
  return 0;
}

/* ---- start and stop ---------------------------------------------------------------------------
 */

static void on_loaded(void *ud, const ld_peerid_t *id, const ld_pm_peer_info_t *info) {
  node_pm_t *pm = ud;
  if (ld_peerid_equal(id, &pm->node->peer_id))
    return;
  ld_pm_add(pm->core, id, info, now_ms(pm->node), NULL, 0);
  ld_peerstore_add_addrs(pm->node->peerstore, id, info->addrs, info->n_addrs, ld_now_ms());
}

static int open_store(node_pm_t *pm) {
  const ld_node_config_t *cfg = &pm->node->cfg;
  if (!cfg->pm.persistence)
    return 0;
  int rc = ld_peer_db_open(cfg->pm.db_path, &pm->db);
  if (rc != 0) {
    LD_ERROR(TOPIC, "cannot open the peer store %s: %s", cfg->pm.db_path, ld_strerror(rc));
    ld_node_note_failure(pm->node, "peer-store", rc, cfg->pm.db_path);
    return rc;
  }
  int n = ld_peer_db_load(pm->db, capacity_of(cfg), on_loaded, pm);
  LD_INFO(TOPIC, "loaded %d peers from %s", n, cfg->pm.db_path);
  return 0;
}

static void register_statics(node_pm_t *pm) {
  ld_node_t *node = pm->node;
  for (size_t i = 0; i < node->n_kept; i++) {
    ld_multiaddr_t ma = node->kept[i];
    ld_peerid_t id;
    if (!ld_multiaddr_peerid(&ma, &id, true))
      continue;
    ld_pm_peer_info_t info = {.addrs = &ma, .n_addrs = 1, .origin = LD_PM_ORIGIN_STATIC};
    ld_pm_add(pm->core, &id, &info, now_ms(node), NULL, 0);
    ld_pm_on_dialing(pm->core, &id); /* the static-peer engine dials it */
  }
  /* the operator's service peers fill their slots (nwaku's serviceSlots) */
  static const ld_pm_service_t slot_of[LD_NODE_SERVICES] = {LD_PM_SLOT_STORE, LD_PM_SLOT_FILTER,
                                                            LD_PM_SLOT_LIGHTPUSH};
  for (int i = 0; i < LD_NODE_SERVICES; i++) {
    ld_multiaddr_t ma = node->cfg.service_node[i];
    ld_peerid_t id;
    if (node->cfg.has_service_node[i] && ld_multiaddr_peerid(&ma, &id, true))
      ld_pm_set_slot(pm->core, slot_of[i], &id);
  }
}

static void core_config(const ld_node_t *node, ld_pm_config_t *pc) {
  ld_pm_config_default(pc);
  pc->max_connections = node->cfg.max_connections;
  pc->relay_ratio = node->cfg.pm.relay_ratio;
  pc->capacity = capacity_of(&node->cfg);
  pc->colocation_limit = node->cfg.colocation_limit;
  pc->initial_backoff_ms = node->cfg.pm.initial_backoff_ms;
  pc->cluster_id = node->cfg.cluster_id;
  pc->shards = node->cfg.shards;
  pc->n_shards = node->relay != NULL ? node->cfg.n_shards : 0;
  pc->seed = ld_now_ns() ^ (uint64_t)(uintptr_t)node;
}

int ld_node_pm_start(ld_node_t *node) {
  node_pm_t *pm = calloc(1, sizeof *pm);
  if (pm == NULL)
    return LD_ERR_NOMEM;
  pm->node = node;
  ld_pm_config_t pc;
  core_config(node, &pc);
  pm->core = ld_pm_new(&pc);
  if (pm->core == NULL) {
    free(pm);
    return LD_ERR_NOMEM;
  }
  node->pm = pm;
  uv_timer_t *timers[] = {&pm->conn_timer, &pm->prune_timer, &pm->keepalive_timer, &pm->act_timer};
  for (size_t i = 0; i < sizeof timers / sizeof timers[0]; i++) {
    uv_timer_init(node->loop, timers[i]);
    timers[i]->data = pm;
    pm->open_handles++;
  }
  pm->sub_conn = ld_broker_subscribe(node->broker, LD_EVENT_CONNECTION, on_connection, pm);
  pm->sub_meta = ld_broker_subscribe(node->broker, LD_EVENT_PEER_METADATA, on_metadata, pm);
  register_statics(pm);
  int rc = open_store(pm);
  if (rc != 0)
    return rc;
  const ld_pm_targets_t *t = ld_pm_targets(pm->core);
  LD_INFO(TOPIC, "targets: %zu relay peers (%zu out, %zu in), %zu service peers", t->max_relay,
          t->out_relay, t->in_relay, t->max_service);
  schedule(pm, 0);
  uv_timer_start(&pm->prune_timer, on_prune_timer, node->cfg.pm.prune_interval_ms,
                 node->cfg.pm.prune_interval_ms);
  uv_timer_start(&pm->keepalive_timer, on_keepalive_timer, node->cfg.pm.keepalive_interval_ms,
                 node->cfg.pm.keepalive_interval_ms);
  return 0;
}

static void on_timer_closed(uv_handle_t *h) {
  node_pm_t *pm = h->data;
  ld_node_t *node = pm->node;
  if (--pm->open_handles == 0) {
    ld_pm_free(pm->core);
    ld_peer_db_close(pm->db);
    free(pm->queue);
    free(pm);
    node->pm = NULL;
  }
  ld_node_pending_done(node);
}

void ld_node_pm_stop(ld_node_t *node) {
  node_pm_t *pm = node->pm;
  if (pm == NULL)
    return;
  ld_broker_unsubscribe(node->broker, pm->sub_conn);
  ld_broker_unsubscribe(node->broker, pm->sub_meta);
  /* the last state of the connected peers, as nwaku stores it on every event */
  for (size_t i = 0; pm->db != NULL && i < ld_pm_count(pm->core); i++)
    if (ld_pm_at(pm->core, i)->conns > 0)
      ld_peer_db_put(pm->db, ld_pm_at(pm->core, i), (int64_t)time(NULL));
  uv_timer_t *timers[] = {&pm->conn_timer, &pm->prune_timer, &pm->keepalive_timer, &pm->act_timer};
  for (size_t i = 0; i < sizeof timers / sizeof timers[0]; i++) {
    node->pending++;
    uv_close((uv_handle_t *)timers[i], on_timer_closed);
  }
}
