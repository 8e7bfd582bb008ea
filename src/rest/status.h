/* The status page: a page for a person with a browser, served by the REST server.
 *
 *   GET /, /status             the page (HTML)                      (assets from src/rest/status/,
 *   GET /status/style.css      its style sheet                       embedded at build time)
 *   GET /status/app.js         its script
 *   GET /status/v1/summary     what the page shows beyond /health and /debug/v1/info:
 *     {"peerId", "version", "uptimeSeconds",
 *      "connections": {"in", "out"},
 *      "peers": [the connected peers as /admin/v1/peers lists them, plus "peerId" and
 *                "direction": "In" | "Out"],            (at most LD_REST_STATUS_MAX_PEERS)
 *      "mesh": [{"topic", "meshPeers", "topicPeers"}],  (the relay's topics; [] without relay)
 *      "rates": {"intervalSeconds", "shards": [{"topic", "in": [...], "out": [...]}]},
 *      "store": {"mounted", "messages"?, "inserted", "retention"?, "driver"?},
 *      "filter": {"mounted", "subscribers", "criteria"}}
 *
 * Rates: every LD_REST_STATUS_SAMPLE_MS the server reads the gossipsub router's per-topic
 * counters and keeps, per topic, the message copies received (duplicates included) and sent in
 * that interval, for the last LD_REST_STATUS_SAMPLES intervals (oldest first in the answer; the
 * same counts as waku_relay_messages_total{direction="in"|"out"}). At most
 * LD_REST_STATUS_MAX_TOPICS topics are followed (the first seen); their history is allocated when
 * a topic is first seen, so a REST server without relay pays for nothing but the timer.
 *
 * The page builds its DOM with textContent only: strings that come from peers (agent strings,
 * protocols, topics, addresses) are never parsed as markup, and the page's Content-Security-
 * Policy (rest/httpd.h, LD_HTTPD_PAGE_CSP) refuses inline script besides.
 *
 * Threading: the server's loop thread, as everything of rest/server.h. */
#ifndef LD_REST_STATUS_H
#define LD_REST_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/gossipsub/router.h"

#define LD_REST_STATUS_SAMPLE_MS 2000u
#define LD_REST_STATUS_SAMPLES 150u /* 5 minutes */
#define LD_REST_STATUS_MAX_TOPICS 16u
#define LD_REST_STATUS_MAX_PEERS 256u
#define LD_REST_STATUS_TOPIC_MAX 128u /* longer topics are not followed */

/* The node's store as the page shows it. */
typedef struct ld_rest_status_store {
  bool mounted;        /* the node archives and serves store */
  bool has_messages;   /* `messages` is known (the last count of the archive) */
  uint64_t messages;   /* messages in the archive */
  uint64_t inserted;   /* messages written since the start */
  char retention[256]; /* the retention policy as configured ("" when none) */
  char driver[16];     /* "sqlite", "postgres", … ("" when unknown) */
} ld_rest_status_store_t;

/* The node's filter service as the page shows it. */
typedef struct ld_rest_status_filter {
  bool mounted;
  size_t subscribers; /* peers subscribed */
  size_t criteria;    /* distinct (pubsub topic, content topic) pairs */
} ld_rest_status_filter_t;

/* What the status endpoints read from the node. Every function runs on the loop thread, from a
 * request handler or the sampling timer, and may be NULL (that part is then left empty). */
typedef struct ld_rest_status_ops {
  /* The relay's gossipsub router (borrowed for the call), or NULL without relay. */
  const ld_gs_router_t *(*router)(void *user_data);
  /* Fills `out` (zeroed by the caller). */
  void (*store)(void *user_data, ld_rest_status_store_t *out);
  void (*filter)(void *user_data, ld_rest_status_filter_t *out);
  /* When the node started (ld_now_ms clock); 0: when the REST server started. */
  uint64_t started_ms;
  void *user_data;
} ld_rest_status_ops_t;

#endif
