#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "crypto/crypto.h"
#include "testhex.h"

#define KEY LD_X25519_KEY_LEN

static void assert_hex(const uint8_t *got, const char *hex) {
  uint8_t want[KEY];
  assert_int_equal(testhex(hex, want), KEY);
  assert_memory_equal(got, want, KEY);
}

/* RFC 7748 §5.2, the two single-scalar vectors (the second has the u-coordinate's top bit set,
 * which must be ignored). */
static void rfc7748_scalar_vectors(void **state) {
  (void)state;
  uint8_t k[KEY], u[KEY], out[KEY];
  testhex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4", k);
  testhex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c", u);
  assert_int_equal(ld_x25519(out, k, u), 0);
  assert_hex(out, "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552");
  testhex("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d", k);
  testhex("e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493", u);
  assert_int_equal(ld_x25519(out, k, u), 0);
  assert_hex(out, "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957");
}

/* RFC 7748 §5.2, iterated: k = u = 9; then k, u = X25519(k, u), k. */
static void rfc7748_iterated_1_and_1000(void **state) {
  (void)state;
  uint8_t k[KEY] = {9}, u[KEY] = {9}, out[KEY];
  for (int i = 1; i <= 1000; i++) {
    assert_int_equal(ld_x25519(out, k, u), 0);
    memcpy(u, k, KEY);
    memcpy(k, out, KEY);
    if (i == 1) {
      assert_hex(k, "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079");
    }
  }
  assert_hex(k, "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51");
}

/* RFC 7748 §6.1 Diffie-Hellman. */
static void rfc7748_diffie_hellman(void **state) {
  (void)state;
  uint8_t a[KEY], b[KEY], apub[KEY], bpub[KEY], s1[KEY], s2[KEY];
  testhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a", a);
  testhex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb", b);
  ld_x25519_public(apub, a);
  ld_x25519_public(bpub, b);
  assert_hex(apub, "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
  assert_hex(bpub, "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
  assert_int_equal(ld_x25519(s1, a, bpub), 0);
  assert_int_equal(ld_x25519(s2, b, apub), 0);
  const char *shared = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742";
  assert_hex(s1, shared);
  assert_hex(s2, shared);
}

static void generated_keypairs_agree(void **state) {
  (void)state;
  uint8_t a[KEY], b[KEY], apub[KEY], bpub[KEY], s1[KEY], s2[KEY], check[KEY];
  ld_x25519_keypair(apub, a);
  ld_x25519_keypair(bpub, b);
  assert_memory_not_equal(a, b, KEY);
  ld_x25519_public(check, a);
  assert_memory_equal(check, apub, KEY);
  assert_int_equal(ld_x25519(s1, a, bpub), 0);
  assert_int_equal(ld_x25519(s2, b, apub), 0);
  assert_memory_equal(s1, s2, KEY);
}

/* Low-order points give an all-zero shared secret and must be refused. */
static void low_order_points_rejected(void **state) {
  (void)state;
  uint8_t priv[KEY], pub[KEY], out[KEY], zero[KEY] = {0};
  ld_x25519_keypair(pub, priv);
  uint8_t one[KEY] = {1};
  uint8_t order8[KEY];
  testhex("e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800", order8);
  const uint8_t *bad[] = {zero, one, order8};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(out, 0xee, KEY);
    assert_int_equal(ld_x25519(out, priv, bad[i]), LD_ERR_CRYPTO);
    assert_memory_equal(out, zero, KEY);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(rfc7748_scalar_vectors),    cmocka_unit_test(rfc7748_iterated_1_and_1000),
      cmocka_unit_test(rfc7748_diffie_hellman),    cmocka_unit_test(generated_keypairs_agree),
      cmocka_unit_test(low_order_points_rejected),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
