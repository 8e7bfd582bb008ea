/* RLP: the Ethereum wiki examples, canonical-form checks, integers, round trips. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/cursor.h"
#include "base/error.h"
#include "base/hex.h"
#include "waku/enr/rlp.h"

static size_t unhex(const char *hex, uint8_t *out) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(hex, strlen(hex), out, strlen(hex) / 2, &n), 0);
  return n;
}

static const char *LOREM = "Lorem ipsum dolor sit amet, consectetur adipisicing elit";

static void encodes_wiki_examples(void **state) {
  (void)state;
  ld_buf_t b;
  ld_buf_init(&b);
  uint8_t want[80];
  assert_int_equal(ld_rlp_put_string(&b, "dog", 3), 0);
  assert_int_equal(b.len, unhex("83646f67", want));
  assert_memory_equal(b.data, want, b.len);
  ld_buf_reset(&b);
  assert_int_equal(ld_rlp_put_list_header(&b, 8), 0);
  assert_int_equal(ld_rlp_put_string(&b, "cat", 3), 0);
  assert_int_equal(ld_rlp_put_string(&b, "dog", 3), 0);
  assert_int_equal(b.len, unhex("c88363617483646f67", want));
  assert_memory_equal(b.data, want, b.len);
  ld_buf_reset(&b);
  assert_int_equal(ld_rlp_put_string(&b, NULL, 0), 0);
  assert_int_equal(ld_rlp_put_list_header(&b, 0), 0);
  assert_int_equal(ld_rlp_put_uint(&b, 0), 0);
  assert_int_equal(ld_rlp_put_uint(&b, 15), 0);
  assert_int_equal(ld_rlp_put_uint(&b, 1024), 0);
  assert_int_equal(ld_rlp_put_string(&b, "\x7f", 1), 0);
  assert_int_equal(ld_rlp_put_string(&b, "\x80", 1), 0);
  assert_int_equal(b.len, unhex("80c0800f8204007f8180", want));
  assert_memory_equal(b.data, want, b.len);
  ld_buf_reset(&b);
  assert_int_equal(ld_rlp_put_string(&b, LOREM, strlen(LOREM)), 0);
  assert_int_equal(b.len, 58);
  assert_int_equal(b.data[0], 0xb8);
  assert_int_equal(b.data[1], 0x38);
  assert_memory_equal(b.data + 2, LOREM, 56);
  ld_buf_clear(&b);
}

static void decodes_wiki_examples(void **state) {
  (void)state;
  uint8_t in[80];
  size_t n = unhex("c88363617483646f67", in);
  ld_cursor_t c, inner;
  ld_cursor_init(&c, in, n);
  assert_int_equal(ld_rlp_read_list(&c, &inner), 0);
  assert_true(ld_cursor_empty(&c));
  const uint8_t *s;
  size_t len;
  assert_int_equal(ld_rlp_read_string(&inner, &s, &len), 0);
  assert_int_equal(len, 3);
  assert_memory_equal(s, "cat", 3);
  assert_int_equal(ld_rlp_read_string(&inner, &s, &len), 0);
  assert_memory_equal(s, "dog", 3);
  assert_true(ld_cursor_empty(&inner));

  /* The set-theoretic representation of three: [ [], [[]], [ [], [[]] ] ]. */
  n = unhex("c7c0c1c0c3c0c1c0", in);
  ld_cursor_init(&c, in, n);
  ld_rlp_item_t it;
  assert_int_equal(ld_rlp_read(&c, &it), 0);
  assert_true(it.is_list);
  assert_int_equal(it.payload_len, 7);
  assert_int_equal(it.raw_len, 8);
  ld_cursor_init(&inner, it.payload, it.payload_len);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(ld_rlp_read(&inner, &it), 0);
    assert_true(it.is_list);
  }
  assert_true(ld_cursor_empty(&inner));

  n = unhex("0f", in);
  ld_cursor_init(&c, in, n);
  assert_int_equal(ld_rlp_read(&c, &it), 0);
  assert_false(it.is_list);
  assert_int_equal(it.payload_len, 1);
  assert_int_equal(it.payload[0], 0x0f);
  assert_int_equal(it.raw_len, 1);

  uint8_t lorem[58] = {0xb8, 0x38};
  memcpy(lorem + 2, LOREM, 56);
  ld_cursor_init(&c, lorem, sizeof lorem);
  assert_int_equal(ld_rlp_read_string(&c, &s, &len), 0);
  assert_int_equal(len, 56);
  assert_memory_equal(s, LOREM, 56);
}

static void integers(void **state) {
  (void)state;
  uint8_t in[16];
  uint64_t v;
  ld_cursor_t c;
  struct {
    const char *hex;
    uint64_t value;
  } ok[] = {{"80", 0},     {"01", 1},        {"7f", 127},
            {"8180", 128}, {"820400", 1024}, {"88ffffffffffffffff", UINT64_MAX}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    size_t n = unhex(ok[i].hex, in);
    ld_cursor_init(&c, in, n);
    assert_int_equal(ld_rlp_read_uint(&c, &v), 0);
    assert_true(v == ok[i].value);
    assert_true(ld_cursor_empty(&c));
  }
  struct {
    const char *hex;
    int err;
  } bad[] = {{"820001", LD_ERR_MALFORMED},
             {"00", LD_ERR_MALFORMED},
             {"89010000000000000000", LD_ERR_OVERFLOW},
             {"c0", LD_ERR_MALFORMED},
             {"8201", LD_ERR_TRUNCATED}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t n = unhex(bad[i].hex, in);
    ld_cursor_init(&c, in, n);
    assert_int_equal(ld_rlp_read_uint(&c, &v), bad[i].err);
    assert_int_equal(c.pos, 0);
  }
}

static void rejects_non_canonical_and_truncated(void **state) {
  (void)state;
  struct {
    const char *hex;
    int err;
  } cases[] = {
      {"8100", LD_ERR_MALFORMED},         /* single byte < 0x80 with a header */
      {"817f", LD_ERR_MALFORMED},         /* same */
      {"b80161", LD_ERR_MALFORMED},       /* long form for a short string */
      {"f800", LD_ERR_MALFORMED},         /* long form for a short list */
      {"b9003861", LD_ERR_MALFORMED},     /* length with a leading zero */
      {"bc0000000001", LD_ERR_TOO_LARGE}, /* 5-byte length of length */
      {"8364", LD_ERR_TRUNCATED},         {"b8", LD_ERR_TRUNCATED}, {"b838", LD_ERR_TRUNCATED},
      {"c3c0", LD_ERR_TRUNCATED},         {"", LD_ERR_TRUNCATED},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t in[16];
    size_t n = unhex(cases[i].hex, in);
    ld_cursor_t c;
    ld_cursor_init(&c, in, n);
    ld_rlp_item_t it;
    assert_int_equal(ld_rlp_read(&c, &it), cases[i].err);
    assert_int_equal(c.pos, 0);
  }
  /* Type mismatches leave the cursor alone too. */
  uint8_t list[] = {0xc0}, str[] = {0x80};
  ld_cursor_t c, inner;
  const uint8_t *s;
  size_t len;
  ld_cursor_init(&c, list, 1);
  assert_int_equal(ld_rlp_read_string(&c, &s, &len), LD_ERR_MALFORMED);
  assert_int_equal(c.pos, 0);
  ld_cursor_init(&c, str, 1);
  assert_int_equal(ld_rlp_read_list(&c, &inner), LD_ERR_MALFORMED);
  assert_int_equal(c.pos, 0);
}

static void round_trips_every_length(void **state) {
  (void)state;
  uint8_t data[1100];
  for (size_t i = 0; i < sizeof data; i++)
    data[i] = (uint8_t)(i * 37 + 200);
  const size_t lens[] = {0, 1, 2, 54, 55, 56, 57, 255, 256, 300, 1024};
  for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
    ld_buf_t b;
    ld_buf_init(&b);
    assert_int_equal(
        ld_rlp_put_list_header(&b, lens[k] + ld_rlp_string_header_len(lens[k], data[0])), 0);
    assert_int_equal(b.len,
                     ld_rlp_list_header_len(lens[k] + ld_rlp_string_header_len(lens[k], data[0])));
    assert_int_equal(ld_rlp_put_string(&b, data, lens[k]), 0);
    ld_cursor_t c, inner;
    ld_cursor_init(&c, b.data, b.len);
    assert_int_equal(ld_rlp_read_list(&c, &inner), 0);
    assert_true(ld_cursor_empty(&c));
    const uint8_t *s;
    size_t len;
    assert_int_equal(ld_rlp_read_string(&inner, &s, &len), 0);
    assert_int_equal(len, lens[k]);
    if (len > 0)
      assert_memory_equal(s, data, len);
    assert_true(ld_cursor_empty(&inner));
    ld_buf_clear(&b);
  }
  for (uint64_t v = 1; v != 0; v <<= 7) {
    ld_buf_t b;
    ld_buf_init(&b);
    assert_int_equal(ld_rlp_put_uint(&b, v - 1), 0);
    ld_cursor_t c;
    ld_cursor_init(&c, b.data, b.len);
    uint64_t got;
    assert_int_equal(ld_rlp_read_uint(&c, &got), 0);
    assert_true(got == v - 1);
    ld_buf_clear(&b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(encodes_wiki_examples),
      cmocka_unit_test(decodes_wiki_examples),
      cmocka_unit_test(integers),
      cmocka_unit_test(rejects_non_canonical_and_truncated),
      cmocka_unit_test(round_trips_every_length),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
