/* Internals shared by the store-sync service's files: service.c (lifecycle, item sets, timers,
 * peers and bans, figures), service_recon.c (reconciliation streams) and service_transfer.c
 * (pushes and inbound transfers). Loop thread only. */
#ifndef LD_WAKU_SYNC_SERVICE_INTERNAL_H
#define LD_WAKU_SYNC_SERVICE_INTERNAL_H

#include <uv.h>

#include "base/buf.h"
#include "waku/sync/ranges.h"
#include "waku/sync/service.h"
#include "waku/sync/session.h"
#include "waku/sync/shards.h"
#include "waku/sync/spans.h"

#define LOG_TOPIC "store sync"

/* Items asked from the archive per push query (its hash lookup cap). */
#define PUSH_BATCH LD_ARCHIVE_MAX_HASHES
/* A push asks the archive for more only while fewer bytes than this wait in its stream. */
#define PUSH_HIGH_WATER (1024u * 1024)
/* Bytes handed to a stream per write while a reconciliation frame drains. */
#define WRITE_CHUNK (256u * 1024)

typedef struct recon recon_t;
typedef struct xfer_in xfer_in_t;
typedef struct sync_peer sync_peer_t;

/* Our push of messages a peer lacks: one outbound transfer stream. */
typedef struct pusher {
  ld_sync_ids_t queue; /* items still to send, from `pos` */
  size_t pos;
  ld_stream_t *stream;
  bool opening;
  bool closing;  /* half-closed or reset: nothing more goes on it */
  bool fetching; /* an archive query is out */
  ld_buf_t tx;   /* frames not yet handed to the stream, from tx_off */
  size_t tx_off;
  uint64_t stall_ms; /* the stream must make progress before (0: idle) */
} pusher_t;

/* What we keep about a peer while it has sessions, pushes or solicitations with us. */
struct sync_peer {
  ld_store_sync_t *svc;
  sync_peer_t *next;
  ld_peerid_t id;
  ld_sync_tree_t *need;    /* items it may push us (sessions' `need`); NULL when none */
  ld_sync_spans_t offered; /* times where it may push us anything (sessions' `offered`) */
  uint64_t solicit_until_ms;
  unsigned sessions_in, sessions_out;
  unsigned transfers_in;
  pusher_t push;
};

/* A backend request whose answer may outlive the service (then `svc` is NULL). */
typedef struct pending pending_t;
struct pending {
  ld_store_sync_t *svc;
  pending_t *prev, *next;
  void (*on_detach)(pending_t *p); /* frees what it refers to at ld_store_sync_free */
};

struct ld_store_sync {
  ld_switch_t *sw;
  uv_loop_t *loop;
  ld_peerstore_t *ps;
  ld_store_sync_backend_t backend;
  ld_store_sync_config_t cfg;
  ld_relay_protected_shard_t *protected_shards;
  ld_sync_shards_t *shards;
  ld_sync_shards_t *pubsub; /* by_content_topic: the kept pubsub topics (no items); else NULL */
  ld_sync_topic_t *topics;  /* our pubsub scope, pointing into the kept topic strings */
  size_t n_topics;
  ld_sync_limits_t limits;
  bool ready;   /* the fill has answered */
  bool stopped; /* ld_store_sync_stop */
  uv_timer_t *tick;
  uint64_t next_sync_ms, next_prune_ms;
  sync_peer_t *peers;
  size_t n_peers;
  recon_t *recons;
  size_t n_recons;
  xfer_in_t *xfers;
  size_t n_xfers;
  pending_t *pendings;
  struct ban {
    ld_peerid_t id;
    uint64_t until_ms;
  } bans[LD_STORE_SYNC_MAX_BANS];
  size_t n_bans;
  ld_store_sync_stats_t stats;
};

/* ---- service.c --------------------------------------------------------------------------------
 */

int64_t ld_store_sync__now_ns(const ld_store_sync_t *s);
uint64_t ld_store_sync__now_ms(const ld_store_sync_t *s);
/* The pubsub topics kept (ingress check 3). */
static inline const ld_sync_shards_t *ld_store_sync__kept_pubsub(const ld_store_sync_t *s) {
  return s->pubsub != NULL ? s->pubsub : s->shards;
}
/* The oldest time a session window reaches now: now − jitter − range. */
int64_t ld_store_sync__window_start(const ld_store_sync_t *s);

/* The peer's state, created when `create` (NULL when absent, or at LD_STORE_SYNC_MAX_PEERS). */
sync_peer_t *ld_store_sync__peer(ld_store_sync_t *s, const ld_peerid_t *id, bool create);
/* Frees the peer's state once nothing refers to it (no session, push or live solicitation). */
void ld_store_sync__peer_maybe_release(sync_peer_t *p);
/* Solicitation still live: a session runs or ended less than solicit_ttl_ms ago. */
bool ld_store_sync__soliciting(const sync_peer_t *p, uint64_t now_ms);

/* Cuts a peer off for an invalid transfer (see service.h). */
void ld_store_sync__punish(ld_store_sync_t *s, const ld_peerid_t *id, ld_sync_ingress_verdict_t v);

/* A connection to `id`, or NULL. */
ld_conn_t *ld_store_sync__conn_to(ld_store_sync_t *s, const ld_peerid_t *id);

void ld_store_sync__pending_add(ld_store_sync_t *s, pending_t *p);
void ld_store_sync__pending_remove(pending_t *p);

/* ---- service_recon.c --------------------------------------------------------------------------
 */

void ld_store_sync__recon_accept(ld_stream_t *st, void *user_data);
int ld_store_sync__recon_start(ld_store_sync_t *s, sync_peer_t *p, ld_conn_t *c,
                               ld_store_sync_done_fn done, void *user_data);
/* Deadlines of the sessions (read and whole session). */
void ld_store_sync__recon_tick(ld_store_sync_t *s, uint64_t now_ms);
/* Resets the sessions with `peer` (NULL: all). */
void ld_store_sync__recon_reset(ld_store_sync_t *s, const sync_peer_t *peer);

/* ---- service_transfer.c -----------------------------------------------------------------------
 */

void ld_store_sync__xfer_accept(ld_stream_t *st, void *user_data);
/* Queues items for the peer and drives its push. */
void ld_store_sync__push(sync_peer_t *p, const ld_sync_id_t *items, size_t n);
/* Moves a push on (opens, fetches, writes, or half-closes once the peer's sessions are over). */
void ld_store_sync__push_pump(sync_peer_t *p);
/* Gives up the push (resets its stream, drops its queue, counts what is dropped). */
void ld_store_sync__push_abort(sync_peer_t *p);
void ld_store_sync__xfer_tick(ld_store_sync_t *s, uint64_t now_ms);
/* Resets the inbound transfers from `peer` (NULL: all). */
void ld_store_sync__xfer_reset(ld_store_sync_t *s, const sync_peer_t *peer);

#endif
