/* The metrics endpoint with real nodes over loopback: A dials B, both relay shard 0, A publishes
 * one message. B's and A's expositions are scraped over HTTP and checked line by line: the text
 * format is valid 0.0.4, and the peers, connections, mesh, messages, bytes, validation and
 * process figures are the expected ones under nwaku's names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "http_client.h"
#include "metrics/metrics.h"
#include "metrics/node_metrics.h"
#include "metrics/process.h"
#include "metrics/server.h"
#include "node/node.h"
#include "node_harness.h"

#define STEP_MS 15000
#define TOPIC "/waku/2/rs/0/0"
#define PAYLOAD "metrics test payload"
#define CT "/metrics/1/test/proto"

typedef struct tnode {
  ld_node_t *node;
  ld_metrics_t *reg;
  ld_node_metrics_t *nm;
  ld_metrics_server_t *srv;
  bool srv_closed;
} tnode_t;

static uv_loop_t g_loop;
static tnode_t g_a, g_b;

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

/* Each node has the node program's own metrics server, and a registry of ours with the relay
 * attached, served by a second metrics server. */
static void start(tnode_t *t) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_metrics(cfg, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  t->node = nh_start(&g_loop, cfg);
  t->reg = ld_metrics_new();
  assert_int_equal(ld_metrics_register_process(t->reg), 0);
  ld_node_metrics_sources_t src = {
      .sw = ld_node_switch(t->node),
      .peerstore = ld_node_peerstore(t->node),
      .metadata = ld_node_metadata(t->node),
      .router = ld_gs_service_router(ld_node_gossipsub(t->node)),
      .version = "v9.9.9-test",
  };
  t->nm = ld_node_metrics_new(t->reg, &src);
  assert_non_null(t->nm);
  ld_node_metrics_set_relay(t->nm, ld_node_relay(t->node));
  ld_metrics_server_config_t mc = {.loop = &g_loop, .registry = t->reg, .port = 0};
  assert_int_equal(ld_metrics_server_new(&mc, &t->srv), 0);
}

static void on_srv_closed(void *ud) {
  ((tnode_t *)ud)->srv_closed = true;
}

static void stop(tnode_t *t) {
  ld_metrics_server_close(t->srv, on_srv_closed, t);
  WAIT_FOR(t->srv_closed);
  ld_node_metrics_free(t->nm);
  ld_metrics_free(t->reg);
  nh_stop(&g_loop, t->node, STEP_MS);
}

static void on_dialed(ld_conn_t *c, int err, void *ud) {
  (void)c;
  *(int *)ud = err == 0 ? 1 : -1;
}

static size_t mesh(tnode_t *t) {
  return ld_gs_service_mesh_peers(ld_node_gossipsub(t->node), TOPIC, NULL, 0);
}

static size_t received(tnode_t *t) {
  ld_relay_topic_stats_t st;
  return ld_relay_topic_stats(ld_node_relay(t->node), TOPIC, &st) == 0 ? st.msgs_in : 0;
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  start(&g_a);
  start(&g_b);
  ld_multiaddr_t addr;
  assert_true(ld_node_listen_addrs(g_b.node, &addr, 1) >= 1);
  int dialed = 0;
  assert_int_equal(ld_switch_dial(ld_node_switch(g_a.node), &addr, on_dialed, &dialed), 0);
  WAIT_FOR(dialed != 0);
  assert_int_equal(dialed, 1);
  WAIT_FOR(mesh(&g_a) == 1 && mesh(&g_b) == 1);
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = (const uint8_t *)PAYLOAD;
  msg.payload_len = strlen(PAYLOAD);
  msg.content_topic = CT;
  msg.content_topic_len = strlen(CT);
  assert_int_equal(ld_node_publish(g_a.node, TOPIC, &msg, NULL), 1);
  WAIT_FOR(received(&g_b) == 1);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  stop(&g_a);
  stop(&g_b);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return 0;
}

/* ---- exposition parsing ---------------------------------------------------------------------- */

static char *scrape(uint16_t port, const char *path, int *status) {
  http_response_t r;
  assert_int_equal(http_request_on_loop(&g_loop, port, "GET", path, NULL, NULL, 0, &r), 0);
  *status = r.status;
  char *body = r.body;
  r.body = NULL;
  http_response_free(&r);
  return body;
}

/* The value of the sample whose text before the value is exactly `series`; NAN when absent. */
static double sample(const char *text, const char *series) {
  size_t len = strlen(series);
  for (const char *line = text; line != NULL && *line != '\0';) {
    if (strncmp(line, series, len) == 0 && line[len] == ' ')
      return strtod(line + len + 1, NULL);
    line = strchr(line, '\n');
    line = line != NULL ? line + 1 : NULL;
  }
  return 0.0 / 0.0;
}

static bool valid_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

/* Checks the 0.0.4 grammar: HELP then TYPE for each family, samples of the declared family
 * (histograms with _bucket/_sum/_count), label sets well quoted, numeric values. */
static void check_grammar(const char *text) {
  char family[256] = "", type[32] = "";
  size_t n_lines = 0;
  for (const char *line = text; *line != '\0'; n_lines++) {
    const char *eol = strchr(line, '\n');
    assert_non_null(eol);
    char buf[4096];
    size_t len = (size_t)(eol - line);
    assert_true(len < sizeof buf);
    memcpy(buf, line, len);
    buf[len] = '\0';
    if (strncmp(buf, "# HELP ", 7) == 0) {
      assert_int_equal(sscanf(buf + 7, "%255s", family), 1);
    } else if (strncmp(buf, "# TYPE ", 7) == 0) {
      char name[256];
      assert_int_equal(sscanf(buf + 7, "%255s %31s", name, type), 2);
      assert_string_equal(name, family);
    } else {
      size_t i = 0;
      while (valid_name_char(buf[i], i == 0))
        i++;
      assert_true(i > 0);
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)i, buf);
      if (strcmp(type, "histogram") == 0) {
        size_t fl = strlen(family);
        assert_memory_equal(name, family, fl);
        const char *suffix = name + fl;
        assert_true(strcmp(suffix, "_bucket") == 0 || strcmp(suffix, "_sum") == 0 ||
                    strcmp(suffix, "_count") == 0);
      } else {
        assert_string_equal(name, family);
      }
      const char *p = buf + i;
      if (*p == '{') {
        p++;
        while (*p != '}') {
          while (valid_name_char(*p, false))
            p++;
          assert_true(p[0] == '=' && p[1] == '"');
          p += 2;
          while (*p != '"') {
            assert_true(*p != '\0' && *p != '\n');
            p += *p == '\\' ? 2 : 1;
          }
          p++;
          if (*p == ',')
            p++;
        }
        p++;
      }
      assert_true(*p == ' ');
      char *end = NULL;
      double v = strtod(p + 1, &end);
      (void)v;
      assert_true(end != p + 1 && *end == '\0');
    }
    line = eol + 1;
  }
  assert_true(n_lines > 20);
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void receiver_figures(void **state) {
  (void)state;
  int status = 0;
  char *text = scrape(ld_metrics_server_port(g_b.srv), "/metrics", &status);
  assert_int_equal(status, 200);
  if (getenv("LD_TEST_VERBOSE") != NULL)
    fputs(text, stderr);
  check_grammar(text);
  assert_true(sample(text, "waku_version{version=\"v9.9.9-test\"}") == 1);
  assert_true(sample(text, "libp2p_peers") == 1);
  assert_true(sample(text, "waku_peer_store_size") >= 1);
  assert_true(sample(text, "waku_connected_peers{direction=\"In\",protocol=\"/vac/waku/relay/"
                           "2.0.0\"}") == 1);
  assert_true(sample(text, "waku_connected_peers{direction=\"Out\",protocol=\"/vac/waku/relay/"
                           "2.0.0\"}") == 0);
  assert_true(sample(text, "waku_connected_peers_per_shard{shard=\"0\"}") == 1);
  assert_true(
      sample(text, "waku_connected_peers_per_agent{agent=\"logosdelivery/" LD_VERSION "\"}") == 1);
  assert_true(sample(text, "libp2p_pubsub_peers") == 1);
  assert_true(sample(text, "libp2p_pubsub_topics") == 1);
  assert_true(sample(text, "libp2p_gossipsub_peers_per_topic_mesh{topic=\"" TOPIC "\"}") == 1);
  assert_true(sample(text, "libp2p_gossipsub_peers_per_topic_gossipsub{topic=\"" TOPIC "\"}") == 1);
  assert_true(sample(text, "libp2p_pubsub_validation_success_total") == 1);
  assert_true(sample(text, "libp2p_pubsub_validation_failure_total") == 0);
  assert_true(sample(text, "libp2p_pubsub_validation_ignore_total") == 0);
  assert_true(sample(text, "libp2p_gossipsub_received_total") == 1);
  assert_true(sample(text, "libp2p_gossipsub_duplicate_total") == 0);
  assert_true(sample(text, "waku_node_messages_total{type=\"relay\"}") == 1);
  assert_true(sample(text, "waku_relay_messages_total{topic=\"" TOPIC "\",direction=\"in\"}") == 1);
  /* one message without duplicates: gross and net are the same data + topic bytes */
  double gross_in = sample(text, "waku_relay_network_bytes_total{topic=\"" TOPIC
                                 "\",type=\"gross\",direction=\"in\"}");
  double net_in = sample(text, "waku_relay_network_bytes_total{topic=\"" TOPIC
                               "\",type=\"net\",direction=\"in\"}");
  assert_true(net_in > strlen(PAYLOAD) + strlen(TOPIC));
  assert_true(gross_in == net_in);
  assert_true(sample(text, "waku_relay_total_msg_bytes_per_shard{shard=\"" TOPIC "\"}") ==
              strlen(PAYLOAD));
  assert_true(sample(text, "waku_relay_max_msg_bytes_per_shard{shard=\"" TOPIC "\"}") ==
              strlen(PAYLOAD));
  assert_true(sample(text, "waku_relay_avg_msg_bytes_per_shard{shard=\"" TOPIC "\"}") ==
              strlen(PAYLOAD));
  assert_true(sample(text, "waku_msg_validator_signed_outcome_total{result=\"Accept\"}") == 0);
  assert_true(sample(text, "process_resident_memory_bytes") > 1e6);
  assert_true(sample(text, "process_open_fds") > 3);
  assert_true(sample(text, "process_cpu_seconds_total") > 0);
  free(text);
}

static void publisher_figures(void **state) {
  (void)state;
  int status = 0;
  char *text = scrape(ld_metrics_server_port(g_a.srv), "/metrics", &status);
  assert_int_equal(status, 200);
  check_grammar(text);
  assert_true(sample(text, "libp2p_peers") == 1);
  assert_true(sample(text, "waku_connected_peers{direction=\"Out\",protocol=\"/vac/waku/relay/"
                           "2.0.0\"}") == 1);
  assert_true(sample(text, "libp2p_pubsub_messages_published_total{topic=\"" TOPIC "\"}") == 1);
  assert_true(sample(text, "waku_relay_messages_total{topic=\"" TOPIC "\",direction=\"out\"}") ==
              1);
  assert_true(sample(text, "waku_relay_network_bytes_total{topic=\"" TOPIC
                           "\",type=\"net\",direction=\"out\"}") > strlen(PAYLOAD) + strlen(TOPIC));
  assert_true(sample(text, "waku_node_messages_total{type=\"relay\"}") == 1);
  assert_true(sample(text, "libp2p_pubsub_validation_success_total") == 0);
  free(text);
}

static void other_paths(void **state) {
  (void)state;
  int status = 0;
  uint16_t port = ld_metrics_server_port(g_a.srv);
  char *text = scrape(port, "/health", &status);
  assert_int_equal(status, 200);
  assert_string_equal(text, "OK");
  free(text);
  text = scrape(port, "/", &status);
  assert_int_equal(status, 404);
  assert_string_equal(text, "Try /metrics");
  free(text);
  http_response_t r;
  assert_int_equal(http_request_on_loop(&g_loop, port, "GET", "/metrics", NULL, NULL, 0, &r), 0);
  char ct[128];
  assert_string_equal(http_header(&r, "Content-Type", ct, sizeof ct), LD_METRICS_CONTENT_TYPE);
  http_response_free(&r);
}

static void the_node_serves_its_own_metrics(void **state) {
  (void)state;
  uint16_t port = ld_node_metrics_port(g_b.node);
  assert_true(port > 0);
  int status = 0;
  char *text = scrape(port, "/metrics", &status);
  assert_int_equal(status, 200);
  check_grammar(text);
  assert_true(sample(text, "libp2p_peers") == 1);
  assert_true(sample(text, "waku_version{version=\"v" LD_VERSION "\"}") == 1);
  assert_true(sample(text, "libp2p_gossipsub_peers_per_topic_mesh{topic=\"" TOPIC "\"}") == 1);
  assert_true(sample(text, "process_resident_memory_bytes") > 1e6);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(receiver_figures),
      cmocka_unit_test(publisher_figures),
      cmocka_unit_test(other_paths),
      cmocka_unit_test(the_node_serves_its_own_metrics),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
