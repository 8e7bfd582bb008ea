/* The admin endpoints (installed with --rest-admin):
 *   GET  /admin/v1/peers, /admin/v1/peers/connected, /admin/v1/peer/{peerId}
 *   POST /admin/v1/peers                 dial a list of multiaddrs, in order
 *   POST /admin/v1/log-level/{logLevel}
 *
 * A peer's "connected" is "Connected" while a connection is open, "CanConnect" for a peer we
 * were connected to before (it was identified), "NotConnected" otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "p2p/stream.h"
#include "rest/server_internal.h"

/* ---- peer list ------------------------------------------------------------------------------- */

typedef struct conn_list {
  ld_conn_t **c;
  size_t n;
} conn_list_t;

static void conns_get(const ld_rest_context_t *ctx, conn_list_t *out) {
  size_t total = ld_switch_connections(ctx->sw, NULL, 0);
  out->n = 0;
  out->c = total > 0 ? calloc(total, sizeof *out->c) : NULL;
  if (out->c != NULL) {
    size_t n = ld_switch_connections(ctx->sw, out->c, total);
    out->n = n < total ? n : total;
  }
}

static ld_conn_t *find_conn(const conn_list_t *cs, const ld_peerid_t *id) {
  for (size_t i = 0; i < cs->n; i++)
    if (ld_peerid_equal(ld_conn_remote_peer(cs->c[i]), id))
      return cs->c[i];
  return NULL;
}

static json_t *multiaddr_json(const ld_multiaddr_t *addr, const ld_peerid_t *id) {
  if (addr == NULL)
    return json_string("");
  ld_multiaddr_t full = *addr;
  char text[LD_MULTIADDR_TEXT_MAX];
  if (ld_multiaddr_push(&full, LD_MA_P2P, id->bytes, id->len) != 0 ||
      ld_multiaddr_to_text(&full, text, sizeof text) < 0)
    return json_string("");
  return json_string(text);
}

static json_t *protocols_json(const ld_peerstore_peer_t *p) {
  json_t *list = json_array();
  for (size_t i = 0; list != NULL && p != NULL && i < p->n_protocols; i++)
    json_array_append_new(list, ld_rest_json_string(p->protocols[i], strlen(p->protocols[i])));
  return list;
}

static json_t *shards_json(const ld_rest_context_t *ctx, const ld_peerid_t *id) {
  json_t *list = json_array();
  const ld_metadata_info_t *info = ctx->metadata ? ld_metadata_peer(ctx->metadata, id) : NULL;
  if (list == NULL || info == NULL)
    return list;
  uint16_t shards[LD_METADATA_MAX_SHARDS];
  size_t n = ld_metadata_info_shards(info, shards, LD_METADATA_MAX_SHARDS);
  for (size_t i = 0; i < n && i < LD_METADATA_MAX_SHARDS; i++)
    json_array_append_new(list, json_integer(shards[i]));
  return list;
}

static const char *connectedness(const ld_peerstore_peer_t *p, const ld_conn_t *c) {
  if (c != NULL)
    return "Connected";
  return p != NULL && (p->agent_version != NULL || p->n_protocols > 0) ? "CanConnect"
                                                                       : "NotConnected";
}

json_t *ld_rest_peer_json(const ld_rest_context_t *ctx, const ld_peerid_t *id,
                          const ld_peerstore_peer_t *p, const ld_conn_t *c) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  const ld_multiaddr_t *addr = p != NULL && p->n_addrs > 0 ? &p->addrs[0]
                               : c != NULL                 ? ld_conn_remote_addr(c)
                                                           : NULL;
  const char *agent = p != NULL && p->agent_version != NULL ? p->agent_version : "";
  const char *origin = ctx->peer_origin != NULL ? ctx->peer_origin(ctx->user_data, id) : NULL;
  json_object_set_new(o, "multiaddr", multiaddr_json(addr, id));
  json_object_set_new(o, "protocols", protocols_json(p));
  json_object_set_new(o, "shards", shards_json(ctx, id));
  json_object_set_new(o, "connected", json_string(connectedness(p, c)));
  json_object_set_new(o, "agent", ld_rest_json_string(agent, strlen(agent)));
  json_object_set_new(o, "origin", json_string(origin != NULL ? origin : "UnknownOrigin"));
  double score;
  const ld_rest_relay_ops_t *relay = ctx->relay;
  if (relay != NULL && relay->peer_score != NULL && relay->peer_score(relay->user_data, id, &score))
    json_object_set_new(o, "score", json_real(score));
  return o;
}

/* Every peer of the peer store (most recently seen first), then connected peers it lacks. */
static json_t *peers_json(const ld_rest_context_t *ctx, bool connected_only) {
  json_t *list = json_array();
  conn_list_t cs;
  conns_get(ctx, &cs);
  size_t total = ctx->peerstore != NULL ? ld_peerstore_count(ctx->peerstore) : 0;
  ld_peerid_t *ids = total > 0 ? calloc(total, sizeof *ids) : NULL;
  size_t n = ids != NULL ? ld_peerstore_peers(ctx->peerstore, NULL, ids, total) : 0;
  for (size_t i = 0; list != NULL && i < n && i < total; i++) {
    ld_conn_t *c = find_conn(&cs, &ids[i]);
    if (c != NULL || !connected_only)
      json_array_append_new(
          list, ld_rest_peer_json(ctx, &ids[i], ld_peerstore_get(ctx->peerstore, &ids[i]), c));
  }
  for (size_t i = 0; list != NULL && i < cs.n; i++) {
    const ld_peerid_t *id = ld_conn_remote_peer(cs.c[i]);
    bool listed = ctx->peerstore != NULL && ld_peerstore_get(ctx->peerstore, id) != NULL;
    if (!listed && find_conn(&cs, id) == cs.c[i])
      json_array_append_new(list, ld_rest_peer_json(ctx, id, NULL, cs.c[i]));
  }
  free(ids);
  free(cs.c);
  return list;
}

static void get_peers(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                      void *user_data) {
  (void)m;
  ld_rest_respond_json_new(req, peers_json(&srv->ctx, user_data != NULL));
}

static void get_peer(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                     void *user_data) {
  (void)user_data;
  const char *text = ld_route_param(m, "peerId");
  ld_peerid_t id;
  if (text == NULL || ld_peerid_parse(&id, text) != 0) {
    ld_rest_respond_error(req, 400, "Invalid argument:", "invalid peer ID");
    return;
  }
  const ld_rest_context_t *ctx = &srv->ctx;
  const ld_peerstore_peer_t *p = ctx->peerstore ? ld_peerstore_get(ctx->peerstore, &id) : NULL;
  conn_list_t cs;
  conns_get(ctx, &cs);
  ld_conn_t *c = find_conn(&cs, &id);
  if (p == NULL && c == NULL) {
    char msg[LD_PEERID_PARSE_MAX + 32];
    snprintf(msg, sizeof msg, "Peer with ID %s not found", text);
    ld_http_respond_text(req, 404, msg);
  } else {
    ld_rest_respond_json_new(req, ld_rest_peer_json(ctx, &id, p, c));
  }
  free(cs.c);
}

/* ---- POST /admin/v1/peers -------------------------------------------------------------------- */

/* One request's dials, done in order. Holds no pointer to the server, so that a dial ending after
 * the server closed is harmless. */
typedef struct dial_job {
  ld_http_request_t *req;
  ld_switch_t *sw;
  ld_peerstore_t *peerstore;
  char **addrs;
  size_t n, next;
} dial_job_t;

static void job_free(dial_job_t *job) {
  for (size_t i = 0; i < job->n; i++)
    free(job->addrs[i]);
  free(job->addrs);
  free(job);
}

static void job_fail(dial_job_t *job, const char *fmt) {
  char msg[LD_MULTIADDR_TEXT_MAX + 128];
  snprintf(msg, sizeof msg, fmt, job->next, job->addrs[job->next]);
  ld_http_respond_text(job->req, 400, msg);
  job_free(job);
}

static void job_next(dial_job_t *job);

static void on_dialed(ld_conn_t *c, int err, void *user_data) {
  (void)c;
  dial_job_t *job = user_data;
  if (err != 0) {
    LD_INFO("rest", "Failed to connect to %s: %s", job->addrs[job->next], ld_strerror(err));
    job_fail(job, "Failed to connect to peer at index: %zu - %s");
    return;
  }
  job->next++;
  job_next(job);
}

static void job_next(dial_job_t *job) {
  if (job->next == job->n) {
    ld_rest_respond_ok(job->req);
    job_free(job);
    return;
  }
  ld_multiaddr_t ma;
  ld_peerid_t id;
  int rc = ld_multiaddr_parse(&ma, job->addrs[job->next]);
  if (rc != 0 || !ld_multiaddr_peerid(&ma, &id, false)) {
    char msg[LD_MULTIADDR_TEXT_MAX + 128];
    snprintf(msg, sizeof msg, "Couldn't parse remote peer info: %s",
             rc != 0 ? "invalid multiaddress" : "multiaddress without /p2p/<peer id>");
    ld_http_respond_text(job->req, 400, msg);
    job_free(job);
    return;
  }
  if (job->peerstore != NULL)
    ld_peerstore_add_addrs(job->peerstore, &id, &ma, 1, ld_now_ms());
  rc = ld_switch_dial(job->sw, &ma, on_dialed, job);
  if (rc != 0)
    job_fail(job, "Failed to connect to peer at index: %zu - %s");
}

static int job_new(const ld_rest_context_t *ctx, ld_http_request_t *req, const char **list,
                   size_t n, dial_job_t **out) {
  dial_job_t *job = calloc(1, sizeof *job);
  if (job == NULL || (n > 0 && (job->addrs = calloc(n, sizeof *job->addrs)) == NULL)) {
    free(job);
    return LD_ERR_NOMEM;
  }
  job->req = req;
  job->sw = ctx->sw;
  job->peerstore = ctx->peerstore;
  for (; job->n < n; job->n++)
    if ((job->addrs[job->n] = strdup(list[job->n])) == NULL) {
      job_free(job);
      return LD_ERR_NOMEM;
    }
  *out = job;
  return 0;
}

static void post_peers(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                       void *user_data) {
  (void)m;
  (void)user_data;
  json_t *body = NULL;
  if (ld_rest_read_json(req, &body) != 0)
    return;
  const char **list = NULL;
  size_t n = 0;
  char err[LD_REST_ERR_MAX];
  dial_job_t *job = NULL;
  if (ld_rest_json_strings(body, &list, &n, err, sizeof err) != 0)
    ld_rest_respond_error(req, 400, "Failed to decode request: ", err);
  else if (n > LD_REST_MAX_DIALS)
    ld_rest_respond_error(req, 400, "Failed to decode request: ", "too many peers");
  else if (job_new(&srv->ctx, req, list, n, &job) != 0)
    ld_http_respond_text(req, 500, "Out of memory");
  else
    job_next(job);
  free(list);
  json_decref(body);
}

/* ---- POST /admin/v1/log-level/{logLevel} ----------------------------------------------------- */

static void post_log_level(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                           void *user_data) {
  (void)srv;
  (void)user_data;
  const char *text = ld_route_param(m, "logLevel");
  ld_log_level_t level;
  if (text == NULL || ld_rest_is_blank(text, strlen(text))) {
    ld_http_respond_text(req, 400, "Invalid log-level, it can't be empty");
    return;
  }
  if (ld_log_parse_level(text, &level) != 0 || level == LD_LOG_NONE) {
    static const char fmt[] = "Invalid log-level: %s. Please specify one of TRACE, DEBUG, INFO, "
                              "NOTICE, WARN, ERROR or FATAL";
    size_t cap = strlen(text) + sizeof fmt;
    char *msg = malloc(cap);
    if (msg == NULL) {
      ld_http_respond_text(req, 500, "Out of memory");
      return;
    }
    snprintf(msg, cap, fmt, text);
    ld_http_respond_text(req, 400, msg);
    free(msg);
    return;
  }
  ld_log_set_level(level);
  ld_rest_respond_ok(req);
}

int ld_rest_install_admin(ld_rest_server_t *srv) {
  static const int connected_only = 1;
  int rc = ld_rest_server_add_route(srv, "GET", "/admin/v1/peers", get_peers, NULL);
  rc = rc ? rc
          : ld_rest_server_add_route(srv, "GET", "/admin/v1/peers/connected", get_peers,
                                     (void *)&connected_only);
  rc = rc ? rc : ld_rest_server_add_route(srv, "GET", "/admin/v1/peer/{peerId}", get_peer, NULL);
  rc = rc ? rc : ld_rest_server_add_route(srv, "POST", "/admin/v1/peers", post_peers, NULL);
  return rc ? rc
            : ld_rest_server_add_route(srv, "POST", "/admin/v1/log-level/{logLevel}",
                                       post_log_level, NULL);
}
