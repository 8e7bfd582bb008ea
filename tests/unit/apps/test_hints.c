/* The next steps the program prints (apps/logosdelivery/hints.c): per part of the node that
 * failed, per refused option, per dial error and service status, and the masked database URL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/error.h"
#include "logosdelivery/flags.h"
#include "logosdelivery/hints.h"
#include "node/config.h"
#include "node/options.h"

static ld_node_config_t g_cfg;

static const char *failure_text(const char *part, int err, const char *what) {
  static char out[2048];
  ld_node_failure_t f;
  memset(&f, 0, sizeof f);
  snprintf(f.part, sizeof f.part, "%s", part);
  snprintf(f.what, sizeof f.what, "%s", what);
  f.err = err;
  ld_app_node_failure_text(&g_cfg, &f, out, sizeof out);
  return out;
}

static void assert_contains(const char *text, const char *needle) {
  if (strstr(text, needle) == NULL)
    fail_msg("'%s' lacks '%s'", text, needle);
}

static void ports_in_use_name_their_flag(void **state) {
  (void)state;
  struct {
    const char *part, *what, *flag;
  } cases[] = {
      {"tcp", "/ip4/0.0.0.0/tcp/60000", "--tcp-port"},
      {"websocket", "/ip4/0.0.0.0/tcp/8000/ws", "--websocket-port"},
      {"discv5", "0.0.0.0:9000", "--discv5-udp-port"},
      {"rest", "127.0.0.1:8645", "--rest-port"},
      {"metrics", "127.0.0.1:8008", "--metrics-server-port"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *t = failure_text(cases[i].part, LD_ERR_ADDR_IN_USE, cases[i].what);
    char hint[96];
    snprintf(hint, sizeof hint, "choose another port with %s (0 picks a free one)", cases[i].flag);
    assert_memory_equal(t, cases[i].flag, strlen(cases[i].flag));
    assert_contains(t, cases[i].what);
    assert_contains(t, "address already in use");
    assert_contains(t, hint);
  }
  /* another bind error: the address, not the port */
  snprintf(g_cfg.listen_address, sizeof g_cfg.listen_address, "10.9.8.7");
  const char *t = failure_text("tcp", LD_ERR_IO, "/ip4/10.9.8.7/tcp/60000");
  assert_contains(t, "check that 10.9.8.7 is an address of this machine (--listen-address)");
}

static void archive_failures_say_which_server_or_folder(void **state) {
  (void)state;
  snprintf(g_cfg.store_db_url, sizeof g_cfg.store_db_url, "postgres://u:secret@db:5432/msgs");
  const char *t = failure_text("archive", LD_ERR_DB, "FATAL: password authentication failed");
  assert_contains(t, "--store-message-db-url=postgres://u:***@db:5432/msgs");
  assert_null(strstr(t, "secret"));
  assert_contains(t, "check the user and password in --store-message-db-url");
  t = failure_text("archive", LD_ERR_DB, "FATAL: database \"msgs\" does not exist");
  assert_contains(t, "create the database (createdb)");
  t = failure_text("archive", LD_ERR_DB, "Connection refused");
  assert_contains(t, "check that PostgreSQL runs at the host and port");

  snprintf(g_cfg.store_db_url, sizeof g_cfg.store_db_url, "sqlite:///nonexistent-ld/a/s.db");
  t = failure_text("archive", LD_ERR_DB, "unable to open database file");
  assert_contains(t, "the folder /nonexistent-ld/a does not exist: create it (mkdir -p "
                     "/nonexistent-ld/a)");
  char dir[] = "/tmp/ld-hints-XXXXXX";
  assert_non_null(mkdtemp(dir));
  snprintf(g_cfg.store_db_url, sizeof g_cfg.store_db_url, "sqlite://%s/s.db", dir);
  t = failure_text("archive", LD_ERR_DB, "disk I/O error");
  assert_contains(t, "is a database this user may read and write");
  rmdir(dir);
}

static void other_parts_name_their_flags(void **state) {
  (void)state;
  assert_contains(failure_text("rln", LD_ERR_IO, "rln-relay-circuit-dir /x: not found"),
                  "point --rln-relay-circuit-dir at the folder holding rln_final.zkey");
  assert_contains(failure_text("rln", LD_ERR_INVALID_ARG,
                               "rln-relay-cred-path needs rln-relay-membership-index"),
                  "give --rln-relay-membership-index");
  assert_contains(failure_text("peer-store", LD_ERR_DB, "/nonexistent-ld/peers.db"),
                  "or run with --peer-persistence=false");
  snprintf(g_cfg.store_retention, sizeof g_cfg.store_retention, "forever");
  assert_contains(failure_text("retention", LD_ERR_INVALID_ARG, "invalid format"),
                  "--store-message-retention-policy=forever: invalid format; write time:");
  assert_contains(failure_text("nat", LD_ERR_IO, "gateway"), "see the log lines above");
}

static void option_hints_and_masks(void **state) {
  (void)state;
  char hint[512];
  ld_app_option_hint(ld_node_option_find_cli("storenode"), hint, sizeof hint);
  assert_contains(hint, "/p2p/");
  ld_app_option_hint(ld_node_option_find_cli("tcp-port"), hint, sizeof hint);
  assert_contains(hint, "`logosdelivery --help` says of --tcp-port: ");

  char out[256];
  ld_app_mask_url("postgres://user:pw@h:1/d", out, sizeof out);
  assert_string_equal(out, "postgres://user:***@h:1/d");
  ld_app_mask_url("postgres://user@h/d", out, sizeof out);
  assert_string_equal(out, "postgres://user@h/d");
  ld_app_mask_url("sqlite://./a:b@c.db", out, sizeof out);
  assert_string_equal(out, "sqlite://./a:b@c.db");

  char buf[384];
  assert_contains(ld_app_dial_hint(LD_ERR_REFUSED, "--peer", buf, sizeof buf),
                  "use in --peer the address its log shows");
  assert_contains(ld_app_dial_hint(LD_ERR_PEER_ID_MISMATCH, "--peer", buf, sizeof buf),
                  "another node answers there");
  assert_contains(
      ld_app_service_hint(0, LD_ERR_PROTOCOL_UNSUPPORTED, NULL, "--store=true", buf, sizeof buf),
      "start it with --store=true");
  assert_contains(ld_app_service_hint(505, 0, "no peers", "--lightpush=true", buf, sizeof buf),
                  "no relay peers on that shard");
  assert_contains(ld_app_service_hint(503, 0,
                                      "SERVICE_UNAVAILABLE: not supported by this store "
                                      "node: wayback",
                                      "--store=true", buf, sizeof buf),
                  "--store-wayback");
}

static void closest_flag_is_a_typo_away(void **state) {
  (void)state;
  int64_t port;
  bool relay;
  const ld_flag_t t[] = {
      {"tcp-port", LD_FLAG_INT, &port, 0, 65535, ""},
      {"relay", LD_FLAG_BOOL, &relay, 0, 0, ""},
      {"rest", LD_FLAG_BOOL, &relay, 0, 0, ""},
  };
  assert_string_equal(ld_flags_closest(t, 3, "tcp-prot", 8), "tcp-port");
  assert_string_equal(ld_flags_closest(t, 3, "realy", 5), "relay");
  assert_string_equal(ld_flags_closest(t, 3, "resty", 5), "rest");
  assert_null(ld_flags_closest(t, 3, "bogus", 5));
  assert_null(ld_flags_closest(t, 3, "x", 1));
}

static int reset(void **state) {
  (void)state;
  ld_node_config_default(&g_cfg);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(ports_in_use_name_their_flag, reset),
      cmocka_unit_test_setup(archive_failures_say_which_server_or_folder, reset),
      cmocka_unit_test_setup(other_parts_name_their_flags, reset),
      cmocka_unit_test_setup(option_hints_and_masks, reset),
      cmocka_unit_test_setup(closest_flag_is_a_typo_away, reset),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
