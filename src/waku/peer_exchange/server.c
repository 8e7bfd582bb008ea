#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "p2p/reqresp.h"
#include "waku/peer_exchange/peer_exchange.h"

#define LOG_TOPIC "waku peer_exchange"

struct ld_px_server {
  ld_switch_t *sw;
  ld_px_provider_fn provider;
  void *provider_data;
  ld_enr_cache_t *cache;
  bool has_cluster;
  uint16_t cluster_id;
  size_t max_peers;
  size_t max_inflight;
  size_t inflight;
  uint32_t timeout_ms;
  ld_px_server_stats_t stats;
};

static const char *peer_text(ld_stream_t *s, char *buf, size_t cap) {
  if (s == NULL || ld_peerid_to_text(ld_conn_remote_peer(ld_stream_conn(s)), buf, cap) < 0)
    snprintf(buf, cap, "?");
  return buf;
}

/* ---- records from the cache ----------------------------------------------------------------- */

typedef struct pool_filter {
  const ld_px_server_t *srv;
  const ld_peerid_t *requester;
} pool_filter_t;

static bool in_pool(const ld_enr_t *enr, const ld_peerid_t *peer, void *ud) {
  const pool_filter_t *f = ud;
  if (f->requester != NULL && ld_peerid_equal(peer, f->requester))
    return false;
  return !f->srv->has_cluster || !ld_enr_cluster_mismatch(enr, f->srv->cluster_id);
}

static size_t pick(const ld_px_server_t *srv, const ld_peerid_t *requester, const ld_enr_t **out,
                   size_t k) {
  if (k == 0)
    return 0;
  if (srv->provider != NULL) {
    size_t n = srv->provider(srv->provider_data, requester, out, k);
    return n < k ? n : k;
  }
  if (srv->cache == NULL)
    return 0;
  pool_filter_t f = {srv, requester};
  return ld_enr_cache_sample(srv->cache, in_pool, &f, out, k);
}

/* ---- serving -------------------------------------------------------------------------------- */

static int answer_bad_request(ld_px_server_t *srv, ld_stream_t *s, int err, ld_buf_t *resp) {
  char peer[LD_PEERID_TEXT_MAX], desc[64];
  LD_DEBUG(LOG_TOPIC, "bad peer exchange request from %s: %s", peer_text(s, peer, sizeof peer),
           ld_errname(err));
  srv->stats.bad_requests++;
  snprintf(desc, sizeof desc, "failed to decode request: %s", ld_errname(err));
  return ld_px_encode_response(NULL, 0, LD_PX_STATUS_BAD_REQUEST, desc, resp);
}

static int on_request(ld_stream_t *s, const uint8_t *req, size_t len, ld_buf_t *resp, void *ud) {
  ld_px_server_t *srv = ud;
  uint64_t num_peers = 0;
  int rc = ld_px_decode_request(req, len, &num_peers);
  if (rc < 0)
    return answer_bad_request(srv, s, rc, resp);
  size_t k = num_peers < srv->max_peers ? (size_t)num_peers : srv->max_peers;
  const ld_enr_t *enrs[LD_PX_MAX_PEERS];
  size_t n = pick(srv, ld_conn_remote_peer(ld_stream_conn(s)), enrs, k);
  rc = ld_px_encode_response(enrs, n, LD_PX_STATUS_SUCCESS, NULL, resp);
  if (rc != 0) {
    LD_WARN(LOG_TOPIC, "cannot answer peer exchange request: %s", ld_errname(rc));
    return rc;
  }
  char peer[LD_PEERID_TEXT_MAX];
  LD_DEBUG(LOG_TOPIC, "peer exchange request from %s for %llu peers: %zu records",
           peer_text(s, peer, sizeof peer), (unsigned long long)num_peers, n);
  srv->stats.requests++;
  srv->stats.enrs_sent += n;
  return 0;
}

static void on_failed(ld_stream_t *s, int err, void *ud) {
  ld_px_server_t *srv = ud;
  char peer[LD_PEERID_TEXT_MAX];
  srv->stats.failed++;
  LD_DEBUG(LOG_TOPIC, "peer exchange request from %s not served: %s",
           peer_text(s, peer, sizeof peer), ld_errname(err));
}

static void on_closed(void *ud) {
  ld_px_server_t *srv = ud;
  srv->inflight--;
}

static const ld_reqresp_server_t g_server = {
    .on_request = on_request,
    .on_failed = on_failed,
    .on_closed = on_closed,
};

static void on_accept(ld_stream_t *s, void *ud) {
  ld_px_server_t *srv = ud;
  if (srv->inflight >= srv->max_inflight) {
    LD_DEBUG(LOG_TOPIC, "too many peer exchange requests in flight; resetting");
    srv->stats.failed++;
    ld_stream_reset(s);
    return;
  }
  ld_reqresp_opts_t opts = {.max_bytes = LD_PX_MAX_REQUEST_SIZE + 8,
                            .frame_max = LD_PX_MAX_REQUEST_SIZE,
                            .timeout_ms = srv->timeout_ms};
  if (ld_reqresp_serve(srv->sw, s, &opts, &g_server, srv, NULL) == 0)
    srv->inflight++;
  else
    srv->stats.failed++;
}

/* ---- public --------------------------------------------------------------------------------- */

void ld_px_server_config_default(ld_px_server_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  cfg->max_peers = LD_PX_MAX_PEERS;
  cfg->max_inflight = LD_PX_DEFAULT_MAX_INFLIGHT;
  cfg->timeout_ms = LD_PX_TIMEOUT_MS;
}

ld_px_server_t *ld_px_server_new(ld_switch_t *sw, const ld_px_server_config_t *cfg) {
  if (sw == NULL || cfg == NULL || cfg->max_peers > LD_PX_MAX_PEERS)
    return NULL;
  ld_px_server_t *srv = calloc(1, sizeof *srv);
  if (srv == NULL)
    return NULL;
  srv->sw = sw;
  srv->provider = cfg->provider;
  srv->provider_data = cfg->provider_data;
  srv->cache = cfg->cache;
  srv->has_cluster = cfg->has_cluster;
  srv->cluster_id = cfg->cluster_id;
  srv->max_peers = cfg->max_peers != 0 ? cfg->max_peers : LD_PX_MAX_PEERS;
  srv->max_inflight = cfg->max_inflight != 0 ? cfg->max_inflight : LD_PX_DEFAULT_MAX_INFLIGHT;
  srv->timeout_ms = cfg->timeout_ms != 0 ? cfg->timeout_ms : LD_PX_TIMEOUT_MS;
  if (ld_switch_handle(sw, LD_PX_PROTOCOL, on_accept, srv) != 0) {
    free(srv);
    return NULL;
  }
  return srv;
}

void ld_px_server_free(ld_px_server_t *srv) {
  free(srv);
}

void ld_px_server_set_provider(ld_px_server_t *srv, ld_px_provider_fn fn, void *user_data) {
  srv->provider = fn;
  srv->provider_data = user_data;
}

void ld_px_server_get_stats(const ld_px_server_t *srv, ld_px_server_stats_t *out) {
  *out = srv->stats;
}
