/* Connection status of the Messaging API (reliability-and-api.md §5.7), computed from peer
 * counts:
 *   1. relay mounted and relay peers ≥ LD_HEALTH_RELAY_D_LOW (gossipsub D_low) → Connected;
 *   2. relay peers > 0 → PartiallyConnected;
 *   3. otherwise the edge rules: lightpush, filter and store peers each ≥ 1 → PartiallyConnected,
 *      each ≥ LD_HEALTH_EDGE_HEALTHY_THRESHOLD → Connected; any of them 0 → Disconnected.
 * A Core node without relay peers therefore falls back to the edge rules, as logos-delivery does.
 *
 * The pure function and the tracker do no I/O and keep no global state; the caller gathers the
 * counts and publishes LD_EVENT_MESSAGING_CONNECTION_STATUS when the tracker reports a change.
 * ld_connection_status_name (messaging.h) is implemented here. Any thread, one at a time per
 * tracker. */
#ifndef LD_MESSAGING_HEALTH_H
#define LD_MESSAGING_HEALTH_H

#include <stdbool.h>
#include <stddef.h>

#include "messaging/messaging.h"

/* Gossipsub D_low: relay peers for Connected. */
#define LD_HEALTH_RELAY_D_LOW 4
/* logos-delivery HealthyThreshold: peers of each edge service for Connected. */
#define LD_HEALTH_EDGE_HEALTHY_THRESHOLD 2

/* The peer counts the status depends on. */
typedef struct ld_health_counts {
  bool relay_mounted;     /* the node runs relay (Core) */
  size_t relay_peers;     /* connected relay peers (ignored when relay is not mounted) */
  size_t lightpush_peers; /* lightpush service peers available */
  size_t filter_peers;    /* filter service peers holding our subscriptions */
  size_t store_peers;     /* store service peers available */
} ld_health_counts_t;

/* One of the counts, for ld_health_tracker_set. */
typedef enum ld_health_count {
  LD_HEALTH_RELAY = 0,
  LD_HEALTH_LIGHTPUSH,
  LD_HEALTH_FILTER,
  LD_HEALTH_STORE,
} ld_health_count_t;

/* The status for `counts` (not NULL) by the rules above. */
ld_connection_status_t ld_health_status(const ld_health_counts_t *counts);

/* Keeps the last counts and the last status reported. Caller storage; plain value. */
typedef struct ld_health_tracker {
  ld_health_counts_t counts;
  ld_connection_status_t status;
} ld_health_tracker_t;

/* All counts 0, relay not mounted, status Disconnected (nothing reported yet: the first status
 * other than Disconnected is a change). */
void ld_health_tracker_init(ld_health_tracker_t *t, bool relay_mounted);

/* Replaces all counts. Returns true and stores the new status in *status (may be NULL) when the
 * status changed; false when it stayed the same. */
bool ld_health_tracker_update(ld_health_tracker_t *t, const ld_health_counts_t *counts,
                              ld_connection_status_t *status);

/* Replaces one count (the relay count with LD_HEALTH_RELAY); otherwise as update. */
bool ld_health_tracker_set(ld_health_tracker_t *t, ld_health_count_t which, size_t count,
                           ld_connection_status_t *status);

static inline ld_connection_status_t ld_health_tracker_status(const ld_health_tracker_t *t) {
  return t->status;
}

#endif
