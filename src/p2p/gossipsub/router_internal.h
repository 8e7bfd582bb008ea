/* Router internals shared by router.c (state, peers, local actions), router_rpc.c (inbound RPCs,
 * validation) and router_heartbeat.c (mesh maintenance, gossip, expiry). Not a public API. */
#ifndef LD_P2P_GOSSIPSUB_ROUTER_INTERNAL_H
#define LD_P2P_GOSSIPSUB_ROUTER_INTERNAL_H

#include "base/hashmap.h"
#include "p2p/gossipsub/idset.h"
#include "p2p/gossipsub/mcache.h"
#include "p2p/gossipsub/router.h"
#include "p2p/gossipsub/rpc.h"
#include "p2p/gossipsub/score.h"

#define GS_MAX_TOPICS 65536    /* topics the router tracks at once */
#define GS_MAX_SEEN (4u << 20) /* seen-cache entries */
#define GS_MAX_PROMISES 65536  /* IWANT promises tracked */
#define GS_MAX_DELIVERERS 32   /* peers remembered per message awaiting validation */
#define GS_MAX_BACKOFF_MS (24ull * 3600 * 1000)

/* Seen-cache value: low 2 bits status. Pending: the validation ID above them. Decided: bits 2..17
 * how many peers the message reached (gs_seen_decided), bits 32..63 a tag of its topic
 * (gs_topic_tag). The first-seen time of every entry is its expiry minus seen_ttl_ms. */
enum { GS_SEEN_PENDING = 0, GS_SEEN_ACCEPTED = 1, GS_SEEN_REJECTED = 2, GS_SEEN_IGNORED = 3 };
#define GS_SEEN_REACH_MAX 0xffffu

static inline uint64_t gs_seen_decided(uint64_t status, size_t reach, uint32_t topic_tag) {
  uint64_t n = reach < GS_SEEN_REACH_MAX ? reach : GS_SEEN_REACH_MAX;
  return ((uint64_t)topic_tag << 32) | (n << 2) | status;
}

static inline uint32_t gs_seen_reach(uint64_t value) {
  return (uint32_t)((value >> 2) & GS_SEEN_REACH_MAX);
}

/* The topic tag of decided seen-cache entries. */
uint32_t gs_topic_tag(const char *topic);

typedef struct gs_topic gs_topic_t;

typedef struct gs_peer {
  ld_gs_peer_t id;
  ld_gs_proto_t proto;
  bool outbound, direct, disconnect_requested, dirty;
  gs_topic_t **topics; /* topics the peer subscribed to */
  uint32_t n_topics, cap_topics;
  /* per-heartbeat counters */
  uint32_t ihave_in, iwant_asked, iwant_served, idontwant_in, graft_prune_in;
  uint32_t malformed;
  ld_gs_idset_t dontwant; /* IDONTWANT ids, expiry = heartbeat count */
  ld_gs_out_t out;
} gs_peer_t;

typedef struct gs_backoff {
  ld_gs_peer_t peer;
  uint64_t expiry;
  uint64_t pruned_at; /* when the backoff was (re)set */
} gs_backoff_t;

typedef struct gs_peers {
  gs_peer_t **v;
  uint32_t n, cap;
} gs_peers_t;

struct gs_topic {
  char *name;
  size_t name_len;
  bool subscribed;
  gs_peers_t peers; /* subscribers */
  gs_peers_t mesh;
  gs_peers_t fanout;
  uint64_t last_pub;
  gs_backoff_t *backoff;
  uint32_t n_backoff, cap_backoff;
  ld_gs_topic_stats_t stats;
  uint8_t *gossip; /* ids gathered for this heartbeat's IHAVE */
  size_t n_gossip, cap_gossip;
};

typedef struct gs_pending {
  uint64_t vid;
  uint8_t id[LD_GS_MSG_ID_LEN];
  uint64_t h; /* ld_gs_idset_hash(id) */
  char *topic;
  uint8_t *data;
  size_t len;
  uint64_t received;
  ld_gs_peer_t deliverers[GS_MAX_DELIVERERS]; /* [0] is the first propagator */
  uint32_t n_deliverers;
  bool idontwant_held; /* IDONTWANT owed to the mesh if validation turns out to take a while */
} gs_pending_t;

struct ld_gs_router {
  ld_gs_params_t p;
  ld_gs_callbacks_t cb;
  void *ud;
  uint64_t rng[4];
  ld_hashmap_t *peers;   /* u64 -> gs_peer_t* */
  ld_hashmap_t *topics;  /* name -> gs_topic_t* */
  ld_hashmap_t *pending; /* vid -> gs_pending_t* */
  size_t pending_bytes;  /* message bytes held by `pending` */
  ld_gs_score_t *score;
  ld_gs_mcache_t mcache;
  ld_gs_idset_t seen;     /* expiry = ms */
  ld_gs_idset_t promises; /* value = peer, expiry = deadline ms */
  uint64_t next_vid;
  uint64_t hb_count, next_hb;
  ld_gs_peer_t *dirty; /* peers with queued output */
  size_t n_dirty, cap_dirty;
  uint8_t *scratch; /* max_rpc_size bytes for packing */
  gs_peer_t **cand; /* selection scratch */
  size_t cap_cand;
  uint8_t *want; /* IWANT scratch */
  size_t n_want, cap_want;
  ld_gs_stats_t stats;
};

/* randomness */
uint64_t gs_rand(ld_gs_router_t *r);
size_t gs_rand_below(ld_gs_router_t *r, size_t n);
void gs_shuffle_peers(ld_gs_router_t *r, gs_peer_t **v, size_t n);
void gs_shuffle_ids(ld_gs_router_t *r, uint8_t *ids, size_t n);

/* peers and topics */
gs_peer_t *gs_peer(const ld_gs_router_t *r, ld_gs_peer_t id);
gs_topic_t *gs_topic_find(const ld_gs_router_t *r, const void *name, size_t len);
gs_topic_t *gs_topic_get(ld_gs_router_t *r, const void *name, size_t len);
void gs_topic_free(gs_topic_t *t);
bool gs_peers_has(const gs_peers_t *s, const gs_peer_t *p);
int gs_peers_add(gs_peers_t *s, gs_peer_t *p);
bool gs_peers_del(gs_peers_t *s, const gs_peer_t *p);
double gs_score(const ld_gs_router_t *r, const gs_peer_t *p, uint64_t now);
bool gs_is_gossip(const gs_peer_t *p);
bool gs_has_idontwant(const gs_peer_t *p);

/* backoff */
uint64_t gs_backoff_expiry(const gs_topic_t *t, ld_gs_peer_t peer);
const gs_backoff_t *gs_backoff_find(const gs_topic_t *t, ld_gs_peer_t peer);
void gs_backoff_set(gs_topic_t *t, ld_gs_peer_t peer, uint64_t now, uint64_t ms);
bool gs_backoff_blocks_graft(const ld_gs_router_t *r, const gs_topic_t *t, ld_gs_peer_t peer,
                             uint64_t now);

/* mesh and control output */
void gs_mesh_add(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t now);
void gs_mesh_del(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t now);
void gs_send_graft(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p);
void gs_send_prune(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t backoff_ms,
                   uint64_t now);
ld_gs_out_t *gs_out(ld_gs_router_t *r, gs_peer_t *p);
void gs_flush(ld_gs_router_t *r);
void gs_queue_msg(ld_gs_router_t *r, gs_peer_t *p, gs_topic_t *t, const char *topic,
                  const uint8_t *data, size_t len);

/* candidate selection */
typedef enum {
  GS_SEL_GRAFT,          /* not in mesh, no backoff, score >= 0 */
  GS_SEL_GRAFT_OUTBOUND, /* same, outbound connections only */
  GS_SEL_GOSSIP,         /* not in mesh or fanout, score >= gossip threshold */
  GS_SEL_FANOUT,         /* not in fanout, score >= publish threshold */
} gs_sel_t;
size_t gs_select(ld_gs_router_t *r, gs_topic_t *t, gs_sel_t sel, double min_score, uint64_t now);
/* True when `p` may join the mesh of `t` now: a gossipsub peer, not direct, not leaving, not in
 * the mesh yet, not held back by a PRUNE backoff, score >= 0 (GS_SEL_GRAFT's rule). */
bool gs_may_graft(ld_gs_router_t *r, gs_topic_t *t, gs_peer_t *p, uint64_t now);
/* Tops the fanout of `t` up to D peers above the publish threshold. */
void gs_fanout_fill(ld_gs_router_t *r, gs_topic_t *t, uint64_t now);

/* validation */
void gs_expire_pending(ld_gs_router_t *r, uint64_t now);
void gs_pending_free(void *v);

/* disconnect */
void gs_request_disconnect(ld_gs_router_t *r, gs_peer_t *p, int reason);

#endif
