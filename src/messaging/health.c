#include "messaging/health.h"

const char *ld_connection_status_name(ld_connection_status_t s) {
  switch (s) {
  case LD_CONNECTION_CONNECTED:
    return "Connected";
  case LD_CONNECTION_PARTIALLY_CONNECTED:
    return "PartiallyConnected";
  default:
    return "Disconnected";
  }
}

static size_t min3(size_t a, size_t b, size_t c) {
  size_t m = a < b ? a : b;
  return m < c ? m : c;
}

ld_connection_status_t ld_health_status(const ld_health_counts_t *counts) {
  if (counts->relay_mounted && counts->relay_peers >= LD_HEALTH_RELAY_D_LOW)
    return LD_CONNECTION_CONNECTED;
  if (counts->relay_mounted && counts->relay_peers > 0)
    return LD_CONNECTION_PARTIALLY_CONNECTED;
  size_t least = min3(counts->lightpush_peers, counts->filter_peers, counts->store_peers);
  if (least >= LD_HEALTH_EDGE_HEALTHY_THRESHOLD)
    return LD_CONNECTION_CONNECTED;
  return least >= 1 ? LD_CONNECTION_PARTIALLY_CONNECTED : LD_CONNECTION_DISCONNECTED;
}

void ld_health_tracker_init(ld_health_tracker_t *t, bool relay_mounted) {
  t->counts = (ld_health_counts_t){.relay_mounted = relay_mounted};
  t->status = LD_CONNECTION_DISCONNECTED;
}

bool ld_health_tracker_update(ld_health_tracker_t *t, const ld_health_counts_t *counts,
                              ld_connection_status_t *status) {
  t->counts = *counts;
  ld_connection_status_t now = ld_health_status(counts);
  if (now == t->status)
    return false;
  t->status = now;
  if (status != NULL)
    *status = now;
  return true;
}

bool ld_health_tracker_set(ld_health_tracker_t *t, ld_health_count_t which, size_t count,
                           ld_connection_status_t *status) {
  ld_health_counts_t c = t->counts;
  switch (which) {
  case LD_HEALTH_RELAY:
    c.relay_peers = count;
    break;
  case LD_HEALTH_LIGHTPUSH:
    c.lightpush_peers = count;
    break;
  case LD_HEALTH_FILTER:
    c.filter_peers = count;
    break;
  case LD_HEALTH_STORE:
    c.store_peers = count;
    break;
  default:
    return false;
  }
  return ld_health_tracker_update(t, &c, status);
}
