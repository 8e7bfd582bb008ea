/* WakuMessage codec, deterministic hash and relay message ID (digest §0.2, §1). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "crypto/crypto.h"
#include "waku/core/message.h"
#include "waku_vectors.h"

/* ---- deterministic hash vectors ------------------------------------------------------------- */

typedef struct {
  const char *name;
  const char *pubsub;
  const void *payload;
  size_t payload_len;
  const char *content_topic;
  int meta; /* 0 absent, 12 meta12, 64 meta64 */
  int64_t ts;
  unsigned flags;
  const char *hash;
} hash_vector_t;

#define STD_P k_std_payload, sizeof k_std_payload
#define EMPTY_P NULL, 0
#define GO_TS INT64_C(123456789123456789)

static const hash_vector_t hash_vectors[] = {
    /* RFC 14 / js-waku, pubsub /waku/2/default-waku/proto */
    {"rfc meta12", RFC_PUBSUB, STD_P, STD_CONTENT_TOPIC, 12, STD_TIMESTAMP, 0,
     "64cce733fed134e83da02b02c6f689814872b1a0ac97ea56b76095c3c72bfe05"},
    {"rfc meta64", RFC_PUBSUB, STD_P, STD_CONTENT_TOPIC, 64, STD_TIMESTAMP, 0,
     "7158b6498753313368b9af8f6e0a0a05104f68f972981da42a43bc53fb0c1b27"},
    {"rfc no meta", RFC_PUBSUB, STD_P, STD_CONTENT_TOPIC, 0, STD_TIMESTAMP, 0,
     "a2554498b31f5bcdfcbf7fa58ad1c2d45f0254f3f8110a85588ec3cf10720fd8"},
    {"rfc empty payload", RFC_PUBSUB, EMPTY_P, STD_CONTENT_TOPIC, 12, STD_TIMESTAMP, 0,
     "483ea950cb63f9b9d6926b262bb36194d3f40a0463ce8446228350bd44e96de4"},
    {"js no timestamp (js rule)", RFC_PUBSUB, EMPTY_P, STD_CONTENT_TOPIC, 12, 0,
     LD_WAKU_HASH_JS_OMIT_ZERO_TIMESTAMP,
     "e1a9596237dbe2cc8aaf4b838c46a7052df6bc0d42ba214b998a8bfdbe8487d6"},
    {"no timestamp (nwaku rule)", RFC_PUBSUB, EMPTY_P, STD_CONTENT_TOPIC, 12, 0, 0,
     "58e2fc032a82c4adeb967a8b87086d0d6fb304912f120d4404e6236add8f1f56"},
    {"js timestamp 2024-04-30", RFC_PUBSUB, EMPTY_P, STD_CONTENT_TOPIC, 12,
     INT64_C(1714474454978000000), 0,
     "3f11bc950dce0e3ffdcf205ae6414c01130bb5d9f20644869bff80407fa52c8f"},
    {"js timestamp 2024-04-30 (js rule)", RFC_PUBSUB, EMPTY_P, STD_CONTENT_TOPIC, 12,
     INT64_C(1714474454978000000), LD_WAKU_HASH_JS_OMIT_ZERO_TIMESTAMP,
     "3f11bc950dce0e3ffdcf205ae6414c01130bb5d9f20644869bff80407fa52c8f"},
    /* nwaku tests/waku_core/test_message_digest.nim, pubsub /waku/2/rs/0/0 */
    {"nwaku empty meta", "/waku/2/rs/0/0", STD_P, STD_CONTENT_TOPIC, 0, STD_TIMESTAMP, 0,
     "cccab07fed94181c83937c8ca8340c9108492b7ede354a6d95421ad34141fd37"},
    {"nwaku meta12", "/waku/2/rs/0/0", STD_P, STD_CONTENT_TOPIC, 12, STD_TIMESTAMP, 0,
     "b9b4852f9d8c489846e8bfc6c5ca6a1a8d460a40d28832a966e029eb39619199"},
    {"nwaku meta64", "/waku/2/rs/0/0", STD_P, STD_CONTENT_TOPIC, 64, STD_TIMESTAMP, 0,
     "653460d04f66c5b11814d235152f4f246e6f03ef80a305a825913636fbafd0ba"},
    {"nwaku empty payload", "/waku/2/rs/0/0", EMPTY_P, STD_CONTENT_TOPIC, 12, STD_TIMESTAMP, 0,
     "0f6448cc23b2db6c696aa6ab4b693eff4cf3549ff346fe1dbeb281697396a09f"},
    /* go-waku waku/v2/protocol/pb/utils_test.go */
    {"go hello world", "test", "Hello World", 11, "Test", 0, GO_TS, 0,
     "b659607f2aae18848dcaa7d51cb37e6cc6fc33402c704ff0c016337d83ad6150"},
    {"go empty meta", RFC_PUBSUB, STD_P, STD_CONTENT_TOPIC, 0, GO_TS, 0,
     "f0183c2e370e473ff471bbe1028d0d8a940949c02f3007a1ccd21fed356852a0"},
    {"go meta12", RFC_PUBSUB, STD_P, STD_CONTENT_TOPIC, 12, GO_TS, 0,
     "f673cd2c9c973d685b52ca74c2559e001733a3a31a49ffc7b6e8713decba5a55"},
    {"go empty payload", RFC_PUBSUB, EMPTY_P, STD_CONTENT_TOPIC, 12, GO_TS, 0,
     "978ccc9a665029f9829d42d84e3a49ad3a4791cce53fb5a8b581ef43ad6b4d2f"},
    {"go timestamp unset", RFC_PUBSUB, EMPTY_P, STD_CONTENT_TOPIC, 12, 0, 0,
     "58e2fc032a82c4adeb967a8b87086d0d6fb304912f120d4404e6236add8f1f56"},
};

static ld_waku_message_t vector_message(const hash_vector_t *v, uint8_t meta64[64]) {
  vec_meta64(meta64);
  const void *meta = v->meta == 12 ? (const void *)META12 : v->meta == 64 ? meta64 : NULL;
  return vec_message(v->payload, v->payload_len, v->content_topic, meta, (size_t)v->meta, v->ts);
}

static void hashes_match_every_digest_vector(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof hash_vectors / sizeof hash_vectors[0]; i++) {
    const hash_vector_t *v = &hash_vectors[i];
    uint8_t meta64[64], want[32], got[32];
    ld_waku_message_t m = vector_message(v, meta64);
    vec_hex(v->hash, want, sizeof want);
    assert_int_equal(ld_waku_message_hash_ex(v->pubsub, strlen(v->pubsub), &m, v->flags, got), 0);
    if (memcmp(got, want, 32) != 0)
      fail_msg("hash vector '%s' differs", v->name);
    if (v->flags == 0) {
      memset(got, 0, sizeof got);
      assert_int_equal(ld_waku_message_hash(v->pubsub, &m, got), 0);
      assert_memory_equal(got, want, 32);
    }
  }
}

static void hash_survives_the_wire(void **state) {
  (void)state;
  /* Every vector message encoded, decoded and hashed again gives the same digest. */
  for (size_t i = 0; i < sizeof hash_vectors / sizeof hash_vectors[0]; i++) {
    const hash_vector_t *v = &hash_vectors[i];
    uint8_t meta64[64], want[32], got[32];
    ld_waku_message_t m = vector_message(v, meta64), back;
    ld_waku_message_init(&back);
    ld_buf_t b;
    ld_buf_init(&b);
    assert_int_equal(ld_waku_message_encode(&m, 0, &b), 0);
    assert_int_equal(ld_waku_message_decode(b.data, b.len, 0, LD_WAKU_DECODE_REQUIRE_FIELDS, &back),
                     0);
    assert_true(ld_waku_message_equal(&m, &back));
    vec_hex(v->hash, want, sizeof want);
    assert_int_equal(ld_waku_message_hash_ex(v->pubsub, strlen(v->pubsub), &back, v->flags, got),
                     0);
    assert_memory_equal(got, want, 32);
    ld_waku_message_clear(&back);
    ld_buf_clear(&b);
  }
}

static void hash_ignores_version_ephemeral_and_proof(void **state) {
  (void)state;
  ld_waku_message_t m = vec_message(k_std_payload, sizeof k_std_payload, STD_CONTENT_TOPIC, META12,
                                    12, STD_TIMESTAMP);
  uint8_t a[32], b[32];
  assert_int_equal(ld_waku_message_hash("/waku/2/rs/0/0", &m, a), 0);
  m.version = 2;
  m.ephemeral = true;
  m.proof = (const uint8_t *)"proof";
  m.proof_len = 5;
  assert_int_equal(ld_waku_message_hash("/waku/2/rs/0/0", &m, b), 0);
  assert_memory_equal(a, b, 32);
  /* the pubsub topic is part of the key */
  assert_int_equal(ld_waku_message_hash("/waku/2/rs/0/1", &m, b), 0);
  assert_memory_not_equal(a, b, 32);
}

static void hash_writes_timestamp_as_8_big_endian_bytes(void **state) {
  (void)state;
  /* go-waku: 10000 → 0000000000002710, 10000000 → 0000000000989680; negative values are the
   * two's complement bit pattern. */
  const struct {
    int64_t ts;
    const char *be;
  } cases[] = {
      {10000, "0000000000002710"},
      {10000000, "0000000000989680"},
      {0, "0000000000000000"},
      {-1, "ffffffffffffffff"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_waku_message_t m = vec_message("p", 1, "c", "m", 1, cases[i].ts);
    uint8_t concat[5 + 8], want[32], got[32];
    memcpy(concat, "tpcm", 4);
    vec_hex(cases[i].be, concat + 4, 8);
    ld_sha256(concat, 12, want);
    assert_int_equal(ld_waku_message_hash("t", &m, got), 0);
    assert_memory_equal(got, want, 32);
  }
}

static void hash_rejects_bad_arguments(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  uint8_t out[32];
  assert_int_equal(ld_waku_message_hash(NULL, &m, out), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_waku_message_hash("t", NULL, out), LD_ERR_INVALID_ARG);
  m.payload = NULL;
  m.payload_len = 3;
  assert_int_equal(ld_waku_message_hash("t", &m, out), LD_ERR_INVALID_ARG);
  /* NULL views of length 0 are empty fields */
  ld_waku_message_init(&m);
  m.payload = NULL;
  m.meta = NULL;
  assert_int_equal(ld_waku_message_hash_ex(NULL, 0, &m, 0, out), 0);
}

static void relay_message_id_is_sha256_of_the_bytes(void **state) {
  (void)state;
  uint8_t want[32], got[32];
  vec_hex("a591a6d40bf420404a011733cfb7b190d62c65bf0bcda32b57b277d9ad9f146e", want, 32);
  ld_waku_relay_message_id((const uint8_t *)"Hello World", 11, got);
  assert_memory_equal(got, want, 32);
  ld_waku_relay_message_id(NULL, 0, got);
  vec_hex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", want, 32);
  assert_memory_equal(got, want, 32);
}

/* ---- the example encoding (§1.4) ------------------------------------------------------------ */

static const char *k_nwaku_hex =
    "0a0c010203045445535405060708121d2f77616b752f322f64656661756c742d636f6e74656e742f70726f746f"
    "1800508090fca3f4efc4d72e5a0c73757065722d736563726574aa0100f80100";
static const char *k_canonical_hex =
    "0a0c010203045445535405060708121d2f77616b752f322f64656661756c742d636f6e74656e742f70726f746f"
    "508090fca3f4efc4d72e5a0c73757065722d736563726574";

static ld_waku_message_t example_message(void) {
  return vec_message(k_std_payload, sizeof k_std_payload, STD_CONTENT_TOPIC, META12, 12,
                     STD_TIMESTAMP);
}

static void encodes_the_example_byte_for_byte(void **state) {
  (void)state;
  uint8_t want[128];
  size_t n = vec_hex(k_nwaku_hex, want, sizeof want);
  assert_int_equal(n, 77);
  ld_waku_message_t m = example_message();
  assert_int_equal(ld_waku_message_encoded_len(&m), 77);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_buf_append(&b, "x", 1), 0); /* encode appends */
  assert_int_equal(ld_waku_message_encode(&m, 0, &b), 0);
  assert_int_equal(b.len, 78);
  assert_memory_equal(b.data + 1, want, 77);
  ld_buf_clear(&b);
}

static void encodes_empty_fields_explicitly(void **state) {
  (void)state;
  /* nwaku requires payload and content topic: an all-empty message still writes every field. */
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_waku_message_encode(&m, 0, &b), 0);
  uint8_t want[16];
  size_t n = vec_hex("0a001200180050005a00aa0100f80100", want, sizeof want);
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, want, n);
  ld_buf_clear(&b);
  /* ephemeral=true, version 2, a negative timestamp (zig-zag) */
  m.ephemeral = true;
  m.version = 2;
  m.timestamp = -1;
  ld_buf_init(&b);
  assert_int_equal(ld_waku_message_encode(&m, 0, &b), 0);
  n = vec_hex("0a001200180250015a00aa0100f80101", want, sizeof want);
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, want, n);
  ld_buf_clear(&b);
}

static void decodes_both_example_encodings(void **state) {
  (void)state;
  const char *encodings[] = {k_nwaku_hex, k_canonical_hex};
  const unsigned all = LD_WAKU_FIELD_PAYLOAD | LD_WAKU_FIELD_CONTENT_TOPIC | LD_WAKU_FIELD_VERSION |
                       LD_WAKU_FIELD_TIMESTAMP | LD_WAKU_FIELD_META | LD_WAKU_FIELD_PROOF |
                       LD_WAKU_FIELD_EPHEMERAL;
  const unsigned canonical = LD_WAKU_FIELD_PAYLOAD | LD_WAKU_FIELD_CONTENT_TOPIC |
                             LD_WAKU_FIELD_TIMESTAMP | LD_WAKU_FIELD_META;
  uint8_t hashes[2][32], ids[2][32];
  for (int i = 0; i < 2; i++) {
    uint8_t wire[128];
    size_t n = vec_hex(encodings[i], wire, sizeof wire);
    assert_int_equal(n, i == 0 ? 77 : 69);
    ld_waku_message_t m, want = example_message();
    ld_waku_message_init(&m);
    assert_int_equal(ld_waku_message_decode(wire, n, 0, LD_WAKU_DECODE_REQUIRE_FIELDS, &m), 0);
    assert_true(ld_waku_message_equal(&m, &want));
    assert_int_equal(m.fields, i == 0 ? all : canonical);
    assert_int_equal(m.content_topic_len, strlen(STD_CONTENT_TOPIC));
    assert_memory_equal(m.content_topic, STD_CONTENT_TOPIC, m.content_topic_len);
    assert_true(m.timestamp == STD_TIMESTAMP);
    assert_int_equal(ld_waku_message_hash(RFC_PUBSUB, &m, hashes[i]), 0);
    ld_waku_relay_message_id(wire, n, ids[i]);
    /* the decoded message does not depend on the input buffer */
    memset(wire, 0xee, sizeof wire);
    assert_true(ld_waku_message_equal(&m, &want));
    ld_waku_message_clear(&m);
  }
  assert_memory_equal(hashes[0], hashes[1], 32);
  assert_memory_not_equal(ids[0], ids[1], 32);
  uint8_t want[32];
  vec_hex("64cce733fed134e83da02b02c6f689814872b1a0ac97ea56b76095c3c72bfe05", want, 32);
  assert_memory_equal(hashes[0], want, 32);
}

/* ---- lenient decoding (§0.2) ---------------------------------------------------------------- */

/* Decodes a hex message; returns the decoder's result. */
static int decode_hex(const char *hex, unsigned flags, ld_waku_message_t *m) {
  uint8_t wire[512];
  size_t n = vec_hex(hex, wire, sizeof wire);
  return ld_waku_message_decode(wire, n, 0, flags, m);
}

static void absent_fields_read_as_empty(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  /* the empty message */
  assert_int_equal(ld_waku_message_decode(NULL, 0, 0, 0, &m), 0);
  assert_int_equal(m.fields, 0);
  assert_int_equal(m.payload_len, 0);
  assert_int_equal(m.content_topic_len, 0);
  assert_non_null(m.payload);
  assert_non_null(m.content_topic);
  assert_non_null(m.meta);
  assert_non_null(m.proof);
  assert_int_equal(ld_waku_message_decode(NULL, 0, 0, LD_WAKU_DECODE_REQUIRE_FIELDS, &m),
                   LD_ERR_MISSING_FIELD);
  /* js-waku and go-waku omit an empty payload */
  assert_int_equal(decode_hex("120174", 0, &m), 0);
  assert_int_equal(m.fields, LD_WAKU_FIELD_CONTENT_TOPIC);
  assert_int_equal(m.payload_len, 0);
  assert_int_equal(m.content_topic_len, 1);
  assert_int_equal(m.content_topic[0], 't');
  assert_int_equal(m.version, 0);
  assert_true(m.timestamp == 0);
  assert_false(m.ephemeral);
  assert_int_equal(decode_hex("120174", LD_WAKU_DECODE_REQUIRE_FIELDS, &m), LD_ERR_MISSING_FIELD);
  assert_int_equal(m.fields, 0); /* a failed decode leaves the message empty */
  /* an explicitly empty payload satisfies nwaku's rule */
  assert_int_equal(decode_hex("0a00120174", LD_WAKU_DECODE_REQUIRE_FIELDS, &m), 0);
  assert_int_equal(m.fields, LD_WAKU_FIELD_PAYLOAD | LD_WAKU_FIELD_CONTENT_TOPIC);
  /* no content topic */
  assert_int_equal(decode_hex("0a0101", LD_WAKU_DECODE_REQUIRE_FIELDS, &m), LD_ERR_MISSING_FIELD);
  assert_int_equal(decode_hex("0a0101", 0, &m), 0);
  assert_int_equal(m.payload_len, 1);
  ld_waku_message_clear(&m);
}

static void optional_fields_keep_their_presence(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  /* version 0, timestamp 0, ephemeral false written explicitly: present with a zero value */
  assert_int_equal(decode_hex("0a00120174180050005a00aa0100f80100", 0, &m), 0);
  assert_int_equal(m.fields, LD_WAKU_FIELD_PAYLOAD | LD_WAKU_FIELD_CONTENT_TOPIC |
                                 LD_WAKU_FIELD_VERSION | LD_WAKU_FIELD_TIMESTAMP |
                                 LD_WAKU_FIELD_META | LD_WAKU_FIELD_PROOF |
                                 LD_WAKU_FIELD_EPHEMERAL);
  assert_int_equal(m.version, 0);
  assert_true(m.timestamp == 0);
  assert_false(m.ephemeral);
  assert_int_equal(m.meta_len, 0);
  assert_int_equal(m.proof_len, 0);
  /* version 1 and 2, reserved 7 */
  assert_int_equal(decode_hex("0a001201741801", 0, &m), 0);
  assert_int_equal(m.version, 1);
  assert_int_equal(decode_hex("0a001201741802", 0, &m), 0);
  assert_int_equal(m.version, 2);
  assert_int_equal(decode_hex("0a001201741807", 0, &m), 0);
  assert_int_equal(m.version, 7);
  /* ephemeral: any nonzero varint is true */
  assert_int_equal(decode_hex("0a00120174f80101", 0, &m), 0);
  assert_true(m.ephemeral);
  assert_int_equal(decode_hex("0a00120174f80102", 0, &m), 0);
  assert_true(m.ephemeral);
  /* rate_limit_proof carried opaquely */
  assert_int_equal(decode_hex("0a00120174aa0103010203", 0, &m), 0);
  assert_int_equal(m.fields & LD_WAKU_FIELD_PROOF, LD_WAKU_FIELD_PROOF);
  assert_int_equal(m.proof_len, 3);
  assert_memory_equal(m.proof, "\x01\x02\x03", 3);
  ld_waku_message_clear(&m);
}

static void timestamps_are_zigzag_sint64_field_10(void **state) {
  (void)state;
  const struct {
    const char *hex;
    int64_t ts;
  } cases[] = {
      {"0a0012017450"
       "8090fca3f4efc4d72e",
       STD_TIMESTAMP},
      {"0a001201745001", -1},
      {"0a001201745002", 1},
      {"0a001201745003", -2},
      {"0a0012017450"
       "feffffffffffffffff01",
       INT64_MAX},
      {"0a0012017450"
       "ffffffffffffffffff01",
       INT64_MIN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ld_waku_message_t m;
    ld_waku_message_init(&m);
    assert_int_equal(decode_hex(cases[i].hex, 0, &m), 0);
    assert_true(m.timestamp == cases[i].ts);
    /* and back: the encoder writes the same zig-zag varint */
    ld_buf_t b;
    ld_buf_init(&b);
    assert_int_equal(ld_waku_message_encode(&m, 0, &b), 0);
    uint8_t want[32];
    size_t n = vec_hex(cases[i].hex + 10, want, sizeof want); /* "50 …" */
    assert_non_null(memmem(b.data, b.len, want, n));
    ld_buf_clear(&b);
    ld_waku_message_clear(&m);
  }
}

static void unknown_fields_are_skipped(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  /* payload, varint field 4, LEN field 99, fixed32 field 7, fixed64 field 8, topic, version 1 */
  assert_int_equal(decode_hex("0a0141"
                              "2005"
                              "9a0603787878"
                              "3d01020304"
                              "410102030405060708"
                              "120174"
                              "1801",
                              LD_WAKU_DECODE_REQUIRE_FIELDS, &m),
                   0);
  assert_int_equal(m.fields,
                   LD_WAKU_FIELD_PAYLOAD | LD_WAKU_FIELD_CONTENT_TOPIC | LD_WAKU_FIELD_VERSION);
  assert_int_equal(m.payload_len, 1);
  assert_int_equal(m.payload[0], 'A');
  assert_int_equal(m.version, 1);
  ld_waku_message_clear(&m);
}

static void wire_type_mismatches_are_skipped(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  /* payload as a varint, version as LEN, timestamp as fixed64, meta as varint, ephemeral as
   * fixed32: each skipped like an unknown field */
  assert_int_equal(decode_hex("0805"
                              "1a0101"
                              "510102030405060708"
                              "5801"
                              "fd0101000000"
                              "120174",
                              0, &m),
                   0);
  assert_int_equal(m.fields, LD_WAKU_FIELD_CONTENT_TOPIC);
  assert_int_equal(m.payload_len, 0);
  assert_int_equal(m.version, 0);
  assert_true(m.timestamp == 0);
  assert_int_equal(m.meta_len, 0);
  assert_false(m.ephemeral);
  /* payload sent as a varint then as bytes: the bytes count */
  assert_int_equal(decode_hex("08050a0142120174", LD_WAKU_DECODE_REQUIRE_FIELDS, &m), 0);
  assert_int_equal(m.payload_len, 1);
  assert_int_equal(m.payload[0], 'B');
  /* ...but only the mismatched payload: nwaku's rule says the field is missing */
  assert_int_equal(decode_hex("0805120174", LD_WAKU_DECODE_REQUIRE_FIELDS, &m),
                   LD_ERR_MISSING_FIELD);
  ld_waku_message_clear(&m);
}

static void last_occurrence_wins(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  assert_int_equal(decode_hex("0a0141"
                              "120161"
                              "1801"
                              "0a024243"
                              "120162"
                              "1802",
                              0, &m),
                   0);
  assert_int_equal(m.payload_len, 2);
  assert_memory_equal(m.payload, "BC", 2);
  assert_int_equal(m.content_topic_len, 1);
  assert_int_equal(m.content_topic[0], 'b');
  assert_int_equal(m.version, 2);
  /* a long meta replaced by a short one is fine, the reverse is not */
  char hex[512] = "0a00120174"
                  "5a41";
  for (int i = 0; i < 65; i++)
    strcat(hex, "00");
  strcat(hex, "5a0101");
  assert_int_equal(decode_hex(hex, 0, &m), 0);
  assert_int_equal(m.meta_len, 1);
  strcpy(hex, "0a00120174"
              "5a0101"
              "5a41");
  for (int i = 0; i < 65; i++)
    strcat(hex, "00");
  assert_int_equal(decode_hex(hex, 0, &m), LD_ERR_FIELD_TOO_LONG);
  ld_waku_message_clear(&m);
}

static void non_minimal_varints_are_accepted(void **state) {
  (void)state;
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  /* a non-minimal tag (8a 00 = field 1 LEN), length (82 00 = 2) and version (81 00 = 1) */
  assert_int_equal(decode_hex("8a00"
                              "820041"
                              "42"
                              "120174"
                              "188100",
                              0, &m),
                   0);
  assert_int_equal(m.payload_len, 2);
  assert_memory_equal(m.payload, "AB", 2);
  assert_int_equal(m.version, 1);
  ld_waku_message_clear(&m);
}

static void malformed_messages_are_rejected(void **state) {
  (void)state;
  const char *bad[] = {
      "0a",                         /* tag without a length */
      "0a05414243",                 /* length beyond the end */
      "0aff",                       /* truncated length varint */
      "1880",                       /* truncated varint value */
      "0200",                       /* field number 0 */
      "0b0c",                       /* start group (wire type 3) */
      "0c",                         /* end group (wire type 4) */
      "0e00",                       /* wire type 6 */
      "0f00",                       /* wire type 7 */
      "3d0102",                     /* truncated fixed32 */
      "41010203",                   /* truncated fixed64 */
      "18ffffffffffffffffff7f",     /* varint over 64 bits */
      "18808080808080808080800100", /* varint over 10 bytes */
      "f8ffffff7f00",               /* field number above 2^29-1 */
      "0a00120174ff",               /* trailing garbage: a truncated tag */
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ld_waku_message_t m;
    ld_waku_message_init(&m);
    int rc = decode_hex(bad[i], 0, &m);
    if (rc != LD_ERR_BAD_PROTOBUF)
      fail_msg("'%s' decoded with %s", bad[i], ld_errname(rc));
    assert_null(m.storage);
  }
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  assert_int_equal(ld_waku_message_decode(NULL, 3, 0, 0, &m), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_waku_message_decode((const uint8_t *)"", 0, 0, 0, NULL), LD_ERR_INVALID_ARG);
}

static void truncations_of_the_example_never_crash(void **state) {
  (void)state;
  uint8_t wire[128];
  size_t n = vec_hex(k_nwaku_hex, wire, sizeof wire);
  int ok = 0;
  for (size_t cut = 0; cut <= n; cut++) {
    ld_waku_message_t m;
    ld_waku_message_init(&m);
    int rc = ld_waku_message_decode(wire, cut, 0, 0, &m);
    assert_true(rc == 0 || rc == LD_ERR_BAD_PROTOBUF);
    ok += rc == 0;
    ld_waku_message_clear(&m);
  }
  /* the whole message and the cuts at field boundaries decode: 0, 14, 45, 47, 57, 71, 74, 77 */
  assert_int_equal(ok, 8);
}

/* ---- limits --------------------------------------------------------------------------------- */

/* A message whose nwaku-style encoding is exactly `size` bytes (size ≥ 40). */
static size_t sized_message(size_t size, uint8_t **payload, ld_waku_message_t *m) {
  *m = vec_message(NULL, 0, STD_CONTENT_TOPIC, NULL, 0, 0);
  size_t base = ld_waku_message_encoded_len(m);
  size_t plen = size - base;
  /* the payload's length prefix grows with it */
  while (plen > 0) {
    m->payload_len = plen;
    size_t got = ld_waku_message_encoded_len(m);
    if (got == size)
      break;
    plen -= got - size;
  }
  *payload = calloc(1, plen + 1);
  m->payload = *payload;
  m->payload_len = plen;
  return ld_waku_message_encoded_len(m);
}

static void size_cap_is_150_kib_by_default(void **state) {
  (void)state;
  assert_int_equal(LD_WAKU_DEFAULT_MAX_MSG_SIZE, 153600);
  uint8_t *payload;
  ld_waku_message_t m, back;
  ld_waku_message_init(&back);
  assert_int_equal(sized_message(153600, &payload, &m), 153600);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_waku_message_encode(&m, 0, &b), 0);
  assert_int_equal(b.len, 153600);
  assert_int_equal(ld_waku_message_decode(b.data, b.len, 0, 0, &back), 0);
  assert_int_equal(back.payload_len, m.payload_len);
  free(payload);
  /* one byte more is refused both ways */
  assert_int_equal(sized_message(153601, &payload, &m), 153601);
  ld_buf_reset(&b);
  assert_int_equal(ld_waku_message_encode(&m, 0, &b), LD_ERR_TOO_LARGE);
  assert_int_equal(b.len, 0);
  assert_int_equal(ld_waku_message_encode(&m, SIZE_MAX, &b), 0);
  assert_int_equal(ld_waku_message_decode(b.data, b.len, 0, 0, &back), LD_ERR_TOO_LARGE);
  assert_null(back.storage);
  assert_int_equal(ld_waku_message_decode(b.data, b.len, SIZE_MAX, 0, &back), 0);
  free(payload);
  ld_waku_message_clear(&back);
  ld_buf_clear(&b);
}

static void size_cap_is_configurable(void **state) {
  (void)state;
  uint8_t *payload;
  ld_waku_message_t m, back;
  ld_waku_message_init(&back);
  ld_buf_t b;
  ld_buf_init(&b);
  /* status.prod allows 1024 KiB */
  assert_int_equal(sized_message(1024 * 1024, &payload, &m), 1024 * 1024);
  assert_int_equal(ld_waku_message_encode(&m, 0, &b), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_waku_message_encode(&m, 1024 * 1024, &b), 0);
  assert_int_equal(ld_waku_message_decode(b.data, b.len, 1024 * 1024, 0, &back), 0);
  assert_int_equal(ld_waku_message_decode(b.data, b.len, 1024 * 1024 - 1, 0, &back),
                   LD_ERR_TOO_LARGE);
  free(payload);
  /* and a small cap */
  assert_int_equal(sized_message(1000, &payload, &m), 1000);
  ld_buf_reset(&b);
  assert_int_equal(ld_waku_message_encode(&m, 999, &b), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_waku_message_encode(&m, 1000, &b), 0);
  assert_int_equal(ld_waku_message_decode(b.data, b.len, 999, 0, &back), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_waku_message_decode(b.data, b.len, 1000, 0, &back), 0);
  free(payload);
  ld_waku_message_clear(&back);
  ld_buf_clear(&b);
}

static void meta_is_at_most_64_bytes(void **state) {
  (void)state;
  uint8_t meta[67] = {0};
  ld_waku_message_t m = vec_message("p", 1, "t", meta, 64, 0), back;
  ld_waku_message_init(&back);
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_waku_message_encode(&m, 0, &b), 0);
  assert_int_equal(ld_waku_message_decode(b.data, b.len, 0, 0, &back), 0);
  assert_int_equal(back.meta_len, 64);
  m.meta_len = 65;
  ld_buf_reset(&b);
  assert_int_equal(ld_waku_message_encode(&m, 0, &b), LD_ERR_FIELD_TOO_LONG);
  assert_int_equal(b.len, 0);
  /* nwaku's test: a 67-byte meta fails decoding (InvalidLengthField "meta") */
  char hex[256] = "0a0170120174"
                  "5a43";
  for (int i = 0; i < 67; i++)
    strcat(hex, "ab");
  assert_int_equal(decode_hex(hex, 0, &back), LD_ERR_FIELD_TOO_LONG);
  assert_null(back.storage);
  ld_buf_clear(&b);
}

/* ---- value handling ------------------------------------------------------------------------- */

static void copies_are_deep_and_owned(void **state) {
  (void)state;
  uint8_t payload[4] = {1, 2, 3, 4};
  char topic[] = "/a/1/b/c";
  ld_waku_message_t src = vec_message(payload, 4, topic, "mm", 2, 42), dst;
  src.version = 1;
  src.ephemeral = true;
  src.proof = (const uint8_t *)"pr";
  src.proof_len = 2;
  ld_waku_message_init(&dst);
  assert_int_equal(ld_waku_message_copy(&dst, &src), 0);
  assert_non_null(dst.storage);
  assert_true(ld_waku_message_equal(&dst, &src));
  payload[0] = 9;
  topic[1] = 'z';
  assert_int_equal(dst.payload[0], 1);
  assert_int_equal(dst.content_topic[1], 'a');
  assert_false(ld_waku_message_equal(&dst, &src));
  /* copying a message onto itself keeps its values */
  ld_waku_message_t before;
  ld_waku_message_init(&before);
  assert_int_equal(ld_waku_message_copy(&before, &dst), 0);
  assert_int_equal(ld_waku_message_copy(&dst, &dst), 0);
  assert_true(ld_waku_message_equal(&dst, &before));
  ld_waku_message_clear(&before);
  ld_waku_message_clear(&dst);
  assert_null(dst.storage);
  assert_int_equal(dst.payload_len, 0);
  /* an empty message copies too */
  ld_waku_message_init(&src);
  assert_int_equal(ld_waku_message_copy(&dst, &src), 0);
  assert_true(ld_waku_message_equal(&dst, &src));
  ld_waku_message_clear(&dst);
  src.meta = NULL;
  src.meta_len = 1;
  assert_int_equal(ld_waku_message_copy(&dst, &src), LD_ERR_INVALID_ARG);
}

static void hash_hex_text(void **state) {
  (void)state;
  uint8_t h[32], back[32];
  const char *hex = "64cce733fed134e83da02b02c6f689814872b1a0ac97ea56b76095c3c72bfe05";
  vec_hex(hex, h, 32);
  char text[LD_WAKU_HASH_HEX_LEN + 1];
  assert_int_equal(ld_waku_hash_to_hex(h, text), 66);
  assert_int_equal(strlen(text), 66);
  assert_memory_equal(text, "0x", 2);
  assert_string_equal(text + 2, hex);
  assert_int_equal(ld_waku_hash_from_hex(text, strlen(text), back), 0);
  assert_memory_equal(back, h, 32);
  memset(back, 0, 32);
  assert_int_equal(ld_waku_hash_from_hex(hex, 64, back), 0);
  assert_memory_equal(back, h, 32);
  const char *upper = "0X64CCE733FED134E83DA02B02C6F689814872B1A0AC97EA56B76095C3C72BFE05";
  assert_int_equal(ld_waku_hash_from_hex(upper, strlen(upper), back), 0);
  assert_memory_equal(back, h, 32);
  assert_int_equal(ld_waku_hash_from_hex(hex, 62, back), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_waku_hash_from_hex(text, 65, back), LD_ERR_BAD_ENCODING);
  char longer[80];
  snprintf(longer, sizeof longer, "%s00", hex);
  assert_int_equal(ld_waku_hash_from_hex(longer, 66, back), LD_ERR_BAD_ENCODING);
  char bad[67];
  memcpy(bad, text, 67);
  bad[10] = 'g';
  assert_int_equal(ld_waku_hash_from_hex(bad, 66, back), LD_ERR_BAD_ENCODING);
  assert_int_equal(ld_waku_hash_from_hex(NULL, 0, back), LD_ERR_BAD_ENCODING);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(hashes_match_every_digest_vector),
      cmocka_unit_test(hash_survives_the_wire),
      cmocka_unit_test(hash_ignores_version_ephemeral_and_proof),
      cmocka_unit_test(hash_writes_timestamp_as_8_big_endian_bytes),
      cmocka_unit_test(hash_rejects_bad_arguments),
      cmocka_unit_test(relay_message_id_is_sha256_of_the_bytes),
      cmocka_unit_test(encodes_the_example_byte_for_byte),
      cmocka_unit_test(encodes_empty_fields_explicitly),
      cmocka_unit_test(decodes_both_example_encodings),
      cmocka_unit_test(absent_fields_read_as_empty),
      cmocka_unit_test(optional_fields_keep_their_presence),
      cmocka_unit_test(timestamps_are_zigzag_sint64_field_10),
      cmocka_unit_test(unknown_fields_are_skipped),
      cmocka_unit_test(wire_type_mismatches_are_skipped),
      cmocka_unit_test(last_occurrence_wins),
      cmocka_unit_test(non_minimal_varints_are_accepted),
      cmocka_unit_test(malformed_messages_are_rejected),
      cmocka_unit_test(truncations_of_the_example_never_crash),
      cmocka_unit_test(size_cap_is_150_kib_by_default),
      cmocka_unit_test(size_cap_is_configurable),
      cmocka_unit_test(meta_is_at_most_64_bytes),
      cmocka_unit_test(copies_are_deep_and_owned),
      cmocka_unit_test(hash_hex_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
