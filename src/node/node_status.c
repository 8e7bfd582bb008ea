/* What the REST status page reads of the node (rest/status.h): the relay's router, the store and
 * the filter service. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "node/node_internal.h"

/* The archive is counted at most this often for the page (a count scans the table). */
#define STATUS_COUNT_EVERY_MS 10000u

/* A count under way; `node` is cleared when its answer no longer matters (the node stops). */
typedef struct node_status_count {
  ld_node_t *node;
} node_status_count_t;

static void on_count(int err, uint64_t count, void *user_data) {
  node_status_count_t *req = user_data;
  ld_node_t *node = req->node;
  if (node != NULL) {
    node->status_counting = NULL;
    if (err == 0) {
      node->status_stored = count;
      node->status_has_stored = true;
    }
  }
  free(req);
}

/* Starts a count when the last is older than STATUS_COUNT_EVERY_MS; the page shows the last one
 * known meanwhile. */
static void refresh_count(ld_node_t *node) {
  uint64_t now = ld_now_ms();
  if (node->archive == NULL || node->archive_opening || node->status_counting != NULL ||
      (node->status_counted_ms != 0 && now - node->status_counted_ms < STATUS_COUNT_EVERY_MS))
    return;
  node_status_count_t *req = calloc(1, sizeof *req);
  if (req == NULL)
    return;
  req->node = node;
  if (ld_archive_count(node->archive, on_count, req) != 0) {
    free(req);
    return;
  }
  node->status_counting = req;
  node->status_counted_ms = now;
}

static const ld_gs_router_t *status_router(void *ud) {
  ld_node_t *node = ud;
  return node->relay != NULL && node->gs != NULL ? ld_gs_service_router(node->gs) : NULL;
}

static void status_store(void *ud, ld_rest_status_store_t *out) {
  ld_node_t *node = ud;
  out->mounted = node->store != NULL;
  if (!out->mounted)
    return;
  refresh_count(node);
  out->has_messages = node->status_has_stored;
  out->messages = node->status_stored;
  if (node->archive != NULL) {
    ld_archive_stats_t st;
    ld_archive_stats(node->archive, &st);
    out->inserted = st.inserted;
  }
  snprintf(out->retention, sizeof out->retention, "%s", node->cfg.store_retention);
  size_t scheme = strcspn(node->cfg.store_db_url, ":");
  if (node->cfg.store_db_url[scheme] == ':' && scheme < sizeof out->driver)
    snprintf(out->driver, sizeof out->driver, "%.*s", (int)scheme, node->cfg.store_db_url);
}

static void status_filter(void *ud, ld_rest_status_filter_t *out) {
  ld_node_t *node = ud;
  out->mounted = node->filter != NULL;
  if (!out->mounted)
    return;
  ld_filter_server_stats_t st;
  ld_filter_server_get_stats(node->filter, &st);
  out->subscribers = st.peers;
  out->criteria = st.criteria;
}

void ld_node_status_ops(ld_node_t *node, ld_rest_status_ops_t *out) {
  memset(out, 0, sizeof *out);
  out->router = status_router;
  out->store = status_store;
  out->filter = status_filter;
  out->started_ms = node->started_ms;
  out->user_data = node;
}

void ld_node_status_stop(ld_node_t *node) {
  if (node->status_counting != NULL)
    node->status_counting->node = NULL;
  node->status_counting = NULL;
}
