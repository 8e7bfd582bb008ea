/* The metrics registry and the Prometheus text format 0.0.4: exact exposition of counters,
 * gauges and histograms, label escaping, number formatting, collectors, caps and validation. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "metrics/metrics.h"
#include "metrics/process.h"

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

static char *fmt(double v) {
  static char text[64];
  ld_buf_t out;
  ld_buf_init(&out);
  assert_int_equal(ld_metrics_format_value(&out, v), 0);
  snprintf(text, sizeof text, "%.*s", (int)out.len, (const char *)out.data);
  ld_buf_clear(&out);
  return text;
}

static void exposes_counters_and_gauges_exactly(void **state) {
  (void)state;
  ld_metrics_t *reg = ld_metrics_new();
  const char *labels[] = {"type"};
  ld_metric_t *c =
      ld_metrics_counter(reg, "waku_node_messages", "number of messages received", labels, 1);
  ld_metric_t *g = ld_metrics_gauge(reg, "libp2p_peers", "total connected peers", NULL, 0);
  assert_non_null(c);
  assert_non_null(g);
  assert_int_equal(ld_metric_add(c, (const char *const[]){"relay"}, 3), 0);
  assert_int_equal(ld_metric_add(c, (const char *const[]){"relay"}, 2), 0);
  assert_int_equal(ld_metric_add(c, (const char *const[]){"relay"}, -7), 0); /* ignored */
  assert_int_equal(ld_metric_add(c, (const char *const[]){"lightpush"}, 1), 0);
  assert_int_equal(ld_metric_set(g, NULL, 4), 0);
  ld_metric_series_add(ld_metric_series(g, NULL), -1.5);
  char *text = expose(reg);
  assert_string_equal(text, "# HELP waku_node_messages_total number of messages received\n"
                            "# TYPE waku_node_messages_total counter\n"
                            "waku_node_messages_total{type=\"relay\"} 5\n"
                            "waku_node_messages_total{type=\"lightpush\"} 1\n"
                            "# HELP libp2p_peers total connected peers\n"
                            "# TYPE libp2p_peers gauge\n"
                            "libp2p_peers 2.5\n");
  free(text);
  /* a family without series keeps its header lines */
  assert_int_equal(ld_metric_remove(c, (const char *const[]){"relay"}), 0);
  assert_int_equal(ld_metric_remove(c, (const char *const[]){"relay"}), LD_ERR_NOT_FOUND);
  assert_int_equal(ld_metric_remove(c, (const char *const[]){"lightpush"}), 0);
  assert_int_equal(ld_metrics_remove_family(reg, "libp2p_peers"), 0);
  text = expose(reg);
  assert_string_equal(text, "# HELP waku_node_messages_total number of messages received\n"
                            "# TYPE waku_node_messages_total counter\n");
  free(text);
  ld_metrics_free(reg);
}

static void exposes_histograms_exactly(void **state) {
  (void)state;
  ld_metrics_t *reg = ld_metrics_new();
  const double buckets[] = {0.5, 1, 5};
  const char *labels[] = {"topic"};
  ld_metric_t *h = ld_metrics_histogram(reg, "waku_histogram_message_size",
                                        "message size histogram in kB", labels, 1, buckets, 3);
  assert_non_null(h);
  const char *t[] = {"/waku/2/rs/0/0"};
  ld_metric_observe(h, t, 0.25);
  ld_metric_observe(h, t, 1);
  ld_metric_observe(h, t, 3);
  ld_metric_observe(h, t, 100);
  ld_metric_t *plain = ld_metrics_histogram(reg, "d", "", NULL, 0, NULL, 0);
  ld_metric_observe(plain, NULL, 2);
  char *text = expose(reg);
  assert_string_equal(text,
                      "# HELP waku_histogram_message_size message size histogram in kB\n"
                      "# TYPE waku_histogram_message_size histogram\n"
                      "waku_histogram_message_size_bucket{topic=\"/waku/2/rs/0/0\",le=\"0.5\"} 1\n"
                      "waku_histogram_message_size_bucket{topic=\"/waku/2/rs/0/0\",le=\"1\"} 2\n"
                      "waku_histogram_message_size_bucket{topic=\"/waku/2/rs/0/0\",le=\"5\"} 3\n"
                      "waku_histogram_message_size_bucket{topic=\"/waku/2/rs/0/0\",le=\"+Inf\"} 4\n"
                      "waku_histogram_message_size_sum{topic=\"/waku/2/rs/0/0\"} 104.25\n"
                      "waku_histogram_message_size_count{topic=\"/waku/2/rs/0/0\"} 4\n"
                      "# HELP d \n"
                      "# TYPE d histogram\n"
                      "d_bucket{le=\"+Inf\"} 1\n"
                      "d_sum 2\n"
                      "d_count 1\n");
  free(text);
  ld_metrics_free(reg);
}

static void escapes_labels_and_help(void **state) {
  (void)state;
  ld_metrics_t *reg = ld_metrics_new();
  const char *labels[] = {"a", "b"};
  ld_metric_t *g = ld_metrics_gauge(reg, "x", "line one\nback\\slash \"q\"", labels, 2);
  ld_metric_set(g, (const char *const[]){"q\"uote", "back\\slash\nnew"}, 1);
  ld_metric_set(g,
                (const char *const[]){"bad\xff"
                                      "utf8\xc3",
                                      "\xe2\x82\xac"},
                2);
  char *text = expose(reg);
  assert_string_equal(text, "# HELP x line one\\nback\\\\slash \"q\"\n"
                            "# TYPE x gauge\n"
                            "x{a=\"q\\\"uote\",b=\"back\\\\slash\\nnew\"} 1\n"
                            "x{a=\"bad\xEF\xBF\xBDutf8\xEF\xBF\xBD\",b=\"\xe2\x82\xac\"} 2\n");
  free(text);
  ld_metrics_free(reg);
}

static void formats_numbers(void **state) {
  (void)state;
  assert_string_equal(fmt(0), "0");
  assert_string_equal(fmt(-0.0), "0");
  assert_string_equal(fmt(42), "42");
  assert_string_equal(fmt(-3), "-3");
  assert_string_equal(fmt(0.1), "0.1");
  assert_string_equal(fmt(1.0 / 3), "0.3333333333333333");
  assert_string_equal(fmt(9007199254740992.0), "9007199254740992");
  assert_string_equal(fmt(1e20), "1e+20");
  assert_string_equal(fmt(1.5e-7), "1.5e-07");
  assert_string_equal(fmt(INFINITY), "+Inf");
  assert_string_equal(fmt(-INFINITY), "-Inf");
  assert_string_equal(fmt(NAN), "NaN");
}

typedef struct col {
  int calls;
} col_t;

static void collect_gauge(ld_metrics_emitter_t *e, void *ud) {
  col_t *c = ud;
  c->calls++;
  ld_metrics_emit(e, (const char *const[]){"/waku/2/rs/0/0"}, 6);
  ld_metrics_emit(e, (const char *const[]){"/waku/2/rs/0/1"}, 0);
  ld_metrics_emit(e, NULL, 1);                             /* labels missing: dropped */
  ld_metrics_emit_histogram(e, NULL, NULL, NULL, 0, 0, 0); /* wrong type: dropped */
}

static void collect_counter(ld_metrics_emitter_t *e, void *ud) {
  (void)ud;
  ld_metrics_emit(e, NULL, 12345678901.0);
}

static void collect_histogram(ld_metrics_emitter_t *e, void *ud) {
  (void)ud;
  const double bounds[] = {1, 2};
  const uint64_t counts[] = {3, 5};
  ld_metrics_emit_histogram(e, (const char *const[]){"in"}, bounds, counts, 2, 6, 9.5);
  const double bad[] = {2, 1};
  ld_metrics_emit_histogram(e, (const char *const[]){"bad"}, bad, counts, 2, 6, 9.5);
}

static void collectors_run_at_scrape_time(void **state) {
  (void)state;
  ld_metrics_t *reg = ld_metrics_new();
  col_t c = {0};
  const char *topic[] = {"topic"};
  assert_int_equal(ld_metrics_add_collector(reg, "libp2p_gossipsub_peers_per_topic_mesh",
                                            LD_METRIC_GAUGE, "gossipsub peers per topic in mesh",
                                            topic, 1, collect_gauge, &c),
                   0);
  assert_int_equal(ld_metrics_add_collector(reg, "libp2p_pubsub_validation_success",
                                            LD_METRIC_COUNTER, "ok", NULL, 0, collect_counter,
                                            NULL),
                   0);
  const char *dir[] = {"direction"};
  assert_int_equal(ld_metrics_add_collector(reg, "h", LD_METRIC_HISTOGRAM, "hist", dir, 1,
                                            collect_histogram, NULL),
                   0);
  assert_int_equal(
      ld_metrics_add_collector(reg, "h", LD_METRIC_GAUGE, "dup", NULL, 0, collect_counter, NULL),
      LD_ERR_EXISTS);
  assert_int_equal(c.calls, 0);
  char *text = expose(reg);
  assert_int_equal(c.calls, 1);
  assert_string_equal(text, "# HELP libp2p_gossipsub_peers_per_topic_mesh gossipsub peers per "
                            "topic in mesh\n"
                            "# TYPE libp2p_gossipsub_peers_per_topic_mesh gauge\n"
                            "libp2p_gossipsub_peers_per_topic_mesh{topic=\"/waku/2/rs/0/0\"} 6\n"
                            "libp2p_gossipsub_peers_per_topic_mesh{topic=\"/waku/2/rs/0/1\"} 0\n"
                            "# HELP libp2p_pubsub_validation_success_total ok\n"
                            "# TYPE libp2p_pubsub_validation_success_total counter\n"
                            "libp2p_pubsub_validation_success_total 12345678901\n"
                            "# HELP h hist\n"
                            "# TYPE h histogram\n"
                            "h_bucket{direction=\"in\",le=\"1\"} 3\n"
                            "h_bucket{direction=\"in\",le=\"2\"} 5\n"
                            "h_bucket{direction=\"in\",le=\"+Inf\"} 6\n"
                            "h_sum{direction=\"in\"} 9.5\n"
                            "h_count{direction=\"in\"} 6\n");
  free(text);
  /* a collected family has no stored series */
  ld_metric_t *fake = NULL;
  assert_null(ld_metric_series(fake, NULL));
  ld_metrics_free(reg);
}

static void validates_names_and_labels(void **state) {
  (void)state;
  ld_metrics_t *reg = ld_metrics_new();
  assert_null(ld_metrics_gauge(reg, "", "", NULL, 0));
  assert_null(ld_metrics_gauge(reg, "1abc", "", NULL, 0));
  assert_null(ld_metrics_gauge(reg, "a-b", "", NULL, 0));
  assert_non_null(ld_metrics_gauge(reg, "ns:sub_name", "", NULL, 0));
  assert_null(ld_metrics_gauge(reg, "ns:sub_name", "", NULL, 0));
  assert_null(ld_metrics_gauge(reg, "g1", "", (const char *const[]){"__reserved"}, 1));
  assert_null(ld_metrics_gauge(reg, "g2", "", (const char *const[]){"a:b"}, 1));
  assert_null(ld_metrics_gauge(reg, "g3", "", (const char *const[]){"a", "a"}, 2));
  assert_null(ld_metrics_histogram(reg, "h1", "", (const char *const[]){"le"}, 1, NULL, 0));
  assert_null(ld_metrics_histogram(reg, "h2", "", NULL, 0, (const double[]){2, 1}, 2));
  assert_null(ld_metrics_histogram(reg, "h3", "", NULL, 0, (const double[]){1, INFINITY}, 2));
  assert_non_null(ld_metrics_gauge(reg, "g4", "", (const char *const[]){"_ok1"}, 1));
  const char *many[LD_METRICS_MAX_LABELS + 1];
  char names[LD_METRICS_MAX_LABELS + 1][8];
  for (int i = 0; i <= LD_METRICS_MAX_LABELS; i++) {
    snprintf(names[i], sizeof names[i], "l%d", i);
    many[i] = names[i];
  }
  assert_null(ld_metrics_gauge(reg, "g5", "", many, LD_METRICS_MAX_LABELS + 1));
  assert_non_null(ld_metrics_gauge(reg, "g6", "", many, LD_METRICS_MAX_LABELS));
  ld_metrics_free(reg);
}

static void caps_series_per_family(void **state) {
  (void)state;
  ld_metrics_t *reg = ld_metrics_new();
  ld_metric_t *c = ld_metrics_counter(reg, "c", "", (const char *const[]){"topic"}, 1);
  char v[32];
  for (int i = 0; i < LD_METRICS_MAX_SERIES; i++) {
    snprintf(v, sizeof v, "t%d", i);
    assert_int_equal(ld_metric_add(c, (const char *const[]){v}, 1), 0);
  }
  assert_int_equal(ld_metric_add(c, (const char *const[]){"one-more"}, 1), LD_ERR_LIMIT);
  assert_int_equal(ld_metric_add(c, (const char *const[]){"t7"}, 1), 0); /* existing still ok */
  assert_true(ld_metric_series_value(ld_metric_series(c, (const char *const[]){"t7"})) == 2);
  /* type mismatches are no-ops */
  ld_metric_series_t *s = ld_metric_series(c, (const char *const[]){"t1"});
  ld_metric_series_set(s, 100);
  ld_metric_series_observe(s, 100);
  assert_true(ld_metric_series_value(s) == 1);
  ld_metrics_free(reg);
}

static void process_metrics_are_sane(void **state) {
  (void)state;
  ld_process_stats_t st;
  assert_int_equal(ld_process_stats_read(&st), 0);
  assert_true(st.resident_bytes > 1024 * 1024);
  assert_true(st.virtual_bytes >= st.resident_bytes);
  assert_true(st.start_time_seconds > 1.6e9);
  assert_true(st.open_fds >= 3);
  assert_true(st.cpu_seconds >= 0);
  ld_metrics_t *reg = ld_metrics_new();
  assert_int_equal(ld_metrics_register_process(reg), 0);
  assert_int_equal(ld_metrics_register_process(reg), LD_ERR_EXISTS);
  char *text = expose(reg);
  assert_non_null(
      strstr(text, "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total "));
  assert_non_null(strstr(text, "\nprocess_resident_memory_bytes "));
  assert_non_null(strstr(text, "\nprocess_virtual_memory_bytes "));
  assert_non_null(strstr(text, "\nprocess_start_time_seconds "));
  assert_non_null(strstr(text, "\nprocess_open_fds "));
  assert_non_null(strstr(text, "\nprocess_max_fds "));
  free(text);
  ld_metrics_free(reg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(exposes_counters_and_gauges_exactly),
      cmocka_unit_test(exposes_histograms_exactly),
      cmocka_unit_test(escapes_labels_and_help),
      cmocka_unit_test(formats_numbers),
      cmocka_unit_test(collectors_run_at_scrape_time),
      cmocka_unit_test(validates_names_and_labels),
      cmocka_unit_test(caps_series_per_family),
      cmocka_unit_test(process_metrics_are_sane),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
