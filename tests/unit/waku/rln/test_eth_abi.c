/* The ABI and JSON-RPC pieces of the on-chain RLN group: selectors of the contract's functions
 * (as an EVM computes them), call data, words, quantities and response envelopes, with the
 * refusals a lying endpoint meets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/rln/eth_abi.h"

static void selectors_and_call_data(void **state) {
  (void)state;
  char hex[LD_ETH_CALL_HEX_MAX];
  assert_int_equal(ld_eth_call_data("root()", NULL, 0, hex), 0);
  assert_string_equal(hex, "0xebf0c717");
  assert_int_equal(ld_eth_call_data("nextFreeIndex()", NULL, 0, hex), 0);
  assert_string_equal(hex, "0xd8826870");
  uint8_t w[1][32];
  ld_eth_word_from_u64(w[0], 0x0102);
  assert_int_equal(ld_eth_call_data("getMerkleProof(uint40)", w, 1, hex), 0);
  assert_string_equal(hex, "0x00ffef23"
                           "0000000000000000000000000000000000000000000000000000000000000102");
  ld_fr_t x;
  ld_fr_from_u64(&x, 0xabcdef);
  ld_eth_word_from_field(w[0], &x);
  assert_int_equal(ld_eth_call_data("isInMembershipSet(uint256)", w, 1, hex), 0);
  assert_string_equal(hex, "0x686bb1cc"
                           "0000000000000000000000000000000000000000000000000000000000abcdef");
  assert_int_equal(ld_eth_call_data("x()", w, LD_ETH_CALL_MAX_WORDS + 1, hex), LD_ERR_INVALID_ARG);
}

static void words(void **state) {
  (void)state;
  uint8_t data[64] = {0};
  data[31] = 1;
  data[63] = 7;
  ld_fr_t x, seven;
  uint64_t u = 0;
  int b = 0;
  assert_int_equal(ld_eth_abi_bool(data, sizeof data, 0, &b), 0);
  assert_int_equal(b, 1);
  assert_int_equal(ld_eth_abi_bool(data, sizeof data, 1, &b), LD_ERR_OVERFLOW);
  assert_int_equal(ld_eth_abi_u64(data, sizeof data, 1, &u), 0);
  assert_int_equal(u, 7);
  assert_int_equal(ld_eth_abi_field(data, sizeof data, 1, &x), 0);
  ld_fr_from_u64(&seven, 7);
  assert_true(ld_fr_equal(&x, &seven));
  assert_int_equal(ld_eth_abi_u64(data, 63, 1, &u), LD_ERR_TRUNCATED);
  data[32] = 1; /* word 1 above 2^64 */
  assert_int_equal(ld_eth_abi_u64(data, sizeof data, 1, &u), LD_ERR_OVERFLOW);
  memset(data + 32, 0xff, 32); /* above the field's modulus */
  assert_int_equal(ld_eth_abi_field(data, sizeof data, 1, &x), LD_ERR_OVERFLOW);
}

static void quantities_and_data(void **state) {
  (void)state;
  uint64_t v = 0;
  assert_int_equal(ld_eth_quantity("0x539", &v), 0);
  assert_int_equal(v, 1337);
  assert_int_equal(ld_eth_quantity("0x0", &v), 0);
  assert_int_equal(v, 0);
  assert_int_equal(ld_eth_quantity("0xffffffffffffffff", &v), 0);
  assert_int_equal(ld_eth_quantity("0x10000000000000000", &v), LD_ERR_OVERFLOW);
  assert_int_equal(ld_eth_quantity("539", &v), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_eth_quantity("0x", &v), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_eth_quantity(NULL, &v), LD_ERR_BAD_ENCODING);
  uint8_t out[4];
  size_t len = 0;
  assert_int_equal(ld_eth_hex_data("0x0102", out, sizeof out, &len), 0);
  assert_int_equal(len, 2);
  assert_int_equal(ld_eth_hex_data("0x", out, sizeof out, &len), 0);
  assert_int_equal(len, 0);
  assert_int_equal(ld_eth_hex_data("0x0102030405", out, sizeof out, &len), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_eth_hex_data("0x012", out, sizeof out, &len), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_eth_hex_data("0xzz", out, sizeof out, &len), LD_ERR_BAD_ENCODING);
}

static int response(const char *body, char *err) {
  json_t *root = NULL;
  const json_t *result = NULL;
  int rc = ld_eth_rpc_response(body, strlen(body), 3, &root, &result, err, 256);
  if (rc == 0) {
    assert_non_null(root);
    assert_string_equal(json_string_value(result), "0x1");
    json_decref(root);
  } else {
    assert_null(root);
  }
  return rc;
}

static void envelopes(void **state) {
  (void)state;
  char err[256];
  assert_int_equal(response("{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"0x1\"}", err), 0);
  assert_int_equal(response("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":\"0x1\"}", err),
                   LD_ERR_MALFORMED);
  assert_int_equal(response("{\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32000,"
                            "\"message\":\"execution reverted\"}}",
                            err),
                   LD_ERR_PROTOCOL);
  assert_string_equal(err, "JSON-RPC error -32000: execution reverted");
  assert_int_equal(response("{\"jsonrpc\":\"2.0\",\"id\":3}", err), LD_ERR_MALFORMED);
  assert_int_equal(response("<html>", err), LD_ERR_MALFORMED);
  json_t *req = ld_eth_rpc_request(9, "eth_chainId", json_array());
  char *text = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS);
  assert_string_equal(text,
                      "{\"id\":9,\"jsonrpc\":\"2.0\",\"method\":\"eth_chainId\",\"params\":[]}");
  free(text);
  json_decref(req);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(selectors_and_call_data),
      cmocka_unit_test(words),
      cmocka_unit_test(quantities_and_data),
      cmocka_unit_test(envelopes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
