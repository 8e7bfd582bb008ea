/* RLN-relay's static group and identity files: big-endian 0x-hex field elements, canonical only,
 * members in order, clear refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "waku/rln/group_file.h"

#define R_MINUS_1 "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000000"
#define R "0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001"

static void assert_small(const ld_fr_t *x, uint64_t v) {
  ld_fr_t y;
  ld_fr_from_u64(&y, v);
  assert_memory_equal(x, &y, sizeof y);
}

static void field_hex_is_big_endian_and_canonical(void **state) {
  (void)state;
  ld_fr_t x;
  assert_int_equal(ld_rln_field_from_hex("0x2a", &x), 0);
  assert_small(&x, 42);
  assert_int_equal(ld_rln_field_from_hex("0X0102", &x), 0);
  assert_small(&x, 0x102);
  assert_int_equal(ld_rln_field_from_hex(R_MINUS_1, &x), 0);
  uint8_t le[32];
  ld_fr_to_bytes(le, &x);
  assert_int_equal(le[0], 0x00); /* r - 1 ends in ...f0000000: least significant byte first */
  assert_int_equal(le[3], 0xf0);
  assert_int_equal(le[31], 0x30);
  assert_int_equal(ld_rln_field_from_hex(R, &x), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_rln_field_from_hex("0x", &x), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_rln_field_from_hex("2a", &x), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_rln_field_from_hex("0xzz", &x), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_rln_field_from_hex(
                       "0x00000000000000000000000000000000000000000000000000000000000000001", &x),
                   LD_ERR_BAD_ENCODING);
}

static void group_in_order_and_refusals_named(void **state) {
  (void)state;
  json_t *root = json_loads("[\"0x1\", \"0x2\", \"0x3\"]", 0, NULL);
  ld_fr_t *leaves = NULL;
  size_t n = 0;
  char err[256] = "";
  assert_int_equal(ld_rln_group_from_json(root, 10, &leaves, &n, err, sizeof err), 0);
  assert_int_equal(n, 3);
  for (size_t i = 0; i < n; i++)
    assert_small(&leaves[i], i + 1);
  free(leaves);
  assert_int_equal(ld_rln_group_from_json(root, 2, &leaves, &n, err, sizeof err), LD_ERR_MALFORMED);
  json_decref(root);

  root = json_loads("[\"0x1\", \"" R "\"]", 0, NULL);
  assert_int_equal(ld_rln_group_from_json(root, 10, &leaves, &n, err, sizeof err),
                   LD_ERR_MALFORMED);
  assert_string_equal(err, "member 1 is not a 0x-hex field element");
  json_decref(root);
  root = json_loads("[]", 0, NULL);
  assert_int_equal(ld_rln_group_from_json(root, 10, &leaves, &n, err, sizeof err),
                   LD_ERR_MALFORMED);
  json_decref(root);
  root = json_loads("{\"a\": 1}", 0, NULL);
  assert_int_equal(ld_rln_group_from_json(root, 10, &leaves, &n, err, sizeof err),
                   LD_ERR_MALFORMED);
  json_decref(root);
}

static void identity_object(void **state) {
  (void)state;
  ld_fr_t s;
  json_t *root = json_loads("{\"identitySecret\": \"0x07\"}", 0, NULL);
  assert_int_equal(ld_rln_identity_from_json(root, &s), 0);
  assert_small(&s, 7);
  json_decref(root);
  root = json_loads("{\"identitySecret\": 7}", 0, NULL);
  assert_int_equal(ld_rln_identity_from_json(root, &s), LD_ERR_MALFORMED);
  json_decref(root);
  root = json_loads("[\"0x07\"]", 0, NULL);
  assert_int_equal(ld_rln_identity_from_json(root, &s), LD_ERR_MALFORMED);
  json_decref(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(field_hex_is_big_endian_and_canonical),
      cmocka_unit_test(group_in_order_and_refusals_named),
      cmocka_unit_test(identity_object),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
