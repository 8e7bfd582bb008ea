/* GossipSub v1.1 router with v1.2 IDONTWANT, as a sans-I/O engine.
 *
 * The router never touches sockets or clocks. The network adapter (service.[ch]) owns the
 * streams: it tells the router about peers (add/remove), hands it every RPC read from a peer's
 * inbound stream (without the uvarint length prefix), calls ld_gs_router_heartbeat when
 * ld_gs_router_next_deadline says so, and writes every RPC the router emits through the `send`
 * callback on that peer's outbound stream (prefixing the length). Every entry point takes the
 * current time `now_ms` (any monotonic millisecond clock, the same for all calls).
 *
 * Wire policy (Waku relay): StrictNoSign — published messages carry only `data` and `topic`;
 * received messages carrying `from`, `seqno`, `signature` or `key` (present but empty counts as
 * present) are rejected as js-libp2p does and the propagating peer gets the P4 penalty (nim would
 * verify a present signature instead; we never accept signed messages, so both sides of a Waku
 * network agree). Message ID = SHA-256(data), 32 raw bytes. Peer exchange is off (as nwaku):
 * PRUNEs we send carry a backoff but no peers, PX in received PRUNEs is ignored.
 *
 * Threading: a router is used from one thread at a time (the node's loop). Callbacks run
 * synchronously inside the router call that triggers them. From inside a callback the adapter
 * may call ld_gs_router_validated (also from within `validate` itself, for synchronous
 * validators); it must not call ld_gs_router_free, and calls to remove_peer / handle_rpc /
 * publish / subscribe / unsubscribe / heartbeat from inside a callback are not allowed either
 * (queue them). A function that fails never calls a callback, with one exception:
 * ld_gs_router_handle_rpc may call `disconnect` (LD_GS_DISCONNECT_ABUSE) before returning
 * LD_ERR_BAD_PROTOBUF for the max_malformed_rpcs-th malformed RPC of a peer. */
#ifndef LD_P2P_GOSSIPSUB_ROUTER_H
#define LD_P2P_GOSSIPSUB_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- constants ------------------------------------------------------------------------------ */

#define LD_GS_MSG_ID_LEN 32           /* SHA-256(data) */
#define LD_GS_MAX_RPC_SIZE 153600     /* nwaku's maxMessageSize: 150 KiB per RPC frame */
#define LD_GS_MAX_TOPIC_LEN 1024      /* longer topic strings in RPCs are dropped */
#define LD_GS_MAX_TOPICS_PER_PEER 512 /* subscriptions remembered per peer */
#define LD_GS_MAX_PEERS 10000         /* peers one router tracks */

/* Protocol IDs a gossipsub router speaks (strings for multistream). */
#define LD_GS_ID_FLOODSUB "/floodsub/1.0.0"
#define LD_GS_ID_MESHSUB_10 "/meshsub/1.0.0"
#define LD_GS_ID_MESHSUB_11 "/meshsub/1.1.0"
#define LD_GS_ID_MESHSUB_12 "/meshsub/1.2.0"
#define LD_GS_ID_WAKU_RELAY "/vac/waku/relay/2.0.0"

/* Handle chosen by the adapter, unique among live peers. Keep it stable per remote peer ID (e.g.
 * derived from the peer ID) so that retained scores and backoffs apply across reconnects. */
typedef uint64_t ld_gs_peer_t;

typedef enum {
  LD_GS_PROTO_FLOODSUB,   /* flood target only: never grafted, never gossiped to */
  LD_GS_PROTO_MESHSUB_10, /* no backoff in PRUNE, no IDONTWANT */
  LD_GS_PROTO_MESHSUB_11, /* backoff in PRUNE */
  LD_GS_PROTO_MESHSUB_12, /* + IDONTWANT sent and honoured */
  LD_GS_PROTO_WAKU_RELAY, /* /vac/waku/relay/2.0.0: >= 1.1 semantics, IDONTWANT sent (as nim)
                             and honoured */
} ld_gs_proto_t;

/* Maps a multistream protocol ID to the enum (LD_ERR_UNSUPPORTED for others); and back (static
 * string). */
int ld_gs_proto_from_id(const char *id, ld_gs_proto_t *out);
const char *ld_gs_proto_id(ld_gs_proto_t proto);

typedef enum { LD_GS_ACCEPT, LD_GS_REJECT, LD_GS_IGNORE } ld_gs_verdict_t;

/* Why the router asks the adapter to drop a peer. */
typedef enum {
  LD_GS_DISCONNECT_GRAYLISTED = 1, /* score fell below the graylist threshold */
  LD_GS_DISCONNECT_ABUSE = 2,      /* repeated malformed RPCs */
} ld_gs_disconnect_reason_t;

/* ---- parameters ----------------------------------------------------------------------------- */

/* Score parameters of one topic (gossipsub v1.1 P1..P4). nwaku applies the same set to every
 * subscribed topic, so the router applies these to every topic it is subscribed to. */
typedef struct ld_gs_topic_score_params {
  double topic_weight;
  /* P1: time in mesh */
  double time_in_mesh_weight;
  uint64_t time_in_mesh_quantum_ms;
  double time_in_mesh_cap;
  /* P2: first message deliveries */
  double first_message_deliveries_weight;
  double first_message_deliveries_decay;
  double first_message_deliveries_cap;
  /* P3: mesh message delivery deficit (weight <= 0; 0 disables) */
  double mesh_message_deliveries_weight;
  double mesh_message_deliveries_decay;
  double mesh_message_deliveries_cap;
  double mesh_message_deliveries_threshold;
  uint64_t mesh_message_deliveries_window_ms;
  uint64_t mesh_message_deliveries_activation_ms;
  /* P3b: sticky mesh failure penalty */
  double mesh_failure_penalty_weight;
  double mesh_failure_penalty_decay;
  /* P4: invalid messages (weight <= 0) */
  double invalid_message_deliveries_weight;
  double invalid_message_deliveries_decay;
} ld_gs_topic_score_params_t;

typedef struct ld_gs_params {
  /* mesh degrees */
  uint32_t d, d_lo, d_hi, d_score, d_out, d_lazy;
  double gossip_factor;
  /* timing */
  uint64_t heartbeat_ms;
  uint64_t heartbeat_initial_ms; /* adapter's delay before the first heartbeat (go/js 100 ms) */
  uint32_t mcache_len;           /* history windows kept */
  uint32_t mcache_gossip;        /* newest windows advertised in IHAVE (< mcache_len) */
  uint64_t seen_ttl_ms;
  uint64_t fanout_ttl_ms;
  uint64_t prune_backoff_ms;
  uint64_t unsubscribe_backoff_ms;
  uint32_t backoff_slack_heartbeats; /* extra wait before we re-GRAFT after a backoff */
  uint64_t graft_flood_ms;           /* GRAFT this soon after our PRUNE: one more P7 */
  uint32_t opportunistic_graft_ticks;
  uint32_t opportunistic_graft_peers;
  bool flood_publish;
  /* sizes */
  size_t max_rpc_size;       /* RPC frames in and out; data larger than fits is refused */
  size_t idontwant_min_size; /* send IDONTWANT for data of at least this many bytes */
  /* IDONTWANT for data of at least this many bytes goes out at first sight, before validation;
   * smaller messages' IDONTWANT is held (see ld_gs_router_validation_deferred). */
  size_t idontwant_eager_size;
  /* gossip */
  uint32_t max_ihave_len;         /* ids per IHAVE we send; ids we request per peer per hb */
  uint32_t max_ihave_messages;    /* IHAVE entries accepted per peer per heartbeat */
  uint64_t iwant_followup_ms;     /* promise deadline for a requested message */
  uint32_t gossip_retransmission; /* IWANT answers per message per peer */
  uint32_t idontwant_ttl_heartbeats;
  /* caps on what one peer can make us process (excess is dropped and counted) */
  uint32_t max_subscriptions_per_rpc;
  uint32_t max_messages_per_rpc;
  uint32_t max_ihave_per_rpc; /* IHAVE entries */
  uint32_t max_iwant_ids_per_rpc;
  uint32_t max_graft_per_rpc;
  uint32_t max_prune_per_rpc;
  uint32_t max_idontwant_ids_per_rpc;
  uint32_t max_iwant_ids_per_heartbeat;     /* IWANT ids served per peer per heartbeat */
  uint32_t max_idontwant_ids_per_heartbeat; /* IDONTWANT ids remembered per peer per hb */
  uint32_t max_graft_prune_per_heartbeat;   /* GRAFT+PRUNE entries handled per peer per hb */
  uint32_t max_pending_validations;         /* beyond: new messages are ignored */
  size_t max_pending_validation_bytes;      /* message bytes awaiting validation at most */
  uint32_t max_malformed_rpcs;              /* then the peer is disconnected (ABUSE) */
  /* scoring: topic params (applied to subscribed topics) and global params */
  ld_gs_topic_score_params_t topic_score;
  double topic_score_cap; /* 0 = no cap */
  double app_specific_weight;
  double ip_colocation_weight; /* <= 0 */
  uint32_t ip_colocation_threshold;
  double behaviour_penalty_weight; /* <= 0 */
  double behaviour_penalty_decay;
  double behaviour_penalty_threshold;
  uint64_t decay_interval_ms;
  double decay_to_zero;
  uint64_t retain_score_ms;
  /* thresholds */
  double gossip_threshold;
  double publish_threshold;
  double graylist_threshold;
  double accept_px_threshold;
  double opportunistic_graft_threshold;
  bool disconnect_bad_peers; /* call `disconnect` for peers below the graylist threshold */
} ld_gs_params_t;

/* Fills `p` with nwaku's values (waku_relay/protocol.nim): D 6/4/8, D_score 6, D_out 3, D_lazy 6,
 * mcache 6/3, seen 2 min, fanout 1 min, prune backoff 1 min, unsubscribe backoff 5 s, flood
 * publish, 150 KiB RPC cap, nwaku's score weights and thresholds, disconnectBadPeers, IP
 * colocation threshold 5 (tests on one host raise it), caps as go/js use them. */
void ld_gs_params_nwaku(ld_gs_params_t *p);

/* Checks the invariants (d_lo <= d <= d_hi, d_out < d_lo and d_out <= d/2, mcache_gossip <=
 * mcache_len, heartbeat > 0, thresholds ordered, max_rpc_size >= 1024, ...). 0 or
 * LD_ERR_INVALID_ARG. */
int ld_gs_params_check(const ld_gs_params_t *p);

/* ---- callbacks ------------------------------------------------------------------------------ */

typedef struct ld_gs_callbacks {
  /* Required. One encoded RPC (protobuf, no length prefix), len <= max_rpc_size. The bytes are
   * valid only during the call. The adapter queues/writes them on the peer's outbound stream. */
  void (*send)(void *ud, ld_gs_peer_t peer, const uint8_t *rpc, size_t len);
  /* Optional (absent = accept everything). A new message on a subscribed topic awaits a
   * verdict: answer with ld_gs_router_validated(vid, ...) now or later. `topic`, `data` and `id`
   * are valid only during the call (copy what you keep). */
  void (*validate)(void *ud, uint64_t vid, ld_gs_peer_t from, const char *topic,
                   const uint8_t *data, size_t len, const uint8_t id[LD_GS_MSG_ID_LEN]);
  /* Optional. An accepted message on a subscribed topic (once per message ID within the seen
   * TTL). Not called for messages we publish ourselves. Pointers valid only during the call. */
  void (*deliver)(void *ud, const char *topic, const uint8_t *data, size_t len,
                  const uint8_t id[LD_GS_MSG_ID_LEN], ld_gs_peer_t from);
  /* Optional. Drop this peer's connection (graylisted or abusive). The router keeps the peer
   * until the adapter calls ld_gs_router_remove_peer; its RPCs are ignored meanwhile. */
  void (*disconnect)(void *ud, ld_gs_peer_t peer, int reason);
  /* Optional. A peer joined (`joined` true) or left our mesh of `topic` (topic health). */
  void (*mesh_changed)(void *ud, const char *topic, ld_gs_peer_t peer, bool joined);
} ld_gs_callbacks_t;

/* ---- lifecycle ------------------------------------------------------------------------------ */

typedef struct ld_gs_router ld_gs_router_t;

/* Creates a router. `p` and `cb` are copied; `ud` is passed to every callback. All randomness
 * (peer selection, shuffles) comes from a PRNG seeded with `seed`, so runs are reproducible.
 * NULL on invalid parameters (ld_gs_params_check), missing `send`, or out of memory. */
ld_gs_router_t *ld_gs_router_new(const ld_gs_params_t *p, const ld_gs_callbacks_t *cb, void *ud,
                                 uint64_t seed);
/* Frees everything; no callback is called. NULL is a no-op. */
void ld_gs_router_free(ld_gs_router_t *r);

/* ---- peers ---------------------------------------------------------------------------------- */

/* A pubsub peer whose stream protocol is `proto`; `outbound` = we dialed the connection; `ip`
 * (text, may be NULL) feeds the IP-colocation score. Sends it our subscriptions (hello). A peer
 * that reconnects within retain_score_ms gets its retained score back.
 * Errors: LD_ERR_EXISTS, LD_ERR_LIMIT (LD_GS_MAX_PEERS), LD_ERR_NOMEM. */
int ld_gs_router_add_peer(ld_gs_router_t *r, ld_gs_peer_t peer, ld_gs_proto_t proto, bool outbound,
                          const char *ip, uint64_t now_ms);
/* Forgets the peer (mesh, fanout, subscriptions, promises); its score is retained for
 * retain_score_ms. Pending validations of messages it sent still complete. Unknown peer: no-op. */
void ld_gs_router_remove_peer(ld_gs_router_t *r, ld_gs_peer_t peer, uint64_t now_ms);

/* Application-specific score (P5) of a peer. LD_ERR_NOT_FOUND for unknown peers. */
int ld_gs_router_set_app_score(ld_gs_router_t *r, ld_gs_peer_t peer, double score);

/* Direct (explicit) peers: always forwarded to, never grafted/pruned, GRAFT from them → PRUNE. */
int ld_gs_router_set_direct(ld_gs_router_t *r, ld_gs_peer_t peer, bool direct);

/* ---- input ---------------------------------------------------------------------------------- */

/* One RPC read from the peer (no length prefix). Errors, after which the adapter resets that
 * inbound stream: LD_ERR_TOO_LARGE (len > max_rpc_size), LD_ERR_BAD_PROTOBUF (malformed; the
 * peer gets a behaviour penalty and, after max_malformed_rpcs, the disconnect callback),
 * LD_ERR_NOT_FOUND (unknown peer). RPCs of graylisted peers are ignored (returns 0). Parts of an
 * RPC beyond the per-RPC caps are dropped and counted, not errors. */
int ld_gs_router_handle_rpc(ld_gs_router_t *r, ld_gs_peer_t peer, const uint8_t *rpc, size_t len,
                            uint64_t now_ms);

/* IDONTWANT (v1.2). A message of at least idontwant_eager_size bytes takes long enough to
 * transmit that an IDONTWANT sent at first sight, before validation, can stop copies a mesh peer
 * is about to send us: it goes out at once. For a message between idontwant_min_size and that
 * size the IDONTWANT is held while validation is pending: a verdict given in the same pass
 * forwards the message itself to every mesh peer that did not send it to us, which tells them as
 * much a few microseconds later, and saves each peer a wake-up and a write (the peers whose copies
 * arrived meanwhile are skipped too). When validation will take longer (an asynchronous
 * validator), the adapter calls this for `vid`: the held IDONTWANT goes at once to the mesh peers
 * that have not sent us the message. Unknown `vid` or nothing held: no-op. */
void ld_gs_router_validation_deferred(ld_gs_router_t *r, uint64_t vid);

/* The verdict for a message announced by `validate`. Accept: deliver, forward to the mesh (and to
 * floodsub/direct subscribers) except the peers that sent it, add to the message cache. Reject:
 * drop, P4 to every peer that delivered it while it was pending. Ignore: drop, no penalty.
 * Verdicts never given are taken as Ignore after seen_ttl_ms. Unknown `vid` (already answered):
 * no-op. */
void ld_gs_router_validated(ld_gs_router_t *r, uint64_t vid, ld_gs_verdict_t v, uint64_t now_ms);

/* Runs the heartbeat: mesh maintenance, fanout expiry, gossip emission, score decay, promise
 * checks, cache shifts. Call it when now_ms >= ld_gs_router_next_deadline(). */
void ld_gs_router_heartbeat(ld_gs_router_t *r, uint64_t now_ms);

/* Absolute time (same clock as now_ms) of the next heartbeat: the last heartbeat's now_ms plus
 * heartbeat_ms; 0 before the first heartbeat (the adapter then waits heartbeat_initial_ms). */
uint64_t ld_gs_router_next_deadline(const ld_gs_router_t *r);

/* ---- local actions -------------------------------------------------------------------------- */

/* Subscribe: announce to all peers, join the mesh (GRAFT up to D peers, fanout peers first).
 * LD_ERR_EXISTS when already subscribed, LD_ERR_INVALID_ARG for an empty/too long topic. */
int ld_gs_router_subscribe(ld_gs_router_t *r, const char *topic, uint64_t now_ms);
/* Unsubscribe: announce, PRUNE the mesh with the unsubscribe backoff. LD_ERR_NOT_FOUND when not
 * subscribed. */
int ld_gs_router_unsubscribe(ld_gs_router_t *r, const char *topic, uint64_t now_ms);
bool ld_gs_router_subscribed(const ld_gs_router_t *r, const char *topic);

/* Publishes `data` on `topic` (StrictNoSign). Returns the number of peers it was sent to (>= 0);
 * LD_ERR_EXISTS when a message with the same ID was seen already, LD_ERR_TOO_LARGE when the RPC
 * would exceed max_rpc_size, LD_ERR_INVALID_ARG for an empty topic. The message goes into the
 * message cache and the seen cache, unless there is no peer to publish it to (0, as nim-libp2p:
 * the same message can be published again once there are peers); `deliver` is not called for it
 * (ld_gs_msg_id gives its ID). */
int ld_gs_router_publish(ld_gs_router_t *r, const char *topic, const uint8_t *data, size_t len,
                         uint64_t now_ms);
/* ld_gs_router_publish with the message's ID already computed: `id` must be ld_gs_msg_id of
 * `data` (NULL: computed here), so that a caller that needs the ID too hashes the data once. */
int ld_gs_router_publish_id(ld_gs_router_t *r, const char *topic, const uint8_t *data, size_t len,
                            const uint8_t id[LD_GS_MSG_ID_LEN], uint64_t now_ms);

/* How many peers a message this router has seen on `topic` reached: one we published (the
 * peers it was sent to), one we received and accepted (the peers that delivered it before it was
 * validated, and those it was forwarded to or that said IDONTWANT), or one we received and are
 * still validating (the peers that delivered it so far: they have it whatever our verdict).
 * Returns that count (≥ 0, at most 65535) while the ID is in the seen cache (seen_ttl_ms);
 * LD_ERR_NOT_FOUND when it is not, or was seen on another topic, or was rejected or ignored;
 * LD_ERR_INVALID_ARG for NULL arguments. */
int ld_gs_router_seen_reach(const ld_gs_router_t *r, const char *topic,
                            const uint8_t id[LD_GS_MSG_ID_LEN], uint64_t now_ms);

/* Computes the message ID (SHA-256 of data). */
void ld_gs_msg_id(const uint8_t *data, size_t len, uint8_t id[LD_GS_MSG_ID_LEN]);

/* ---- introspection (health, metrics, tests) -------------------------------------------------- */

typedef struct ld_gs_topic_stats {
  uint64_t msgs_in, bytes_in;   /* messages received (incl. duplicates) */
  uint64_t msgs_out, bytes_out; /* message copies sent (publish, forward, IWANT answers) */
  uint64_t published;
  uint64_t delivered;
  uint64_t duplicates;
  uint64_t accepted, rejected, ignored; /* validation results */
} ld_gs_topic_stats_t;

typedef struct ld_gs_stats {
  uint64_t rpcs_in, rpcs_out, rpc_bytes_in, rpc_bytes_out;
  uint64_t rpcs_malformed;      /* decode errors */
  uint64_t rpcs_too_large;      /* inbound over max_rpc_size */
  uint64_t rpcs_graylisted;     /* ignored: sender below the graylist threshold */
  uint64_t msgs_invalid_sign;   /* StrictNoSign violations */
  uint64_t msgs_unsubscribed;   /* messages for topics we do not subscribe to */
  uint64_t validations_dropped; /* pending-validation cap hit */
  uint64_t ctrl_dropped;        /* control entries / ids / messages dropped by the caps */
  uint64_t ihave_in, iwant_in, graft_in, prune_in, idontwant_in; /* entries handled */
  uint64_t ihave_out, iwant_out, graft_out, prune_out, idontwant_out;
  uint64_t iwant_served;      /* message copies sent in answer to IWANT */
  uint64_t broken_promises;   /* P7 for IWANTs not fulfilled in time */
  uint64_t idontwant_skipped; /* sends suppressed by IDONTWANT */
  uint64_t disconnects;       /* disconnect callbacks */
  uint64_t peers;             /* current number of peers */
} ld_gs_stats_t;

/* Router-wide counters (copied into *out). */
void ld_gs_router_stats(const ld_gs_router_t *r, ld_gs_stats_t *out);
/* Counters of one topic; LD_ERR_NOT_FOUND if the router does not track it (a topic nobody
 * subscribes to, publishes to or backs off on is forgotten at the next heartbeat). */
int ld_gs_router_topic_stats(const ld_gs_router_t *r, const char *topic, ld_gs_topic_stats_t *out);

/* Mesh size of a topic (0 when not subscribed). */
size_t ld_gs_router_mesh_size(const ld_gs_router_t *r, const char *topic);
/* Writes up to `cap` mesh peers of `topic` into `out`; returns the total mesh size. */
size_t ld_gs_router_mesh_peers(const ld_gs_router_t *r, const char *topic, ld_gs_peer_t *out,
                               size_t cap);
/* Writes up to `cap` peers subscribed to `topic` into `out`; returns their total number. */
size_t ld_gs_router_topic_peers(const ld_gs_router_t *r, const char *topic, ld_gs_peer_t *out,
                                size_t cap);
/* Whether `peer` is in our mesh of `topic`. */
bool ld_gs_router_in_mesh(const ld_gs_router_t *r, const char *topic, ld_gs_peer_t peer);
/* Current score of a connected peer (0 for unknown peers). */
double ld_gs_router_peer_score(const ld_gs_router_t *r, ld_gs_peer_t peer, uint64_t now_ms);
/* Number of peers currently known. */
size_t ld_gs_router_peer_count(const ld_gs_router_t *r);
/* Writes up to `cap` subscribed topics (borrowed strings, valid until the next unsubscribe or
 * heartbeat) into `out`; returns the number subscribed. */
size_t ld_gs_router_topics(const ld_gs_router_t *r, const char **out, size_t cap);

#endif
