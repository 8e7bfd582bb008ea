#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base58.h"
#include "base/error.h"
#include "base/hex.h"

typedef struct {
  const char *hex;
  const char *text;
} vector_t;

static const vector_t vectors[] = {
    /* libp2p peer IDs (specs digest §3.4): Ed25519, secp256k1, ECDSA, spec text examples */
    {"0024080112201ed1e8fae2c4a144b8be8fd4b47bf3d3b34b871c3cacf6010f0e42d474fce27e",
     "12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq"},
    {"002508021221037777e994e452c21604f91de093ce415f5432f701dd8cd1a7a6fea0e630bfca99",
     "16Uiu2HAmLhLvBoYaoZfaMUKuibM6ac163GwKY74c5kiSLg5KvLpY"},
    {"122068362c312e155f4f7290b67f5cd094a22a0a4fbf20efd8c287934419350d36f7",
     "QmVMT29id3TUASyfZZ6k9hmNyc2nYabCo4uMSpDw4zrgDk"},
    {"12209dff3b17d74cf4d38a50d8b6383e92d181a10395a5e73a726dcccbd21bf6f0b9",
     "QmYyQSo1c1Ym7orWxLYvCrM2EmxFTANf8wXmmE7DWjhx5N"},
    {"0024080112202ffa35a99d3a3cfbb17bb7c1dc5561b18a8dcca4df38dc613ea859c37eb1336b",
     "12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"},
    /* Bitcoin Core base58_encode_decode.json */
    {"", ""},
    {"61", "2g"},
    {"626262", "a3gV"},
    {"636363", "aPEr"},
    {"73696d706c792061206c6f6e6720737472696e67", "2cFupjhnEsSn59qHXstmK2ffpLv2"},
    {"00eb15231dfceb60925886b67d065299925915aeb172c06647", "1NS17iag9jJgTHD1VXjvLCEnZuQ3rJDE9L"},
    {"516b6fcd0f", "ABnLTmg"},
    {"bf4f89001e670274dd", "3SEo3LWLoPntC"},
    {"572e4794", "3EFU7m"},
    {"ecac89cad93923c02321", "EJDM8drfXA6uyA"},
    {"10c8511e", "Rt5zm"},
    {"00000000000000000000", "1111111111"},
    {"000111d38e5fc9071ffcd20b4a763cc9ae4f252bb4e48fd66a835e252ada93ff480d6dd43dc62a641155a5",
     "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"},
    /* leading zeros */
    {"00", "1"},
    {"0000", "11"},
    {"0001", "12"},
    {"01", "2"},
    {"39", "z"},
    {"3a", "21"},
    {"3b", "22"},
};

static size_t unhex(const char *hex, uint8_t *out, size_t cap) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(hex, strlen(hex), out, cap, &n), 0);
  return n;
}

static void encodes_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    uint8_t in[64];
    char out[128];
    size_t n = unhex(vectors[i].hex, in, sizeof in);
    int len = ld_base58_encode(in, n, out, sizeof out);
    assert_int_equal(len, (int)strlen(vectors[i].text));
    assert_string_equal(out, vectors[i].text);
  }
}

static void decodes_vectors(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
    uint8_t want[64], got[64];
    size_t wn = unhex(vectors[i].hex, want, sizeof want);
    size_t gn = 999;
    assert_int_equal(
        ld_base58_decode(vectors[i].text, strlen(vectors[i].text), got, sizeof got, &gn), 0);
    assert_int_equal(gn, wn);
    assert_memory_equal(got, want, wn);
  }
}

static void rejects_chars_outside_alphabet(void **state) {
  (void)state;
  const char *bad[] = {"0", "O", "I", "l", "12D3KooW0", "Qm+", " 2g", "2g\n", "\xc3\xa9"};
  uint8_t out[64];
  size_t n;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(ld_base58_decode(bad[i], strlen(bad[i]), out, sizeof out, &n),
                     LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_base58_decode("2g\0", 3, out, sizeof out, &n), LD_ERR_BAD_ENCODING);
}

static void respects_capacities(void **state) {
  (void)state;
  const char *id = "12D3KooWBtg3aaRMjxwedh83aGiUkwSxDwUZkzuJcfaqUmo7R3pq";
  uint8_t bytes[38];
  size_t n;
  assert_int_equal(ld_base58_decode(id, strlen(id), bytes, 37, &n), LD_ERR_LIMIT);
  assert_int_equal(ld_base58_decode(id, strlen(id), bytes, 38, &n), 0);
  assert_int_equal(ld_base58_decode("111", 3, bytes, 2, &n), LD_ERR_LIMIT);
  char text[53];
  assert_int_equal(ld_base58_encode(bytes, 38, text, 52), LD_ERR_LIMIT); /* no room for NUL */
  assert_int_equal(ld_base58_encode(bytes, 38, text, 53), 52);
  assert_string_equal(text, id);
  assert_int_equal(ld_base58_encode(NULL, 0, text, 1), 0);
  assert_string_equal(text, "");
  assert_int_equal(ld_base58_encode(NULL, 0, text, 0), LD_ERR_LIMIT);
}

static void caps_input_length(void **state) {
  (void)state;
  char *text = malloc(LD_BASE58_MAX_INPUT + 2);
  uint8_t *out = malloc(LD_BASE58_MAX_INPUT + 1);
  assert_non_null(text);
  assert_non_null(out);
  memset(text, 'z', LD_BASE58_MAX_INPUT + 1);
  size_t n;
  assert_int_equal(ld_base58_decode(text, LD_BASE58_MAX_INPUT + 1, out, LD_BASE58_MAX_INPUT, &n),
                   LD_ERR_TOO_LARGE);
  assert_int_equal(ld_base58_decode(text, LD_BASE58_MAX_INPUT, out, LD_BASE58_MAX_INPUT, &n), 0);
  assert_true(n <= LD_BASE58_MAX_INPUT * 733 / 1000 + 1);
  memset(text, '1', LD_BASE58_MAX_INPUT);
  assert_int_equal(ld_base58_decode(text, LD_BASE58_MAX_INPUT, out, LD_BASE58_MAX_INPUT, &n), 0);
  assert_int_equal(n, LD_BASE58_MAX_INPUT);
  free(text);
  free(out);
}

static void round_trips_random_bytes(void **state) {
  (void)state;
  srand(58);
  for (int iter = 0; iter < 300; iter++) {
    uint8_t in[200], back[200];
    char text[LD_BASE58_ENCODED_MAX(200) + 1];
    size_t len = (size_t)(rand() % 200);
    size_t zeros = (size_t)(rand() % 4);
    for (size_t i = 0; i < len; i++)
      in[i] = i < zeros ? 0 : (uint8_t)rand();
    int tl = ld_base58_encode(in, len, text, sizeof text);
    assert_true(tl >= 0);
    assert_true((size_t)tl <= LD_BASE58_ENCODED_MAX(len));
    size_t n;
    assert_int_equal(ld_base58_decode(text, (size_t)tl, back, sizeof back, &n), 0);
    assert_int_equal(n, len);
    if (len > 0)
      assert_memory_equal(back, in, len);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_vectors),
      cmocka_unit_test(decodes_vectors),
      cmocka_unit_test(rejects_chars_outside_alphabet),
      cmocka_unit_test(respects_capacities),
      cmocka_unit_test(caps_input_length),
      cmocka_unit_test(round_trips_random_bytes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
