/* The status page and its summary endpoint (rest/status.h). */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "p2p/stream.h"
#include "rest/server_internal.h"
#include "rest/status_assets.h"

/* ---- rate history ---------------------------------------------------------------------------- */

typedef struct topic_series {
  char topic[LD_REST_STATUS_TOPIC_MAX];
  uint64_t last_in, last_out; /* the router's counters at the previous sample */
  uint32_t in[LD_REST_STATUS_SAMPLES], out[LD_REST_STATUS_SAMPLES];
} topic_series_t;

struct ld_rest_status_rates {
  uv_timer_t timer;
  topic_series_t *series[LD_REST_STATUS_MAX_TOPICS];
  size_t n_series;
  size_t head;   /* slot the next sample goes to */
  size_t filled; /* samples taken, up to LD_REST_STATUS_SAMPLES */
};

static topic_series_t *series_for(struct ld_rest_status_rates *rt, const char *topic,
                                  const ld_gs_topic_stats_t *st) {
  for (size_t i = 0; i < rt->n_series; i++)
    if (strcmp(rt->series[i]->topic, topic) == 0)
      return rt->series[i];
  if (rt->n_series == LD_REST_STATUS_MAX_TOPICS || strlen(topic) >= LD_REST_STATUS_TOPIC_MAX)
    return NULL;
  topic_series_t *s = calloc(1, sizeof *s);
  if (s == NULL)
    return NULL;
  memcpy(s->topic, topic, strlen(topic) + 1);
  s->last_in = st->msgs_in; /* counts before the first sample are not this interval's */
  s->last_out = st->msgs_out;
  rt->series[rt->n_series++] = s;
  return s;
}

/* What a counter gained since `*last` (a topic the router forgot and saw again restarts at 0). */
static uint32_t gained(uint64_t now, uint64_t *last) {
  uint64_t d = now >= *last ? now - *last : now;
  *last = now;
  return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

static void take_sample(ld_rest_server_t *srv) {
  struct ld_rest_status_rates *rt = srv->rates;
  size_t slot = rt->head;
  for (size_t i = 0; i < rt->n_series; i++)
    rt->series[i]->in[slot] = rt->series[i]->out[slot] = 0;
  const ld_gs_router_t *router =
      srv->status.router != NULL ? srv->status.router(srv->status.user_data) : NULL;
  const char *topics[64];
  size_t n = router != NULL ? ld_gs_router_topics(router, topics, 64) : 0;
  for (size_t i = 0; i < n && i < 64; i++) {
    ld_gs_topic_stats_t st;
    if (ld_gs_router_topic_stats(router, topics[i], &st) != 0)
      continue;
    topic_series_t *s = series_for(rt, topics[i], &st);
    if (s != NULL) {
      s->in[slot] = gained(st.msgs_in, &s->last_in);
      s->out[slot] = gained(st.msgs_out, &s->last_out);
    }
  }
  rt->head = (slot + 1) % LD_REST_STATUS_SAMPLES;
  if (rt->filled < LD_REST_STATUS_SAMPLES)
    rt->filled++;
}

static void on_sample(uv_timer_t *t) {
  take_sample(t->data);
}

static void on_rates_closed(uv_handle_t *h) {
  struct ld_rest_status_rates *rt = h->data;
  for (size_t i = 0; i < rt->n_series; i++)
    free(rt->series[i]);
  free(rt);
}

static int start_rates(ld_rest_server_t *srv) {
  struct ld_rest_status_rates *rt = calloc(1, sizeof *rt);
  if (rt == NULL)
    return LD_ERR_NOMEM;
  uv_timer_init(srv->ctx.loop, &rt->timer);
  rt->timer.data = srv;
  uv_unref((uv_handle_t *)&rt->timer);
  uv_timer_start(&rt->timer, on_sample, LD_REST_STATUS_SAMPLE_MS, LD_REST_STATUS_SAMPLE_MS);
  srv->rates = rt;
  if (srv->status.router != NULL) { /* counts before the first interval are not its own */
    const ld_gs_router_t *router = srv->status.router(srv->status.user_data);
    const char *topics[64];
    size_t n = router != NULL ? ld_gs_router_topics(router, topics, 64) : 0;
    for (size_t i = 0; i < n && i < 64; i++) {
      ld_gs_topic_stats_t st;
      if (ld_gs_router_topic_stats(router, topics[i], &st) == 0)
        series_for(rt, topics[i], &st);
    }
  }
  return 0;
}

void ld_rest_status_free(ld_rest_server_t *srv) {
  struct ld_rest_status_rates *rt = srv->rates;
  if (rt == NULL)
    return;
  srv->rates = NULL;
  uv_timer_stop(&rt->timer);
  rt->timer.data = rt;
  uv_close((uv_handle_t *)&rt->timer, on_rates_closed);
}

static json_t *samples_json(const struct ld_rest_status_rates *rt, const uint32_t *ring) {
  json_t *list = json_array();
  size_t first = (rt->head + LD_REST_STATUS_SAMPLES - rt->filled) % LD_REST_STATUS_SAMPLES;
  for (size_t i = 0; list != NULL && i < rt->filled; i++)
    json_array_append_new(list, json_integer(ring[(first + i) % LD_REST_STATUS_SAMPLES]));
  return list;
}

static json_t *rates_json(const ld_rest_server_t *srv) {
  json_t *o = json_object();
  json_t *shards = json_array();
  if (o == NULL || shards == NULL) {
    json_decref(o);
    json_decref(shards);
    return NULL;
  }
  json_object_set_new(o, "intervalSeconds", json_integer(LD_REST_STATUS_SAMPLE_MS / 1000));
  const struct ld_rest_status_rates *rt = srv->rates;
  for (size_t i = 0; rt != NULL && i < rt->n_series; i++) {
    const topic_series_t *s = rt->series[i];
    json_t *one = json_object();
    if (one == NULL)
      break;
    json_object_set_new(one, "topic", ld_rest_json_string(s->topic, strlen(s->topic)));
    json_object_set_new(one, "in", samples_json(rt, s->in));
    json_object_set_new(one, "out", samples_json(rt, s->out));
    json_array_append_new(shards, one);
  }
  json_object_set_new(o, "shards", shards);
  return o;
}

/* ---- the summary ----------------------------------------------------------------------------- */

static json_t *peer_entry(const ld_rest_context_t *ctx, ld_conn_t *c) {
  const ld_peerid_t *id = ld_conn_remote_peer(c);
  const ld_peerstore_peer_t *p =
      ctx->peerstore != NULL ? ld_peerstore_get(ctx->peerstore, id) : NULL;
  json_t *o = ld_rest_peer_json(ctx, id, p, c);
  char text[LD_PEERID_TEXT_MAX];
  if (o != NULL && ld_peerid_to_text(id, text, sizeof text) > 0)
    json_object_set_new(o, "peerId", json_string(text));
  if (o != NULL)
    json_object_set_new(o, "direction", json_string(ld_conn_is_outbound(c) ? "Out" : "In"));
  return o;
}

/* The connected peers (one entry per peer) into "peers", and the connection counts. */
static void add_connections(const ld_rest_context_t *ctx, json_t *summary) {
  json_t *peers = json_array();
  size_t total = ld_switch_connections(ctx->sw, NULL, 0);
  ld_conn_t **conns = total > 0 ? calloc(total, sizeof *conns) : NULL;
  size_t n = conns != NULL ? ld_switch_connections(ctx->sw, conns, total) : 0;
  n = n < total ? n : total;
  size_t in = 0, out = 0;
  for (size_t i = 0; i < n; i++) {
    if (ld_conn_is_outbound(conns[i]))
      out++;
    else
      in++;
    bool first = true; /* the first connection of its peer */
    for (size_t j = 0; j < i && first; j++)
      first = !ld_peerid_equal(ld_conn_remote_peer(conns[j]), ld_conn_remote_peer(conns[i]));
    if (first && peers != NULL && json_array_size(peers) < LD_REST_STATUS_MAX_PEERS)
      json_array_append_new(peers, peer_entry(ctx, conns[i]));
  }
  free(conns);
  json_t *counts = json_object();
  if (counts != NULL) {
    json_object_set_new(counts, "in", json_integer((json_int_t)in));
    json_object_set_new(counts, "out", json_integer((json_int_t)out));
  }
  json_object_set_new(summary, "connections", counts);
  json_object_set_new(summary, "peers", peers);
}

static json_t *mesh_json(const ld_rest_server_t *srv) {
  json_t *list = json_array();
  const ld_gs_router_t *router =
      srv->status.router != NULL ? srv->status.router(srv->status.user_data) : NULL;
  const char *topics[64];
  size_t n = router != NULL ? ld_gs_router_topics(router, topics, 64) : 0;
  for (size_t i = 0; list != NULL && i < n && i < 64; i++) {
    json_t *o = json_object();
    if (o == NULL)
      break;
    json_object_set_new(o, "topic", ld_rest_json_string(topics[i], strlen(topics[i])));
    json_object_set_new(o, "meshPeers",
                        json_integer((json_int_t)ld_gs_router_mesh_size(router, topics[i])));
    json_object_set_new(
        o, "topicPeers",
        json_integer((json_int_t)ld_gs_router_topic_peers(router, topics[i], NULL, 0)));
    json_array_append_new(list, o);
  }
  return list;
}

static json_t *store_json(const ld_rest_server_t *srv) {
  ld_rest_status_store_t st;
  memset(&st, 0, sizeof st);
  if (srv->status.store != NULL)
    srv->status.store(srv->status.user_data, &st);
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  json_object_set_new(o, "mounted", json_boolean(st.mounted));
  if (st.mounted && st.has_messages)
    json_object_set_new(o, "messages", json_integer((json_int_t)st.messages));
  json_object_set_new(o, "inserted", json_integer((json_int_t)st.inserted));
  st.retention[sizeof st.retention - 1] = st.driver[sizeof st.driver - 1] = '\0';
  if (st.retention[0] != '\0')
    json_object_set_new(o, "retention", ld_rest_json_string(st.retention, strlen(st.retention)));
  if (st.driver[0] != '\0')
    json_object_set_new(o, "driver", ld_rest_json_string(st.driver, strlen(st.driver)));
  return o;
}

static json_t *filter_json(const ld_rest_server_t *srv) {
  ld_rest_status_filter_t st;
  memset(&st, 0, sizeof st);
  if (srv->status.filter != NULL)
    srv->status.filter(srv->status.user_data, &st);
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  json_object_set_new(o, "mounted", json_boolean(st.mounted));
  json_object_set_new(o, "subscribers", json_integer((json_int_t)st.subscribers));
  json_object_set_new(o, "criteria", json_integer((json_int_t)st.criteria));
  return o;
}

static json_t *summary_json(const ld_rest_server_t *srv) {
  json_t *o = json_object();
  if (o == NULL)
    return NULL;
  char id[LD_PEERID_TEXT_MAX];
  const ld_peerid_t *self = ld_switch_peer_id(srv->ctx.sw);
  if (self != NULL && ld_peerid_to_text(self, id, sizeof id) > 0)
    json_object_set_new(o, "peerId", json_string(id));
  json_object_set_new(o, "version", ld_rest_json_string(srv->version, strlen(srv->version)));
  uint64_t started = srv->status.started_ms != 0 ? srv->status.started_ms : srv->started_ms;
  uint64_t now = ld_now_ms();
  json_object_set_new(o, "uptimeSeconds", json_integer((json_int_t)((now - started) / 1000)));
  add_connections(&srv->ctx, o);
  json_object_set_new(o, "mesh", mesh_json(srv));
  json_object_set_new(o, "rates", rates_json(srv));
  json_object_set_new(o, "store", store_json(srv));
  json_object_set_new(o, "filter", filter_json(srv));
  return o;
}

static void get_summary(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                        void *user_data) {
  (void)m;
  (void)user_data;
  ld_rest_respond_json_new(req, summary_json(srv));
}

/* ---- the page's files ------------------------------------------------------------------------ */

static const char *content_type_of(const char *name) {
  const char *dot = strrchr(name, '.');
  if (dot != NULL && strcmp(dot, ".html") == 0)
    return "text/html; charset=utf-8";
  if (dot != NULL && strcmp(dot, ".css") == 0)
    return "text/css; charset=utf-8";
  if (dot != NULL && strcmp(dot, ".js") == 0)
    return "text/javascript; charset=utf-8";
  return "application/octet-stream";
}

static void get_asset(ld_rest_server_t *srv, ld_http_request_t *req, const ld_route_match_t *m,
                      void *user_data) {
  (void)srv;
  (void)m;
  const char *name = user_data;
  for (size_t i = 0; i < ld_rest_status_n_assets; i++) {
    const ld_rest_asset_t *a = &ld_rest_status_assets[i];
    if (strcmp(a->name, name) == 0) {
      ld_http_respond_page(req, 200, content_type_of(a->name), a->data, a->len);
      return;
    }
  }
  ld_http_respond_text(req, 404, "Not found");
}

int ld_rest_install_status(ld_rest_server_t *srv) {
  static const struct {
    const char *pattern;
    const char *asset;
  } pages[] = {{"/", "index.html"},
               {"/status", "index.html"},
               {"/status/app.js", "app.js"},
               {"/status/style.css", "style.css"}};
  int rc = 0;
  for (size_t i = 0; i < sizeof pages / sizeof pages[0] && rc == 0; i++)
    rc = ld_rest_server_add_route(srv, "GET", pages[i].pattern, get_asset, (void *)pages[i].asset);
  rc = rc ? rc : ld_rest_server_add_route(srv, "GET", "/status/v1/summary", get_summary, NULL);
  srv->started_ms = ld_now_ms();
  return rc ? rc : start_rates(srv);
}
