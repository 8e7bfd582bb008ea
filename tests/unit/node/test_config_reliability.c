/* The reliability options of the node configuration: --reliability-mode names and
 * --reliability-window durations (units, bounds, bad text), and the defaults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "node/config.h"

static void defaults_are_store_two_peers_seven_minutes(void **state) {
  (void)state;
  ld_node_config_t cfg;
  ld_node_config_default(&cfg);
  assert_int_equal(cfg.reliability_mode, LD_NODE_RELIABILITY_STORE);
  assert_int_equal(cfg.reliability_confirm_peers, 2);
  assert_int_equal(cfg.reliability_window_ms, 7 * 60 * 1000);
  assert_string_equal(ld_node_reliability_mode_name(cfg.reliability_mode), "store");
}

static void modes(void **state) {
  (void)state;
  ld_node_config_t cfg;
  ld_node_config_default(&cfg);
  char err[256] = "";
  assert_int_equal(ld_node_config_set_reliability_mode(&cfg, "p2p", err, sizeof err), 0);
  assert_int_equal(cfg.reliability_mode, LD_NODE_RELIABILITY_P2P);
  assert_string_equal(ld_node_reliability_mode_name(cfg.reliability_mode), "p2p");
  assert_int_equal(ld_node_config_set_reliability_mode(&cfg, "P2P", err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "store or p2p"));
  assert_int_equal(cfg.reliability_mode, LD_NODE_RELIABILITY_P2P); /* unchanged */
  assert_int_equal(ld_node_config_set_reliability_mode(&cfg, "store", err, sizeof err), 0);
  assert_int_equal(cfg.reliability_mode, LD_NODE_RELIABILITY_STORE);
}

/* 60 s at least: presence counts only messages newer than the window's start plus 20 s of clock
 * tolerance, so a 20 s window would never confirm anything. */
static void windows(void **state) {
  (void)state;
  static const struct {
    const char *text;
    uint64_t ms; /* 0: refused */
  } k[] = {
      {"7m", 420000},   {"420", 420000},
      {"420s", 420000}, {"90000ms", 90000},
      {"1h", 3600000},  {"24h", 86400000},
      {"60s", 60000},   {"1m", 60000},
      {"59s", 0},       {"20s", 0},
      {"10s", 0},       {"25h", 0},
      {"", 0},          {"m", 0},
      {"-5m", 0},       {"5d", 0},
      {"7 m", 0},       {"99999999999999999999h", 0},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    ld_node_config_t cfg;
    ld_node_config_default(&cfg);
    char err[256] = "";
    int rc = ld_node_config_set_reliability_window(&cfg, k[i].text, err, sizeof err);
    if (k[i].ms == 0) {
      assert_int_equal(rc, LD_ERR_INVALID_ARG);
      assert_int_equal(cfg.reliability_window_ms, 7 * 60 * 1000);
      assert_non_null(strstr(err, "duration"));
    } else {
      assert_int_equal(rc, 0);
      assert_int_equal(cfg.reliability_window_ms, k[i].ms);
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_are_store_two_peers_seven_minutes),
      cmocka_unit_test(modes),
      cmocka_unit_test(windows),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
