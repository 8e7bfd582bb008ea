#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "node/config.h"
#include "p2p/peerid.h"

static void defaults_are_nwakus(void **state) {
  (void)state;
  ld_node_config_t cfg;
  ld_node_config_default(&cfg);
  assert_string_equal(cfg.listen_address, "0.0.0.0");
  assert_int_equal(cfg.tcp_port, 60000);
  assert_int_equal(cfg.max_connections, 50);
  assert_false(cfg.has_nodekey);
}

static void nodekey_gives_the_spec_peer_id(void **state) {
  (void)state;
  ld_node_config_t cfg;
  char err[128];
  ld_node_config_default(&cfg);
  /* the secp256k1 key of the peer-ID spec vectors */
  const char *hex = "53DADF1D5A164D6B4ACDB15E24AA4C5B1D3461BDBD42ABEDB0A4404D56CED8FB";
  assert_int_equal(ld_node_config_set_nodekey_hex(&cfg, hex, err, sizeof err), 0);
  assert_true(cfg.has_nodekey);
  ld_pubkey_t pub;
  ld_peerid_t id;
  char text[LD_PEERID_TEXT_MAX];
  ld_privkey_public(&cfg.nodekey, &pub);
  assert_int_equal(ld_peerid_from_pubkey(&id, &pub), 0);
  assert_true(ld_peerid_to_text(&id, text, sizeof text) > 0);
  assert_string_equal(text, "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY");
}

static void bad_nodekeys_are_refused_with_a_reason(void **state) {
  (void)state;
  ld_node_config_t cfg;
  char err[128];
  ld_node_config_default(&cfg);
  assert_int_not_equal(ld_node_config_set_nodekey_hex(&cfg, "abcd", err, sizeof err), 0);
  assert_non_null(strstr(err, "64 hex"));
  assert_int_not_equal(ld_node_config_set_nodekey_hex(&cfg, "zz", err, sizeof err), 0);
  const char *zero = "0000000000000000000000000000000000000000000000000000000000000000";
  assert_int_equal(ld_node_config_set_nodekey_hex(&cfg, zero, err, sizeof err), LD_ERR_BAD_KEY);
  assert_false(cfg.has_nodekey);
}

static void ports_shift_is_added_and_checked(void **state) {
  (void)state;
  ld_node_config_t cfg;
  char err[128];
  ld_node_config_default(&cfg);
  assert_int_equal(ld_node_config_set_listen(&cfg, "127.0.0.1", 60000, 5, err, sizeof err), 0);
  assert_int_equal(cfg.tcp_port, 60005);
  assert_int_equal(ld_node_config_set_listen(&cfg, "::1", 0, 0, err, sizeof err), 0);
  assert_int_equal(cfg.tcp_port, 0);
  assert_int_equal(ld_node_config_set_listen(&cfg, "127.0.0.1", 65535, 1, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_int_equal(ld_node_config_set_listen(&cfg, "example.com", 1, 0, err, sizeof err),
                   LD_ERR_INVALID_ARG);
  assert_non_null(strstr(err, "example.com"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults_are_nwakus),
      cmocka_unit_test(nodekey_gives_the_spec_peer_id),
      cmocka_unit_test(bad_nodekeys_are_refused_with_a_reason),
      cmocka_unit_test(ports_shift_is_added_and_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
