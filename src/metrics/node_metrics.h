/* The node's metrics, under nwaku's (and nim-libp2p's) names where they exist, collected at
 * scrape time from the stats getters of the layers below:
 *
 *   waku_version{version}                              gauge, always 1
 *   libp2p_peers                                       gauge: distinct connected peers
 *   waku_connected_peers{direction,protocol}           gauge: connected peers per direction
 *                                                      ("In"/"Out") and Waku protocol
 *                                                      ("/vac/waku/…" known in the peer store)
 *   waku_connected_peers_per_agent{agent}              gauge
 *   waku_connected_peers_per_shard{shard}              gauge: our shards (needs metadata)
 *   waku_peer_store_size                               gauge
 *   libp2p_pubsub_peers                                gauge (needs the gossipsub router)
 *   libp2p_pubsub_topics                               gauge: subscribed topics
 *   libp2p_gossipsub_peers_per_topic_mesh{topic}       gauge: mesh size per subscribed topic
 *   libp2p_gossipsub_peers_per_topic_gossipsub{topic}  gauge: peers subscribed to the topic
 *   libp2p_pubsub_validation_success_total             counter
 *   libp2p_pubsub_validation_failure_total             counter
 *   libp2p_pubsub_validation_ignore_total              counter
 *   libp2p_gossipsub_received_total                    counter: messages, duplicates excluded
 *   libp2p_gossipsub_duplicate_total                   counter
 *   libp2p_gossipsub_bad_score_disconnection_total     counter
 *   libp2p_pubsub_messages_published_total{topic}      counter
 *   waku_relay_messages_total{topic,direction}         counter: message copies in ("in",
 *                                                      duplicates included) and out ("out")
 *   waku_relay_network_bytes_total{topic,type,direction} counter: data + topic bytes, as
 *                                                      nwaku: "gross"/"in" (every message
 *                                                      received), "net"/"out" (every copy
 *                                                      sent) and, with the relay, "net"/"in"
 *                                                      (valid messages delivered)
 *   waku_relay_total_msg_bytes_per_shard{shard}        gauge: payload bytes seen (needs the
 *   waku_relay_max_msg_bytes_per_shard{shard}          relay; `shard` is the pubsub topic, as
 *   waku_relay_avg_msg_bytes_per_shard{shard}          nwaku labels it)
 *   waku_msg_validator_signed_outcome_total{result}    counter: protected-shard verdicts
 *                                                      ("Accept", "Reject"; needs the relay)
 *   waku_node_messages_total{type="relay"}             counter: messages handed to the node's
 *                                                      subscribers (received and published)
 *   waku_relay_message_latency_seconds                 histogram: now minus the timestamp of
 *                                                      each valid message received from a peer
 *                                                      (buckets 0.25 ms … 5 s, relay.h; needs
 *                                                      the relay)
 *
 * Per-topic counters cover every topic the router has had since the collector first saw it
 * subscribed (at most LD_NODE_METRICS_MAX_TOPICS), so they keep counting after an
 * unsubscription instead of going down. */
#ifndef LD_METRICS_NODE_METRICS_H
#define LD_METRICS_NODE_METRICS_H

#include "metrics/metrics.h"
#include "p2p/gossipsub/router.h"
#include "p2p/peerstore.h"
#include "p2p/switch.h"
#include "waku/metadata/metadata.h"
#include "waku/relay/relay.h"

#define LD_NODE_METRICS_MAX_TOPICS 256
#define LD_NODE_METRICS_MAX_CONNS 4096 /* connections looked at per scrape */

/* Where the figures come from. Every pointer is borrowed and must stay valid until
 * ld_node_metrics_free (or until replaced); NULL sources leave their metrics without samples. */
typedef struct ld_node_metrics_sources {
  ld_switch_t *sw;
  ld_peerstore_t *peerstore;
  ld_metadata_t *metadata;
  ld_gs_router_t *router; /* the relay's gossipsub router */
  const char *version;    /* copied; NULL: "v" LD_VERSION */
} ld_node_metrics_sources_t;

typedef struct ld_node_metrics ld_node_metrics_t;

/* Registers the families above in `reg` (borrowed; must outlive the object). Loop thread only.
 * Returns NULL on allocation failure or when the names are already registered. */
ld_node_metrics_t *ld_node_metrics_new(ld_metrics_t *reg, const ld_node_metrics_sources_t *src);

/* Replaces the router (the relay was mounted or stopped); NULL removes it. */
void ld_node_metrics_set_router(ld_node_metrics_t *nm, ld_gs_router_t *router);

/* Sets the Waku relay (borrowed, as the sources) for the metrics that need it: the "net"/"in"
 * bytes, the per-shard payload sizes, the signed-shard verdicts and the latency histogram; NULL
 * removes it (those metrics are then absent). */
void ld_node_metrics_set_relay(ld_node_metrics_t *nm, ld_relay_t *relay);

/* Removes the families from the registry and frees the object. NULL is a no-op. */
void ld_node_metrics_free(ld_node_metrics_t *nm);

#endif
