/* A node: the switch with the protocols mounted in nwaku's order, its lifecycle, its addresses,
 * the broker and the subscription fan-out. The program and the C library both assemble nodes
 * through this module.
 *
 * Start-up (ld_node_start), in nwaku's order:
 *   identify and ping → metadata (/vac/waku/metadata/1.0.0, cluster gating) → relay (gossipsub
 *   on /vac/waku/relay/2.0.0 plus the meshsub IDs, the --shard / --content-topic subscriptions,
 *   the relay's fan-out hook) → listening → static peers and configured service nodes
 *   (--storenode, --filternode, --lightpushnode: dialed now, redialed with back-off whenever not
 *   connected, as nwaku's connectivity loop does) → the peer manager and, with
 *   --discv5-discovery, discv5 (node/peer_manager.h; its UDP socket is bound before the ENR is
 *   built, which announces its port) → REST server → metrics server.
 * Later protocols (filter, archive, sync) plug into the fan-out (ld_node_fanout) at their stage;
 * store-sync (--store-sync, with --store) takes what the archive stage accepts, and advertises the
 * Sync capability (bit 4) in the node's ENR.
 *
 * Addresses: a node listening on 0.0.0.0 or :: announces (identify, REST, logs) the machine's
 * interface addresses with the bound port, never the unspecified address.
 *
 * A node lives on one libuv loop; every call must come from that loop's thread. Callbacks and
 * broker events come from the loop. */
#ifndef LD_NODE_NODE_H
#define LD_NODE_NODE_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "node/broker.h"
#include "node/config.h"
#include "node/fanout.h"
#include "node/static_peers.h"
#include "p2p/gossipsub/service.h"
#include "p2p/identify.h"
#include "p2p/multiaddr.h"
#include "p2p/peerstore.h"
#include "p2p/switch.h"
#include "rest/server.h"
#include "waku/core/message.h"
#include "waku/metadata/metadata.h"
#include "waku/archive/archive.h"
#include "waku/relay/relay.h"
#include "waku/nrs/nrs.h"
#include "waku/sync/service.h"
#include "waku/rln/validator.h"

/* Addresses announced at most (interfaces of an unspecified listen address included). */
#define LD_NODE_MAX_LISTEN_ADDRS 16

typedef struct ld_node ld_node_t;

/* Creates a node on `loop` from a validated configuration (copied; see
 * ld_node_config_finalize). Nothing listens yet. Returns NULL and sets *err (LD_ERR_NOMEM,
 * LD_ERR_INVALID_ARG) on failure. */
ld_node_t *ld_node_new(uv_loop_t *loop, const ld_node_config_t *cfg, int *err);

/* Mounts the protocols and starts listening, the static peers, REST and metrics (see above);
 * logs one "Listening on <multiaddr>/p2p/<id>" line per announced address. On failure the node
 * must still be stopped with ld_node_stop. Errors: LD_ERR_STATE (already started),
 * LD_ERR_ADDR_IN_USE (P2P, REST or metrics port), LD_ERR_IO, LD_ERR_NOMEM, … */
int ld_node_start(ld_node_t *node);

/* What kept the node from starting, or what failed after start (LD_EVENT_NODE_FAILURE): the
 * part, its error and what it was given, for a program to say what to change. Parts: "tcp" and
 * "websocket" (the listen multiaddr), "websocket-tls" (the key and certificate paths), "discv5"
 * (address:port), "rest" and "metrics" (address:port), "archive" (the reason; the URL is
 * cfg.store_db_url), "retention" (the reason), "rln" (the reason, naming the rln-relay option),
 * "peer-store" (the database path). The first failure is kept. NULL when nothing failed; valid
 * until ld_node_stop's `done`. */
typedef struct ld_node_failure {
  char part[24];
  int err;
  char what[512];
} ld_node_failure_t;
const ld_node_failure_t *ld_node_failure(const ld_node_t *node);

/* Stops everything: REST and metrics first, then the static peers, then every connection and
 * listener. Calls `done` (may be NULL) from the loop and frees the node. A second call is a no-op
 * (the first `done` is kept). Safe from inside broker listeners and fan-out handlers (the work
 * happens on the loop). */
void ld_node_stop(ld_node_t *node, void (*done)(void *user_data), void *user_data);

const ld_peerid_t *ld_node_peer_id(const ld_node_t *node);
const ld_node_config_t *ld_node_config(const ld_node_t *node);
/* The node's DNS discovery (--dns-discovery-url; node_dns.c): LD_ERR_AGAIN while it runs, 0 when
 * it ended well or there is none, else the named error that ended it (DNS_*, BAD_SIGNATURE) or
 * kept it from starting. *records (may be NULL): the records it found. */
int ld_node_dns_status(const ld_node_t *node, size_t *records);

/* Copies up to `max` announced listen addresses, each ending in /p2p/<peer id>; returns the
 * total. Before start (or when not listening) there are none. */
size_t ld_node_listen_addrs(const ld_node_t *node, ld_multiaddr_t *out, size_t max);

/* The parts, for the layers above and tests. Pointers stay valid until ld_node_stop's `done`.
 * Protocols are NULL before ld_node_start and when not mounted (relay with --relay=false). */
ld_switch_t *ld_node_switch(ld_node_t *node);
ld_broker_t *ld_node_broker(ld_node_t *node);
ld_fanout_t *ld_node_fanout(ld_node_t *node);
ld_peerstore_t *ld_node_peerstore(ld_node_t *node);
ld_identify_t *ld_node_identify(ld_node_t *node);
ld_metadata_t *ld_node_metadata(ld_node_t *node);
ld_relay_t *ld_node_relay(ld_node_t *node);
ld_gs_service_t *ld_node_gossipsub(ld_node_t *node);
/* Store-sync (--store-sync with --store) and the archive (--store; NULL once closed or when it
 * failed to open). */
ld_store_sync_t *ld_node_store_sync(ld_node_t *node);
/* The Network Reliability Service (--reliability-mode=p2p), or NULL. */
ld_nrs_t *ld_node_nrs(ld_node_t *node);
ld_archive_t *ld_node_archive(ld_node_t *node);
/* The engine keeping the static nodes (indices 0..n_static_nodes-1, in configuration order)
 * and then the configured service nodes that are not static nodes connected; NULL when there
 * are none. */
ld_static_peers_t *ld_node_static_peers(ld_node_t *node);

/* Writes the node's own ENR as "enr:…" text with a NUL and returns its length (cap ≥
 * LD_ENR_TEXT_MAX suffices); LD_ERR_LIMIT when `cap` is too small, LD_ERR_NOT_FOUND before the
 * record is built at start. */
int ld_node_enr_text(const ld_node_t *node, char *out, size_t cap);

/* The REST server while it runs (NULL without --rest), for layers that add route groups. */
ld_rest_server_t *ld_node_rest_server(ld_node_t *node);

/* Bound ports of the REST and metrics servers (0 when not running). */
uint16_t ld_node_rest_port(const ld_node_t *node);

/* When the node's first listening socket was bound (ld_now_ns clock), or 0 before that (or
 * without --listen). Loop thread. */
uint64_t ld_node_listening_ns(const ld_node_t *node);
uint16_t ld_node_metrics_port(const ld_node_t *node);

/* ---- relay conveniences ------------------------------------------------------------------- */

/* Subscribes relay to `pubsub_topic`; its messages go through the fan-out. Already subscribed
 * is 0. LD_ERR_UNSUPPORTED when relay is not mounted; errors of ld_relay_subscribe. */
int ld_node_subscribe(ld_node_t *node, const char *pubsub_topic);

/* Leaves `pubsub_topic`. Not subscribed is 0. LD_ERR_UNSUPPORTED when relay is not mounted. */
int ld_node_unsubscribe(ld_node_t *node, const char *pubsub_topic);

/* Publishes `msg` on `pubsub_topic` (NULL: the shard of its content topic by autosharding)
 * after relay's outgoing checks (size, protected shard). Returns the number of relay peers it was
 * sent to (0: nobody yet) and stores its deterministic hash in `hash` (may be NULL). Errors:
 * LD_ERR_UNSUPPORTED (relay not mounted, or autosharding off with a NULL topic),
 * LD_ERR_TOO_LARGE, LD_ERR_BAD_SIGNATURE (protected shard), LD_ERR_INVALID_ARG (another refusal
 * by the outgoing checks), and the errors of ld_relay_publish.
 * With --rln-relay the message is first proved on libuv's thread pool, so that the loop keeps
 * serving meanwhile: the call returns once the message is checked and queued (the number of
 * relay peers on the topic, which the message will be sent to), and it is
 * published when its proof is ready, after the node's earlier messages (a failure then is
 * logged; ld_node_publish_async reports it). Its own errors come at once: LD_ERR_STATE (no
 * credentials, or the node stops), LD_ERR_LIMIT (this epoch's message ids are used up: nwaku's
 * NonceLimitReached). A message stale at entry or when its proof starts is stamped again (see
 * ld_node_publish_async): `hash` is the message's hash at entry. */
int ld_node_publish(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                    uint8_t hash[LD_WAKU_HASH_LEN]);

/* Returned by ld_node_publish_async when the outcome comes later, to its callback. */
#define LD_NODE_PUBLISH_LATER (-1000001)

/* The outcome of a publish that waited for its RLN proof: `result` is the number of relay peers
 * the message went to (0: none) or the error: LD_ERR_LIMIT (stamped again as its proof started,
 * in an epoch whose message ids were used up meanwhile: nwaku's NonceLimitReached), LD_ERR_STATE
 * (the credentials went), the proof's or relay's error, LD_ERR_CANCELED (the node stopped first).
 * `msg` (its final timestamp and its proof) and `hash` (its Waku hash on `pubsub_topic`) are the
 * message as it was published, valid during the call; NULL when result < 0. Called once, on the
 * loop. */
typedef void (*ld_node_published_fn)(void *user_data, int result, const char *pubsub_topic,
                                     const ld_waku_message_t *msg,
                                     const uint8_t hash[LD_WAKU_HASH_LEN]);
typedef struct ld_node_publish_call ld_node_publish_call_t;

/* ld_node_publish whose result is known only once the message went out. Without --rln-relay
 * (and for every error found at once) it is ld_node_publish_hashed's result, returned at once
 * (`hash`, may be NULL, as there: the caller's hash of `msg`), and `done` is never called. With
 * --rln-relay a message that passed the checks is queued for its proof and
 * LD_NODE_PUBLISH_LATER is returned: `done`(user_data, ...) gets the outcome once the message
 * was proved and handed to relay, or failed; never from inside this call. The message is stamped
 * with the current time again when its timestamp is stale as its proof starts (its RLN epoch
 * ended, or it waited longer than a few seconds), so that validators never refuse it as
 * invalid_timestamp: its Waku hash is then another one than at submission, and the one `done`
 * reports is final. `*call` (may be NULL) identifies the publish for ld_node_publish_detach until
 * `done` is called. */
int ld_node_publish_async(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                          const uint8_t hash[LD_WAKU_HASH_LEN], ld_node_published_fn done,
                          void *user_data, ld_node_publish_call_t **call);
/* The caller of a publish that still waits goes away: its message is still published, and its
 * `done` is not called. */
void ld_node_publish_detach(ld_node_publish_call_t *call);

/* ld_node_publish of a message whose Waku hash on `pubsub_topic` (not NULL) the caller computed
 * already: `hash` (not NULL) is ld_waku_message_hash(pubsub_topic, msg) and is not computed again
 * when `msg` carries a timestamp. Same results and errors as ld_node_publish. */
int ld_node_publish_hashed(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                           const uint8_t hash[LD_WAKU_HASH_LEN]);

/* RLN-relay's validator statistics (waku/rln/validator.h), NULL without --rln-relay. */
const ld_rln_validator_stats_t *ld_node_rln_stats(const ld_node_t *node);
/* Our messages waiting for their RLN proof or being proved (0 without --rln-relay). */
size_t ld_node_rln_pending(const ld_node_t *node);

#endif
