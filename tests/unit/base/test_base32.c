#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base32.h"
#include "base/error.h"
#include "base/hex.h"

/* RFC 4648 §10 BASE32 vectors, padding removed and lowercased (multibase 'b' form) */
static const struct {
  const char *raw;
  const char *text;
} rfc4648[] = {
    {"", ""},
    {"f", "my"},
    {"fo", "mzxq"},
    {"foo", "mzxw6"},
    {"foob", "mzxw6yq"},
    {"fooba", "mzxw6ytb"},
    {"foobar", "mzxw6ytboi"},
};

/* libp2p peer IDs as CIDv1 (01 72 ‖ multihash) in base32 (specs digest §3.3-3.4); the text
 * here drops the multibase prefix 'b'. */
static const struct {
  const char *hex;
  const char *text;
} cids[] = {
    {"01720024080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e",
     "afzaajaiaejcahwr5d5ofrfbis4l5d6uwr57hu5tjodrypfm6yaq6dsc2r2pzyt6"},
    {"0172002508021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99",
     "afzaajiiaijcca3xo7uzjzcsyilaj6i54cj44qk7kqzpoao5rti2pjx6udtdbp6kte"},
    {"0172122068362c312e155f4f7290b67f5cd094a22a0a4fbf20efd8c287934419350d36f7",
     "afzbeidigywdclqvl5hxfefwp5onbffcfife7pza57mmfb4tiqmtkdjw64"},
    {"017212209dff3b17d74cf4d38a50d8b6383e92d181a10395a5e73a726dcccbd21bf6f0b9",
     "afzbeie5745rpv2m6tjyuugywy4d5ewrqgqqhfnf445he3omzpjbx5xqxe"},
};

static void encodes_rfc4648_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
    char out[32];
    size_t len = strlen(rfc4648[i].raw);
    int n = ld_base32_encode((const uint8_t *)rfc4648[i].raw, len, out, sizeof out);
    assert_int_equal(n, (int)strlen(rfc4648[i].text));
    assert_int_equal(n, (int)LD_BASE32_ENCODED_LEN(len));
    assert_string_equal(out, rfc4648[i].text);
  }
}

static void decodes_rfc4648_vectors_either_case(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rfc4648 / sizeof rfc4648[0]; i++) {
    char upper[32];
    size_t tl = strlen(rfc4648[i].text);
    for (size_t k = 0; k <= tl; k++)
      upper[k] = (rfc4648[i].text[k] >= 'a' && rfc4648[i].text[k] <= 'z')
                     ? (char)(rfc4648[i].text[k] - 32)
                     : rfc4648[i].text[k];
    const char *texts[2] = {rfc4648[i].text, upper};
    for (int k = 0; k < 2; k++) {
      uint8_t out[16];
      size_t n = 99;
      assert_int_equal(ld_base32_decode(texts[k], tl, out, sizeof out, &n), 0);
      assert_int_equal(n, strlen(rfc4648[i].raw));
      assert_memory_equal(out, rfc4648[i].raw, n);
    }
  }
}

static void peer_id_cids_round_trip(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof cids / sizeof cids[0]; i++) {
    uint8_t bytes[64], back[64];
    size_t n, m;
    char text[128];
    assert_int_equal(ld_hex_decode(cids[i].hex, strlen(cids[i].hex), bytes, sizeof bytes, &n), 0);
    assert_int_equal(ld_base32_encode(bytes, n, text, sizeof text), (int)strlen(cids[i].text));
    assert_string_equal(text, cids[i].text);
    assert_int_equal(ld_base32_decode(cids[i].text, strlen(cids[i].text), back, sizeof back, &m),
                     0);
    assert_int_equal(m, n);
    assert_memory_equal(back, bytes, n);
  }
}

static void rejects_invalid_text(void **state) {
  (void)state;
  uint8_t out[16];
  size_t n;
  const char *bad[] = {
      "my======",                   /* padding is not accepted */
      "m",                          /* impossible lengths: 1, 3, 6 mod 8 */
      "mzx",      "mzxw6y", "mz1q", /* '1', '0', '8', '9' are outside the alphabet */
      "m0",       "m8",     "my ",
      "mz", /* nonzero trailing bits: "my" is the canonical form of "f" */
      "mzxr",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(ld_base32_decode(bad[i], strlen(bad[i]), out, sizeof out, &n),
                     LD_ERR_BAD_ENCODING);
}

static void respects_capacities(void **state) {
  (void)state;
  uint8_t out[6];
  size_t n;
  char text[11];
  assert_int_equal(ld_base32_decode("mzxw6ytboi", 10, out, 5, &n), LD_ERR_LIMIT);
  assert_int_equal(ld_base32_decode("mzxw6ytboi", 10, out, 6, &n), 0);
  assert_int_equal(ld_base32_encode(out, 6, text, 10), LD_ERR_LIMIT);
  assert_int_equal(ld_base32_encode(out, 6, text, 11), 10);
  assert_int_equal(ld_base32_encode(NULL, 0, text, 0), LD_ERR_LIMIT);
  assert_int_equal(ld_base32_encode(NULL, 0, text, 1), 0);
}

static void round_trips_random_bytes(void **state) {
  (void)state;
  srand(32);
  for (int iter = 0; iter < 500; iter++) {
    uint8_t in[100], back[100];
    char text[LD_BASE32_ENCODED_LEN(100) + 1];
    size_t len = (size_t)(rand() % 100);
    for (size_t i = 0; i < len; i++)
      in[i] = (uint8_t)rand();
    int tl = ld_base32_encode(in, len, text, sizeof text);
    assert_int_equal(tl, (int)LD_BASE32_ENCODED_LEN(len));
    size_t n;
    assert_int_equal(ld_base32_decode(text, (size_t)tl, back, sizeof back, &n), 0);
    assert_int_equal(n, len);
    if (len > 0)
      assert_memory_equal(back, in, len);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_rfc4648_vectors),
      cmocka_unit_test(decodes_rfc4648_vectors_either_case),
      cmocka_unit_test(peer_id_cids_round_trip),
      cmocka_unit_test(rejects_invalid_text),
      cmocka_unit_test(respects_capacities),
      cmocka_unit_test(round_trips_random_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
