/* Peer-exchange codec: nwaku's request bytes, js-waku's request, responses with the digest's
 * records (verified, unusable, tampered), the status rules of older peers, and the caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/error.h"
#include "base/hex.h"
#include "waku/enr/enr.h"
#include "waku/peer_exchange/peer_exchange.h"

static size_t unhex(const char *hex, uint8_t *out) {
  size_t n = 0;
  assert_int_equal(ld_hex_decode(hex, strlen(hex), out, strlen(hex) / 2, &n), 0);
  return n;
}

static const char *NWAKU_STORE =
    "enr:-QEMuEAs8JmmyUI3b9v_ADqYtELHUYAsAMS21lA2BMtrzF86tVmyy9cCrhmzfHGHx_"
    "g3nybn7jIRybzXTGNj3C2Kzrri"
    "AYJpZIJ2NIJpcISf3_"
    "Jeim11bHRpYWRkcnO4XAArNiZzdG9yZS0wMS5kby1hbXMzLnN0YXR1cy5wcm9kLnN0YXR1cy5pbQZ2"
    "XwAtNiZzdG9yZS0wMS5kby1hbXMzLnN0YXR1cy5wcm9kLnN0YXR1cy5pbQYBu94DgnJzjQAQBQABACAAQACAAQCJc2VjcD"
    "I1"
    "NmsxoQLfoaQH3oSYW59yxEBfeAZbltmUnC4BzYkHqer2VQMTyoN0Y3CCdl-DdWRwgiMohXdha3UyAw";
static const char *JS_TCP =
    "enr:-IS4QAmC_o1PMi5DbR4Bh4oHVyQunZblg4bTaottPtBodAhJZvxVlWW-4rXITPNg4mwJ8cW__D9FBDc9N4mdhyMqB-"
    "EB"
    "gmlkgnY0gmlwhIbRi9KJc2VjcDI1NmsxoQOevTdO6jvv3fRruxguKR-3Ge4bcFsLeAIWEDjrfaigNoN0Y3CCdl8";
static const char *EIP778 =
    "enr:-"
    "IS4QHCYrYZbAKWCBRlAy5zzaDZXJBGkcnh4MHcBFZntXNFrdvJjX04jRzjzCBOonrkTfj499SZuOh8R33Ls8RRcy5w"
    "BgmlkgnY0gmlwhH8AAAGJc2VjcDI1NmsxoQPKY0yuDUmstAHYpMa2_oxVtw0RW_QAdpzBQA8yWM0xOIN1ZHCCdl8";

static ld_enr_t g_store, g_tcp, g_eip;

static int setup(void **state) {
  (void)state;
  if (ld_enr_parse_text(&g_store, NWAKU_STORE) != 0 || ld_enr_parse_text(&g_tcp, JS_TCP) != 0 ||
      ld_enr_parse_text(&g_eip, EIP778) != 0)
    return -1;
  return 0;
}

/* ---- requests ------------------------------------------------------------------------------- */

static void request_matches_nwaku(void **state) {
  (void)state;
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_px_encode_request(5, &b), 0);
  uint8_t want[16];
  size_t n = unhex("080a02080512025000", want);
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, want, n);
  uint64_t num = 99;
  assert_int_equal(ld_px_decode_request(b.data, b.len, &num), (int)n);
  assert_true(num == 5);
  ld_buf_reset(&b);
  assert_int_equal(ld_px_encode_request(UINT64_MAX, &b), 0);
  assert_int_equal(ld_px_decode_request(b.data, b.len, &num), (int)b.len);
  assert_true(num == UINT64_MAX);
  ld_buf_clear(&b);
}

static void request_forms(void **state) {
  (void)state;
  uint8_t in[32];
  uint64_t num = 7;
  /* js-waku: only the query, numPeers 60. */
  size_t n = unhex("040a02083c", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), (int)n);
  assert_true(num == 60);
  /* A query without num_peers asks for none. */
  n = unhex("020a00", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), (int)n);
  assert_true(num == 0);
  /* Unknown fields are skipped. */
  n = unhex("077a01ff0a02080a", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), (int)n);
  assert_true(num == 10);
  /* No query (empty message, or a response only): nwaku refuses these. */
  n = unhex("00", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), LD_ERR_MISSING_FIELD);
  n = unhex("0412025000", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), LD_ERR_MISSING_FIELD);
  /* Broken protobuf and broken frames. */
  n = unhex("020aff", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), LD_ERR_BAD_PROTOBUF);
  n = unhex("030a0208", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), LD_ERR_BAD_PROTOBUF);
  n = unhex("050a02", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), LD_ERR_TRUNCATED);
  n = unhex("8180", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), LD_ERR_TRUNCATED);
  n = unhex("8908", in); /* 1033 > LD_PX_MAX_REQUEST_SIZE */
  assert_int_equal(ld_px_decode_request(in, n, &num), LD_ERR_TOO_LARGE);
  n = unhex("8000", in);
  assert_int_equal(ld_px_decode_request(in, n, &num), LD_ERR_VARINT_NONMINIMAL);
}

/* ---- responses ------------------------------------------------------------------------------ */

static void response_layout(void **state) {
  (void)state;
  const ld_enr_t *enrs[] = {&g_store, &g_tcp};
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_px_encode_response(enrs, 2, LD_PX_STATUS_SUCCESS, NULL, &b), 0);
  /* Expected body: query {num_peers 0}, response {peer_infos…, status 200}. */
  ld_buf_t want;
  ld_buf_init(&want);
  const uint8_t query[] = {0x0a, 0x02, 0x08, 0x00};
  ld_buf_append(&want, query, sizeof query);
  size_t info1 = 3 + g_store.len, info2 = 3 + g_tcp.len; /* 0a <2-byte len> enr */
  size_t resp_len = (3 + info1) + (3 + info2) + 3;
  ld_buf_u8(&want, 0x12);
  ld_buf_varint(&want, resp_len);
  ld_buf_u8(&want, 0x0a);
  ld_buf_varint(&want, info1);
  ld_buf_u8(&want, 0x0a);
  ld_buf_varint(&want, g_store.len);
  ld_buf_append(&want, g_store.raw, g_store.len);
  ld_buf_u8(&want, 0x0a);
  ld_buf_varint(&want, info2);
  ld_buf_u8(&want, 0x0a);
  ld_buf_varint(&want, g_tcp.len);
  ld_buf_append(&want, g_tcp.raw, g_tcp.len);
  const uint8_t status[] = {0x50, 0xc8, 0x01};
  ld_buf_append(&want, status, sizeof status);
  ld_buf_t framed;
  ld_buf_init(&framed);
  ld_buf_lp(&framed, want.data, want.len);
  assert_int_equal(b.len, framed.len);
  assert_memory_equal(b.data, framed.data, framed.len);
  ld_buf_clear(&framed);
  ld_buf_clear(&want);

  ld_px_response_t r;
  assert_int_equal(ld_px_decode_response(b.data, b.len, 10, &r), (int)b.len);
  assert_int_equal(r.status_code, LD_PX_STATUS_SUCCESS);
  assert_false(r.has_status_desc);
  assert_int_equal(r.n_received, 2);
  assert_int_equal(r.n_enrs, 2);
  assert_int_equal(r.n_invalid, 0);
  assert_int_equal(r.n_unusable, 0);
  assert_memory_equal(r.enrs[0].raw, g_store.raw, g_store.len);
  assert_memory_equal(r.enrs[1].raw, g_tcp.raw, g_tcp.len);
  ld_px_response_clear(&r);
  assert_null(r.enrs);
  ld_buf_clear(&b);
}

static void response_filters_records(void **state) {
  (void)state;
  ld_enr_t tampered = g_tcp;
  tampered.raw[20] ^= 0x40;
  ld_enr_t empty = {0};
  ld_enr_t junk = {.len = 3, .raw = {0xc1, 0x80, 0x00}};
  /* EIP-778 example: valid but only udp, nothing to dial. */
  const ld_enr_t *enrs[] = {&tampered, &g_eip, &empty, &junk, &g_store};
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_px_encode_response(enrs, 5, LD_PX_STATUS_SUCCESS, NULL, &b), 0);
  ld_px_response_t r;
  assert_int_equal(ld_px_decode_response(b.data, b.len, 60, &r), (int)b.len);
  assert_int_equal(r.n_received, 5);
  assert_int_equal(r.n_invalid, 3);
  assert_int_equal(r.n_unusable, 1);
  assert_int_equal(r.n_enrs, 1);
  assert_memory_equal(r.enrs[0].raw, g_store.raw, g_store.len);
  ld_px_response_clear(&r);
  /* Only the first max_enrs peer_infos are looked at. */
  assert_int_equal(ld_px_decode_response(b.data, b.len, 2, &r), (int)b.len);
  assert_int_equal(r.n_received, 5);
  assert_int_equal(r.n_invalid, 1);
  assert_int_equal(r.n_unusable, 1);
  assert_int_equal(r.n_enrs, 0);
  ld_px_response_clear(&r);
  assert_int_equal(ld_px_decode_response(b.data, b.len, 0, &r), (int)b.len);
  assert_int_equal(r.n_enrs + r.n_invalid + r.n_unusable, 0);
  ld_px_response_clear(&r);
  ld_buf_clear(&b);
}

static void status_rules(void **state) {
  (void)state;
  uint8_t in[400];
  ld_px_response_t r;
  /* Error answer with a description. */
  ld_buf_t b;
  ld_buf_init(&b);
  assert_int_equal(ld_px_encode_response(NULL, 0, LD_PX_STATUS_BAD_REQUEST, "bad", &b), 0);
  size_t n = unhex("0e0a0208001208509003"
                   "5a03626164",
                   in);
  assert_int_equal(b.len, n);
  assert_memory_equal(b.data, in, n);
  assert_int_equal(ld_px_decode_response(b.data, b.len, 5, &r), (int)b.len);
  assert_int_equal(r.status_code, 400);
  assert_true(r.has_status_desc);
  assert_string_equal(r.status_desc, "bad");
  assert_int_equal(r.n_received, 0);
  ld_px_response_clear(&r);
  /* A long description is cut. */
  char desc[600];
  memset(desc, 'x', sizeof desc - 1);
  desc[sizeof desc - 1] = '\0';
  ld_buf_reset(&b);
  assert_int_equal(ld_px_encode_response(NULL, 0, LD_PX_STATUS_SERVICE_UNAVAILABLE, desc, &b), 0);
  assert_int_equal(ld_px_decode_response(b.data, b.len, 5, &r), (int)b.len);
  assert_int_equal(strlen(r.status_desc), LD_PX_MAX_STATUS_DESC);
  ld_px_response_clear(&r);
  /* Older peers: no status field. Peers ⇒ SUCCESS; none ⇒ SERVICE_UNAVAILABLE. */
  ld_buf_t m;
  ld_buf_init(&m);
  ld_buf_u8(&m, 0x12);
  ld_buf_varint(&m, 3 + 3 + g_tcp.len); /* varint(134) takes 2 bytes */
  ld_buf_u8(&m, 0x0a);
  ld_buf_varint(&m, 3 + g_tcp.len);
  ld_buf_u8(&m, 0x0a);
  ld_buf_varint(&m, g_tcp.len);
  ld_buf_append(&m, g_tcp.raw, g_tcp.len);
  ld_buf_t framed;
  ld_buf_init(&framed);
  ld_buf_lp(&framed, m.data, m.len);
  assert_int_equal(ld_px_decode_response(framed.data, framed.len, 5, &r), (int)framed.len);
  assert_int_equal(r.status_code, LD_PX_STATUS_SUCCESS);
  assert_int_equal(r.n_enrs, 1);
  ld_px_response_clear(&r);
  n = unhex("021200", in);
  assert_int_equal(ld_px_decode_response(in, n, 5, &r), (int)n);
  assert_int_equal(r.status_code, LD_PX_STATUS_SERVICE_UNAVAILABLE);
  ld_px_response_clear(&r);
  /* No response field at all (a request sent back): UNKNOWN, no records. */
  n = unhex("040a020805", in);
  assert_int_equal(ld_px_decode_response(in, n, 5, &r), (int)n);
  assert_int_equal(r.status_code, LD_PX_STATUS_UNKNOWN);
  assert_int_equal(r.n_received, 0);
  ld_px_response_clear(&r);
  assert_string_equal(ld_px_status_name(429), "TOO_MANY_REQUESTS");
  assert_string_equal(ld_px_status_name(7), "UNKNOWN");
  ld_buf_clear(&m);
  ld_buf_clear(&framed);
  ld_buf_clear(&b);
}

static void caps(void **state) {
  (void)state;
  ld_buf_t b;
  ld_buf_init(&b);
  /* More records than a response may carry. */
  const ld_enr_t *many[LD_PX_MAX_RESPONSE_ENRS + 1];
  for (size_t i = 0; i < LD_PX_MAX_RESPONSE_ENRS + 1; i++)
    many[i] = &g_store;
  assert_int_equal(ld_px_encode_response(many, LD_PX_MAX_RESPONSE_ENRS + 1, 200, NULL, &b),
                   LD_ERR_TOO_LARGE);
  assert_int_equal(b.len, 0);
  /* LD_PX_MAX_PEERS full records fit easily. */
  assert_int_equal(ld_px_encode_response(many, LD_PX_MAX_PEERS, 200, NULL, &b), 0);
  ld_px_response_t r;
  assert_int_equal(ld_px_decode_response(b.data, b.len, LD_PX_MAX_PEERS, &r), (int)b.len);
  assert_int_equal(r.n_enrs, LD_PX_MAX_PEERS);
  ld_px_response_clear(&r);
  /* A frame above LD_PX_MAX_RPC_SIZE is refused from its prefix alone. */
  uint8_t big_prefix[] = {0x81, 0x80, 0x04}; /* 65537 */
  assert_int_equal(ld_px_decode_response(big_prefix, sizeof big_prefix, 5, &r), LD_ERR_TOO_LARGE);
  /* 30,000 empty peer_infos in 60 KB: decoding would allocate beyond the budget. */
  ld_buf_t m;
  ld_buf_init(&m);
  size_t count = 30000;
  ld_buf_u8(&m, 0x12);
  ld_buf_varint(&m, 2 * count);
  for (size_t i = 0; i < count; i++) {
    ld_buf_u8(&m, 0x0a);
    ld_buf_u8(&m, 0x00);
  }
  ld_buf_reset(&b);
  ld_buf_lp(&b, m.data, m.len);
  assert_true(m.len <= LD_PX_MAX_RPC_SIZE);
  assert_int_equal(ld_px_decode_response(b.data, b.len, 5, &r), LD_ERR_BAD_PROTOBUF);
  assert_null(r.enrs);
  /* Garbage and truncation. */
  uint8_t junk[] = {0x03, 0x12, 0x05, 0x0a};
  assert_int_equal(ld_px_decode_response(junk, sizeof junk, 5, &r), LD_ERR_BAD_PROTOBUF);
  assert_int_equal(ld_px_decode_response(junk, 2, 5, &r), LD_ERR_TRUNCATED);
  assert_int_equal(ld_px_decode_response(junk, 0, 5, &r), LD_ERR_TRUNCATED);
  ld_buf_clear(&m);
  ld_buf_clear(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(request_matches_nwaku), cmocka_unit_test(request_forms),
      cmocka_unit_test(response_layout),       cmocka_unit_test(response_filters_records),
      cmocka_unit_test(status_rules),          cmocka_unit_test(caps),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
