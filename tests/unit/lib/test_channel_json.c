/* The channel manager's configuration from create_node's JSON (lib/channel_json.h): the rate
 * limit manager's budget is RLN's epoch and user message limit when RLN is on, the
 * channelsOverrides keys otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "lib/channel_json.h"
#include "lib/config_json.h"

static ld_lib_config_t *g_cfg;

static int setup(void **state) {
  (void)state;
  g_cfg = calloc(1, sizeof *g_cfg);
  return g_cfg == NULL;
}

static int teardown(void **state) {
  (void)state;
  free(g_cfg);
  return 0;
}

/* Parses `json` and builds the channel manager's configuration as ld_lib_channels_start does. */
static void channels_config(const char *json, ld_channels_config_t *out) {
  char err[1024] = "";
  int rc = ld_lib_config_parse(json, strlen(json), g_cfg, err, sizeof err);
  if (rc != 0)
    fail_msg("parse failed: %s", err);
  rc = ld_lib_channels_config(&g_cfg->channels, out, err, sizeof err);
  if (rc != 0)
    fail_msg("channels config failed: %s", err);
  (void)ld_lib_channels_rln_budget(&g_cfg->node, out);
}

static void without_rln_the_overrides_set_the_budget(void **state) {
  (void)state;
  ld_channels_config_t c;
  channels_config("{\"entryLayer\":\"channels\"}", &c);
  assert_false(c.rate_limit); /* off by default, as the LIP's RateLimitConfig */
  channels_config("{\"entryLayer\":\"channels\",\"channelsOverrides\":{\"rateLimitEnabled\":true,"
                  "\"rateLimitEpochPeriodSec\":7,\"rateLimitMessagesPerEpoch\":3}}",
                  &c);
  assert_true(c.rate_limit);
  assert_int_equal(c.rate_limit_epoch_ms, 7000);
  assert_int_equal(c.rate_limit_per_epoch, 3);
}

/* segmentationEnableReedSolomon: off by default; on, the LIP-243 parity rate 0.125, and a segment
 * size too small for a parity segment's wrapper and one 64-byte shard is refused. */
static void reed_solomon_sets_the_parity_rate(void **state) {
  (void)state;
  ld_channels_config_t c;
  channels_config("{\"entryLayer\":\"channels\"}", &c);
  assert_int_equal(c.parity_rate_ppm, 0);
  channels_config("{\"entryLayer\":\"channels\",\"channelsOverrides\":{"
                  "\"segmentationEnableReedSolomon\":true}}",
                  &c);
  assert_int_equal(c.parity_rate_ppm, LD_CHANNELS_PARITY_RATE_PPM);
  channels_config("{\"entryLayer\":\"channels\",\"channelsOverrides\":{"
                  "\"segmentationEnableReedSolomon\":false}}",
                  &c);
  assert_int_equal(c.parity_rate_ppm, 0);
  const char *small =
      "{\"entryLayer\":\"channels\",\"channelsOverrides\":{"
      "\"segmentationEnableReedSolomon\":true,\"segmentationSegmentSizeBytes\":150}}";
  char err[512] = "";
  assert_int_equal(ld_lib_config_parse(small, strlen(small), g_cfg, err, sizeof err), 0);
  assert_int_equal(ld_lib_channels_config(&g_cfg->channels, &c, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_string_equal(err,
                      "channelsOverrides 'segmentationSegmentSizeBytes' is 150, expected at least "
                      "160 with segmentationEnableReedSolomon");
}

static void with_rln_the_budget_is_the_rln_epoch_and_message_limit(void **state) {
  (void)state;
  ld_channels_config_t c;
  /* messagingOverrides naming an RLN contract turn RLN on (c-api.md §5.4) */
  channels_config("{\"messagingOverrides\":{\"rlnContractAddress\":"
                  "\"0xB9cd878C90E49F797B4431fBF4fb333108CB90e6\","
                  "\"rlnEpochSizeSec\":600},\"channelsOverrides\":{\"rateLimitEnabled\":false,"
                  "\"rateLimitEpochPeriodSec\":7,\"rateLimitMessagesPerEpoch\":3}}",
                  &c);
  assert_true(c.rate_limit);
  assert_int_equal(c.rate_limit_epoch_ms, 600000);
  assert_int_equal(c.rate_limit_per_epoch, LD_NODE_RLN_DEFAULT_USER_MESSAGE_LIMIT);
  /* the node's RLN settings (what --rln-relay-epoch-sec and --rln-relay-user-message-limit set) */
  ld_channels_config_default(&c);
  g_cfg->node.rln.enabled = true;
  g_cfg->node.rln.epoch_sec = 10;
  g_cfg->node.rln.user_message_limit = 20;
  assert_true(ld_lib_channels_rln_budget(&g_cfg->node, &c));
  assert_true(c.rate_limit);
  assert_int_equal(c.rate_limit_epoch_ms, 10000);
  assert_int_equal(c.rate_limit_per_epoch, 20);
}

static void with_rln_and_no_limits_given_the_node_defaults_apply(void **state) {
  (void)state;
  ld_channels_config_t c;
  channels_config("{\"messagingOverrides\":{\"rlnContractAddress\":"
                  "\"0xB9cd878C90E49F797B4431fBF4fb333108CB90e6\"}}",
                  &c);
  assert_true(c.rate_limit);
  assert_int_equal(c.rate_limit_epoch_ms, LD_NODE_RLN_DEFAULT_EPOCH_SEC * 1000u);
  assert_int_equal(c.rate_limit_per_epoch, LD_NODE_RLN_DEFAULT_USER_MESSAGE_LIMIT);
}

static void the_budget_function_leaves_a_config_without_rln_alone(void **state) {
  (void)state;
  ld_channels_config_t c;
  ld_channels_config_default(&c);
  ld_node_config_t *node = calloc(1, sizeof *node);
  assert_non_null(node);
  node->rln = (ld_node_rln_config_t){.enabled = false, .epoch_sec = 5, .user_message_limit = 9};
  assert_false(ld_lib_channels_rln_budget(node, &c));
  assert_false(c.rate_limit);
  node->rln.enabled = true;
  assert_true(ld_lib_channels_rln_budget(node, &c));
  free(node);
  assert_true(c.rate_limit);
  assert_int_equal(c.rate_limit_epoch_ms, 5000);
  assert_int_equal(c.rate_limit_per_epoch, 9);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(without_rln_the_overrides_set_the_budget),
      cmocka_unit_test(reed_solomon_sets_the_parity_rate),
      cmocka_unit_test(with_rln_the_budget_is_the_rln_epoch_and_message_limit),
      cmocka_unit_test(with_rln_and_no_limits_given_the_node_defaults_apply),
      cmocka_unit_test(the_budget_function_leaves_a_config_without_rln_alone),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
