/* The node's metric families without any source attached: every family is registered under its
 * nwaku name, sources that are missing give no samples, and freeing removes the families. (The
 * figures with real sources are checked in tests/integration/test_metrics_server.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "metrics/node_metrics.h"

static char *expose(ld_metrics_t *reg) {
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_metrics_expose(reg, &out), 0);
  char *text = malloc(out.len + 1);
  if (out.len > 0)
    memcpy(text, out.data, out.len);
  text[out.len] = '\0';
  ld_buf_clear(&out);
  return text;
}

static size_t count_lines(const char *text, const char *prefix) {
  size_t n = 0;
  for (const char *p = text; *p != '\0';) {
    n += strncmp(p, prefix, strlen(prefix)) == 0;
    const char *eol = strchr(p, '\n');
    p = eol != NULL ? eol + 1 : p + strlen(p);
  }
  return n;
}

static void families_without_sources(void **state) {
  (void)state;
  ld_metrics_t *reg = ld_metrics_new();
  ld_node_metrics_sources_t src = {0};
  ld_node_metrics_t *nm = ld_node_metrics_new(reg, &src);
  assert_non_null(nm);
  char *text = expose(reg);
  static const char *const names[] = {
      "waku_version gauge",
      "libp2p_peers gauge",
      "waku_connected_peers gauge",
      "waku_connected_peers_per_agent gauge",
      "waku_connected_peers_per_shard gauge",
      "waku_peer_store_size gauge",
      "libp2p_pubsub_peers gauge",
      "libp2p_pubsub_topics gauge",
      "libp2p_gossipsub_peers_per_topic_mesh gauge",
      "libp2p_gossipsub_peers_per_topic_gossipsub gauge",
      "libp2p_pubsub_validation_success_total counter",
      "libp2p_pubsub_validation_failure_total counter",
      "libp2p_pubsub_validation_ignore_total counter",
      "libp2p_gossipsub_received_total counter",
      "libp2p_gossipsub_duplicate_total counter",
      "libp2p_gossipsub_bad_score_disconnection_total counter",
      "libp2p_pubsub_messages_published_total counter",
      "waku_relay_messages_total counter",
      "waku_relay_network_bytes_total counter",
      "waku_node_messages_total counter",
      "waku_relay_total_msg_bytes_per_shard gauge",
      "waku_relay_max_msg_bytes_per_shard gauge",
      "waku_relay_avg_msg_bytes_per_shard gauge",
      "waku_msg_validator_signed_outcome_total counter",
      "waku_relay_message_latency_seconds histogram",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char line[128];
    snprintf(line, sizeof line, "# TYPE %s\n", names[i]);
    assert_non_null(strstr(text, line));
  }
  /* the only sample is the version; everything else needs a source */
  assert_int_equal(count_lines(text, "#"), 2 * (sizeof names / sizeof names[0]));
  assert_int_equal(count_lines(text, "waku_version{version=\"v" LD_VERSION "\"} 1"), 1);
  assert_int_equal(count_lines(text, ""), 2 * (sizeof names / sizeof names[0]) + 1);
  free(text);
  /* names are taken: a second set cannot register */
  assert_null(ld_node_metrics_new(reg, &src));
  ld_node_metrics_free(nm);
  text = expose(reg);
  assert_string_equal(text, "");
  free(text);
  /* and after freeing they can */
  nm = ld_node_metrics_new(reg, &src);
  assert_non_null(nm);
  ld_node_metrics_set_router(nm, NULL);
  ld_node_metrics_set_relay(nm, NULL);
  ld_node_metrics_free(nm);
  ld_node_metrics_free(NULL);
  ld_metrics_free(reg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(families_without_sources),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
