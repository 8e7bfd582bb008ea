/* Internals shared by the node's files (node.c, node_addrs.c, node_static.c, node_servers.c).
 * Not for other modules. */
#ifndef LD_NODE_NODE_INTERNAL_H
#define LD_NODE_NODE_INTERNAL_H

#include "base/hashmap.h"
#include "metrics/metrics.h"
#include "metrics/node_metrics.h"
#include "metrics/server.h"
#include "metrics/service_metrics.h"
#include "node/node.h"
#include "rest/server.h"
#include "waku/archive/archive.h"
#include "waku/core/topics.h"
#include "waku/enr/cache.h"
#include "waku/enr/enr.h"
#include "waku/filter/client.h"
#include "waku/filter/server.h"
#include "waku/lightpush/server.h"
#include "waku/peer_exchange/peer_exchange.h"
#include "waku/store/server.h"
#include "waku/nrs/nrs.h"
#include "waku/sync/service.h"
#include "waku/rln/proof.h"
#include "waku/rln/publish.h"

/* ENRs of other peers the node keeps (peer exchange answers from them). */
#define LD_NODE_ENR_CACHE 1000
/* Peer-exchange requests the node makes at once to learn ENRs. */
#define LD_NODE_PX_MAX_INFLIGHT 4
/* An own message waited for by ld_node_await_archived that has not reached the archive stage
 * (relay left the topic meanwhile) is given up after this long. */
#define LD_NODE_ARCHIVE_WAIT_MS 10000

typedef enum node_state {
  NODE_NEW = 0,
  NODE_STARTED,
  NODE_STOPPING,
} node_state_t;

typedef struct node_pm node_pm_t;         /* peer_manager.c */
typedef struct node_discv5 node_discv5_t; /* node_discv5.c */

/* What a static-peer dial callback needs to find its way back. */
typedef struct node_static_dial {
  ld_node_t *node;
  size_t index;
} node_static_dial_t;

struct ld_node {
  uv_loop_t *loop;
  ld_node_config_t cfg;
  ld_privkey_t key;
  ld_peerid_t peer_id;
  node_state_t state;

  ld_switch_t *sw;
  ld_peerstore_t *peerstore;
  ld_identify_t *identify;
  ld_metadata_t *metadata;
  ld_gs_service_t *gs;
  ld_relay_t *relay;
  ld_broker_t *broker;
  ld_fanout_t *fanout;
  int broker_stage; /* fan-out handle of the broker stage */

  ld_multiaddr_t announced[LD_NODE_MAX_LISTEN_ADDRS]; /* transport addresses, without /p2p */
  size_t n_announced;

  /* The peers the static-peer engine keeps connected, in its order: the static nodes, then each
   * configured service node that is not one of them (by peer ID). */
  ld_multiaddr_t kept[LD_STATIC_PEERS_MAX];
  const char *kept_role[LD_STATIC_PEERS_MAX]; /* for logs: "static peer", "store node", … */
  size_t n_kept;
  ld_static_peers_t *statics;
  node_static_dial_t static_dials[LD_STATIC_PEERS_MAX];
  uv_timer_t static_timer;
  bool static_timer_init;

  ld_rest_server_t *rest;
  int rest_stage; /* fan-out handle feeding REST's relay cache, 0 when not added */
  ld_metrics_t *metrics_reg;
  ld_node_metrics_t *node_metrics;
  ld_service_metrics_t *service_metrics;
  ld_metrics_server_t *metrics_srv;
  /* the status page (node_status.c) */
  uint64_t started_ms;                       /* ld_node_start (ld_now_ms) */
  uint64_t listening_ns;                     /* the first listen (ld_now_ns); 0 before */
  struct node_status_count *status_counting; /* archive count under way for the page */
  uint64_t status_counted_ms;
  uint64_t status_stored;
  bool status_has_stored;

  ld_hashmap_t *peer_conns; /* peer ID bytes → live connection count (uintptr_t) */

  ld_archive_t *archive; /* from the mount on (it takes work while it opens); NULL once gone */
  struct archive_wait *archive_waits; /* own messages waited for by ld_node_await_archived */
  bool archive_opening;
  int archive_stage; /* fan-out handles, 0 when not added */
  int filter_stage;
  ld_store_server_t *store;
  ld_store_sync_t *store_sync; /* --store-sync with --store */
  ld_nrs_t *nrs;               /* --reliability-mode=p2p (node_nrs.c) */
  int nrs_stage;               /* its fan-out handle, 0 when not added */
  int64_t nrs_listeners[2];    /* its broker listeners */
  ld_lightpush_server_t *lightpush;
  ld_filter_server_t *filter;
  ld_px_server_t *px;
  ld_filter_client_t *filter_client; /* REST's filter client of --filternode */
  ld_enr_cache_t *enr_cache;
  /* our peer-exchange requests under way (handle and callback context per slot) */
  ld_px_call_t *px_calls[LD_NODE_PX_MAX_INFLIGHT];
  void *px_asks[LD_NODE_PX_MAX_INFLIGHT];
  ld_enr_t enr; /* our own record, when has_enr */
  bool has_enr;
  struct node_nat *nat;         /* node_nat.c: port mapping state, or NULL */
  struct node_rln *rln;         /* node_rln.c: RLN-relay with --rln-relay, or NULL */
  struct ld_dns_discovery *dns; /* node_dns.c: the DNS discovery under way, or NULL */
  size_t dns_discovered;        /* records DNS discovery found */
  int dns_status;               /* how the last DNS discovery ended (0: fine or none) */

  node_pm_t *pm;     /* the peer manager (peer_manager.c), from start until stopped */
  node_discv5_t *d5; /* discv5 (node_discv5.c), with --discv5-discovery */

  uv_timer_t stop_defer; /* closed at once: moves the switch close to a later loop turn */
  unsigned pending;      /* closes under way before the switch may close */
  void (*stopped)(void *user_data);
  void *stopped_data;

  /* node_rln_publish.c: our messages waiting for their RLN proofs, or NULL */
  struct node_rln_queue *rln_queue;
  ld_node_failure_t failure; /* node_failure.c: the first part that failed, part "" when none */
};

/* node_failure.c: records that `part` failed with `err` on `what` (ld_node_failure); the first
 * record is kept. Logs nothing: the caller logs its own line. */
void ld_node_note_failure(ld_node_t *node, const char *part, int err, const char *what);

/* node_addrs.c: fills node->announced from the switch's bound addresses, expanding 0.0.0.0 and
 * :: into the interface addresses; tells identify. */
int ld_node_announce_addrs(ld_node_t *node);

/* node_static.c: starts the static-peer engine and its timer over the static nodes and the
 * configured service nodes (no-op without any). */
int ld_node_static_start(ld_node_t *node);
/* Connection events for the engine. */
void ld_node_static_conn(ld_node_t *node, const ld_peerid_t *peer, bool up);
/* Closes the timer (counts in node->pending; calls ld_node_pending_done). */
void ld_node_static_stop(ld_node_t *node);

/* node_nat.c: --nat port mappings (UPnP, NAT-PMP) in the thread pool, started once the node
 * listens; stop removes the mapping (counts in node->pending while it does). Rewrite replaces the
 * hosts of node->announced by the public one and adds --ext-multiaddr (ld_node_announce_addrs
 * calls it). */
typedef struct node_nat node_nat_t;
int ld_node_nat_start(ld_node_t *node);
void ld_node_nat_stop(ld_node_t *node);
void ld_node_nat_rewrite_addrs(ld_node_t *node);

/* node_dns.c: starts DNS discovery of --dns-discovery-url (no-op without one; a start failure is
 * logged, not returned); its records' peers are dialed (origin "dns"). Stop cancels it. */
int ld_node_dns_start(ld_node_t *node);
void ld_node_dns_stop(ld_node_t *node);

/* node_services.c: the pubsub topics of the node's shards (/waku/2/rs/<cluster>/<shard>, as
 * many as cfg->n_shards), and its protected shards (cfg->n_protected_shards of them into `out`),
 * as store-sync and the Network Reliability Service take them. */
typedef struct ld_node_shard_topics {
  char text[LD_NODE_MAX_SHARDS][LD_WAKU_PUBSUB_TOPIC_MAX_LEN + 1];
  const char *list[LD_NODE_MAX_SHARDS];
} ld_node_shard_topics_t;
void ld_node_shard_topics(const ld_node_config_t *c, ld_node_shard_topics_t *out);
void ld_node_protected_shards(const ld_node_config_t *c, ld_relay_protected_shard_t *out);

/* node_nrs.c: the Network Reliability Service with --reliability-mode=p2p (after store-sync's
 * mount: not beside it); stop before the switch closes, free after. */
int ld_node_nrs_mount(ld_node_t *node);
void ld_node_nrs_stop(ld_node_t *node);
void ld_node_nrs_free(ld_node_t *node);

/* node_servers.c: REST and metrics. */
int ld_node_servers_start(ld_node_t *node);
/* Closes both servers (counts in node->pending). */
void ld_node_servers_stop(ld_node_t *node);
/* Frees what the servers left (registry, collectors) once they are closed. */
void ld_node_servers_free(ld_node_t *node);

/* node_status.c: what the REST status page reads of the node (rest/status.h). */
void ld_node_status_ops(ld_node_t *node, ld_rest_status_ops_t *out);
/* Detaches a count under way (its answer is then dropped). */
void ld_node_status_stop(ld_node_t *node);

/* node_services.c: archive + store (and store-sync), lightpush, filter, peer exchange (as
 * configured). */
int ld_node_services_mount(ld_node_t *node);
/* With --peer-exchange, asks a newly identified peer that serves peer exchange for the records
 * it knows and keeps them in the ENR cache our own peer-exchange service answers from (with no
 * discovery mounted, this is where the records come from). */
void ld_node_px_learn(ld_node_t *node, ld_conn_t *c, const ld_identify_info_t *info);
/* Builds the node's ENR from its key, announced addresses, capabilities and shards. */
int ld_node_build_enr(ld_node_t *node);
/* Calls done(done_data) once the node's own message `msg`, just published on `pubsub_topic`, has
 * gone through the archive stage and been written (or refused, or its write failed): the REST
 * publish answers after it, as nwaku archives inside the publish call, so that a store query
 * sent after the answer finds the message. Returns 0 (then `done` is called exactly once, from
 * the loop, never from inside this call; a message that never reaches the archive stage is given
 * up at the first message after LD_NODE_ARCHIVE_WAIT_MS, or when the node stops), or
 * LD_ERR_NOT_FOUND when there is nothing to wait for (no archive, or
 * relay does not deliver the topic to the fan-out), LD_ERR_INVALID_ARG (no timestamp: the hash
 * is not final), LD_ERR_NOMEM; then `done` is never called. */
int ld_node_await_archived(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                           void (*done)(void *done_data), void *done_data);
/* Removes the fan-out stages and closes the archive (counts in node->pending). */
void ld_node_services_stop(ld_node_t *node);
/* Frees the protocol services once the switch is closed. */
void ld_node_services_free(ld_node_t *node);

/* node_rest_services.c: fills REST's service operation tables; *has_lightpush / *has_filter
 * tell whether those groups are served (store always is, answering 412 without a store). */
int ld_node_rest_services(ld_node_t *node, ld_rest_lightpush_ops_t *lp, ld_rest_filter_ops_t *fo,
                          ld_rest_store_ops_t *so, bool *has_lightpush, bool *has_filter);

/* peer_manager.c: starts the peer manager (after listening and the static peers); stop closes its
 * timers (counts in node->pending) and frees it. Identify results go to it. */
int ld_node_pm_start(ld_node_t *node);
void ld_node_pm_stop(ld_node_t *node);
void ld_node_pm_identified(ld_node_t *node, ld_conn_t *c, const ld_identify_info_t *info);
/* node_discv5.c: binds the UDP socket (before the ENR is built: it announces the port), starts
 * the engine (ld_node_discv5_start, peer_manager.h) and frees what is left at the end. */
int ld_node_discv5_open(ld_node_t *node);
void ld_node_discv5_free(ld_node_t *node);

/* One close under way finished; when none is left the switch is closed. */
void ld_node_pending_done(void *node);

/* node_rln.c: RLN-relay with a static group (--rln-relay). Mount (after relay is created) reads
 * the group and the credentials and adds the validator to relay: 0 without --rln-relay, else the
 * first error (logged with its cause). Prepare copies `in` to `out` and, with RLN-relay mounted,
 * sets a missing timestamp and attaches a proof (written to `proof`, which `out` points into):
 * LD_ERR_STATE without credentials, LD_ERR_LIMIT when this epoch's message ids are used up
 * (nwaku's NonceLimitReached). */
typedef struct node_rln node_rln_t;
int ld_node_rln_mount(ld_node_t *node);
void ld_node_rln_free(ld_node_t *node);
/* Stops following the on-chain group (counts in node->pending while its handles close). */
void ld_node_rln_stop(ld_node_t *node);
int ld_node_rln_prepare(ld_node_t *node, const ld_waku_message_t *in, ld_waku_message_t *out,
                        uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED]);
/* What proving one of our messages needs, taken on the loop: the prover (immutable, usable from
 * any thread), a copy of our membership, the epoch length and the message id the nonce manager
 * handed out for the message's epoch. */
typedef struct ld_node_rln_claim {
  const ld_rln_prover_t *prover;
  ld_rln_member_t member;
  uint64_t epoch_sec;
  uint64_t message_id;
} ld_node_rln_claim_t;
/* Sets a missing timestamp of `msg` and claims the next message id of its epoch: 0 with
 * out->prover NULL without RLN-relay (publish as is), 0 with the claim filled, LD_ERR_STATE
 * without credentials, LD_ERR_LIMIT when the epoch's ids are used up. The caller wipes
 * out->member after use. */
int ld_node_rln_claim(ld_node_t *node, ld_waku_message_t *msg, ld_node_rln_claim_t *out);

/* node_rln_publish.c: publishing with RLN proofs made on libuv's thread pool, so that the loop
 * keeps serving while a proof is computed (a third of a second). Publish checks the message (RLN
 * claim, relay's outgoing checks with a proof of the final size), writes its hash and queues it:
 * the number of relay peers on the topic (what the publish will reach, 0: none yet), or the
 * error at once (LD_ERR_STATE, LD_ERR_LIMIT, LD_ERR_NOMEM, or the outgoing check's
 * reason in *reason when not NULL, with LD_ERR_TOO_LARGE / LD_ERR_BAD_SIGNATURE /
 * LD_ERR_INVALID_ARG). The queued messages are proved one at a time and published in the order
 * they were queued, each as soon as its proof is ready; a failure then is logged. Stop drops
 * what is still queued and waits for the proof under way (counts in node->pending); free
 * releases the queue. Pending counts the messages queued or being proved. */
/* With `done` (ld_node_publish_async's contract): LD_NODE_PUBLISH_LATER instead of the peer
 * count, the outcome to `done` (the job in *call, may be NULL), and a message stamped again as its
 * proof starts reported with its final timestamp and hash. Our messages are stamped again when
 * stale (LD_NODE_RLN_RESTAMP_AFTER_MS, node_rln_publish.h); `hash` is the one at entry. */
int ld_node_rln_publish(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                        uint8_t hash[LD_WAKU_HASH_LEN], ld_relay_reason_t *reason,
                        ld_node_published_fn done, void *user_data, ld_node_publish_call_t **call);
void ld_node_rln_publish_stop(ld_node_t *node);
void ld_node_rln_publish_free(ld_node_t *node);
/* A light client's message proved by the queue: rc 0 and `msg` (its proof attached; valid during
 * the call) on `pubsub_topic`, or the proof's error and NULL (LD_ERR_CANCELED when the node
 * stops first). Called once, on the loop. */
typedef void (*ld_node_rln_proved_fn)(void *user_data, int rc, const char *pubsub_topic,
                                      const ld_waku_message_t *msg);
/* Queues `msg` (copied, its timestamp set; any proof ignored) to be proved with `claim` (copied;
 * the caller wipes its own) in turn with the node's messages; `proved` gets it instead of relay.
 * 0, or LD_ERR_NOMEM / LD_ERR_STATE (stopping), and then `proved` is never called. */
int ld_node_rln_prove_for(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                          const ld_node_rln_claim_t *claim, ld_node_rln_proved_fn proved,
                          void *user_data);
/* node_rln_publish.c: keeps the publish queue's proving context warm for our membership (a
 * member node: at start, and whenever our Merkle path or the root changed): the context is made
 * (tables deferred, built in the queue's idle time) and, when no proof waits, a prepare job
 * brings its cached sums to our membership as ld_node_rln_membership gives it then, so that the
 * next publish's proof reuses them. Loop thread. */
void ld_node_rln_publish_warm(ld_node_t *node, const ld_rln_prover_t *prover);
/* node_rln.c: our membership as a proof would claim it now (prover and a copy of the member, to
 * be wiped by the caller): 0, or LD_ERR_STATE without credentials or while the on-chain group
 * has not given us a valid Merkle proof yet. */
int ld_node_rln_membership(const ld_node_t *node, const ld_rln_prover_t **prover,
                           ld_rln_member_t *member);
/* node_rln.c: the static group gains a member at run time (an embedder that learns members out
 * of band; tests): `rate_commitment` becomes the next leaf, the new root joins the validator's
 * window, and a member node's Merkle path is updated and its proving context prepared for it.
 * Its index in *index (may be NULL). LD_ERR_STATE without RLN-relay or with the on-chain group,
 * LD_ERR_LIMIT when the tree is full. */
int ld_node_rln_group_add(ld_node_t *node, const ld_fr_t *rate_commitment, uint64_t *index);
/* The relay outgoing check's reason as an error code (node.c). */
int ld_node_outgoing_error(ld_relay_reason_t reason);
/* ld_node_rln_prepare with nwaku's appendRLNProof error text in `why` (why_len bytes, NULL: no
 * text): "could not get new message id to generate an rln proof: NonceLimitReached: …" for
 * LD_ERR_LIMIT, "could not generate rln-v2 proof: identity credentials are not set" for
 * LD_ERR_STATE, "could not generate rln-v2 proof: <error>" otherwise. The validator: NULL
 * without RLN-relay (loop thread only, as the node). */
int ld_node_rln_attach(ld_node_t *node, const ld_waku_message_t *in, ld_waku_message_t *out,
                       uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED], char *why,
                       size_t why_len);
ld_rln_validator_t *ld_node_rln_validator(const ld_node_t *node);
/* nwaku's appendRLNProof text (as ld_node_rln_attach writes it) of `rc` from ld_node_rln_claim
 * (`requested` its message_id) or from the proof; returns rc. */
int ld_node_rln_why(const ld_node_t *node, int rc, uint64_t requested, char *why, size_t why_len);
/* The RLN hook of store-sync's and the reliability service's transfer ingress (ingress.h check
 * 7): with RLN-relay mounted, ld_rln_sync_accept on the node's validator (a transferred message
 * passes the same proof checks as one arriving by relay, without the clock gap and nullifier
 * log an old message cannot meet); without it NULL (accept). */
void ld_node_sync_rln_hook(const ld_node_t *node, ld_sync_rln_fn *fn, void **ctx);
/* node_lightpush.c: the lightpush service's publish callback (ld_lightpush_publish_later_fn, ctx
 * the node): with RLN-relay mounted, proofs for light clients' messages (made off the loop, the
 * push answered when the message is published) and relay's RLN validation before publishing, as
 * nwaku; without it, ld_lightpush_relay_publish on the node's relay. */
int ld_node_lightpush_publish(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg,
                              ld_lightpush_reply_t *reply, char *why, size_t why_len);
/* nwaku's RLN metric families (waku_rln_messages_total, waku_rln_spam_messages_total,
 * waku_rln_invalid_messages_total{type}, waku_rln_valid_messages_total,
 * waku_rln_proof_verification_total, waku_rln_proof_verification_duration_seconds) collected from
 * the validator's statistics; nothing without RLN-relay. Errors as ld_metrics_add_collector. */
int ld_node_rln_register_metrics(ld_node_t *node, ld_metrics_t *reg);

#endif
