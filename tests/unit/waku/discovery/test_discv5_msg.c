/* discv5 messages: every type round trips, the encodings other implementations write decode, and
 * malformed message-data is refused with a named error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "discv5_vectors.h"
#include "waku/discovery/discv5_msg.h"
#include "waku/enr/enr.h"

static void round_trip(const ld_discv5_msg_t *m, ld_discv5_msg_t *out, ld_buf_t *b) {
  ld_buf_reset(b);
  assert_int_equal(ld_discv5_msg_encode(b, m), 0);
  assert_int_equal(ld_discv5_msg_decode(out, b->data, b->len), 0);
  assert_int_equal(out->type, m->type);
  assert_int_equal(out->req_id_len, m->req_id_len);
  assert_memory_equal(out->req_id, m->req_id, m->req_id_len);
}

static void every_type_round_trips(void **state) {
  (void)state;
  ld_buf_t b;
  ld_buf_init(&b);
  ld_discv5_msg_t m, out;
  memset(&m, 0, sizeof m);
  m.req_id_len = 8;
  memcpy(m.req_id, "\x81\x02\x03\x04\x05\x06\x07\x08", 8);
  m.type = LD_DISCV5_PING;
  m.enr_seq = UINT64_MAX;
  round_trip(&m, &out, &b);
  assert_true(out.enr_seq == UINT64_MAX);
  m.type = LD_DISCV5_PONG;
  m.enr_seq = 0;
  m.ip_len = 4;
  memcpy(m.ip, "\x7f\x00\x00\x01", 4);
  m.port = 65535;
  round_trip(&m, &out, &b);
  assert_int_equal(out.enr_seq, 0);
  assert_int_equal(out.ip_len, 4);
  assert_memory_equal(out.ip, "\x7f\x00\x00\x01", 4);
  assert_int_equal(out.port, 65535);
  m.ip_len = 16;
  memset(m.ip, 0xfe, 16);
  m.port = 0;
  round_trip(&m, &out, &b);
  assert_int_equal(out.ip_len, 16);
  assert_int_equal(out.port, 0);
  m.type = LD_DISCV5_FINDNODE;
  m.n_distances = 4;
  m.distances[0] = 256;
  m.distances[1] = 255;
  m.distances[2] = 0;
  m.distances[3] = 1;
  round_trip(&m, &out, &b);
  assert_int_equal(out.n_distances, 4);
  assert_memory_equal(out.distances, m.distances, 4 * sizeof(uint16_t));
  m.type = LD_DISCV5_TALKREQ;
  m.protocol = (const uint8_t *)"waku";
  m.protocol_len = 4;
  m.payload = (const uint8_t *)"hello";
  m.payload_len = 5;
  round_trip(&m, &out, &b);
  assert_int_equal(out.protocol_len, 4);
  assert_memory_equal(out.protocol, "waku", 4);
  assert_int_equal(out.payload_len, 5);
  assert_memory_equal(out.payload, "hello", 5);
  m.type = LD_DISCV5_TALKRESP;
  m.payload_len = 0;
  round_trip(&m, &out, &b);
  assert_int_equal(out.payload_len, 0);
  ld_buf_clear(&b);
}

/* NODES carries whole records; they come back one by one and still verify. */
static void nodes_carry_records(void **state) {
  (void)state;
  static const char *texts[] = {
      "enr:-IS4QHCYrYZbAKWCBRlAy5zzaDZXJBGkcnh4MHcBFZntXNFrdvJjX04jRzjzCBOonrkTfj499SZuOh8R33Ls8RR"
      "cy5wBgmlkgnY0gmlwhH8AAAGJc2VjcDI1NmsxoQPKY0yuDUmstAHYpMa2_oxVtw0RW_"
      "QAdpzBQA8yWM0xOIN1ZHCCdl8",
      "enr:-IS4QAmC_o1PMi5DbR4Bh4oHVyQunZblg4bTaottPtBodAhJZvxVlWW-4rXITPNg4mwJ8cW__"
      "D9FBDc9N4mdhyMqB"
      "-EBgmlkgnY0gmlwhIbRi9KJc2VjcDI1NmsxoQOevTdO6jvv3fRruxguKR-3Ge4bcFsLeAIWEDjrfaigNoN0Y3CCdl8",
  };
  ld_enr_t enrs[2];
  ld_buf_t recs, b;
  ld_buf_init(&recs);
  ld_buf_init(&b);
  for (int i = 0; i < 2; i++) {
    assert_int_equal(ld_enr_parse_text(&enrs[i], texts[i]), 0);
    assert_int_equal(ld_buf_append(&recs, enrs[i].raw, enrs[i].len), 0);
  }
  ld_discv5_msg_t m, out;
  memset(&m, 0, sizeof m);
  m.type = LD_DISCV5_NODES;
  m.req_id_len = 1;
  m.req_id[0] = 0x7f;
  m.total = 2;
  m.enrs = recs.data;
  m.enrs_len = recs.len;
  round_trip(&m, &out, &b);
  assert_int_equal(b.len, ld_discv5_nodes_size(1, 2, recs.len) - 1); /* 0x7f has no header */
  assert_int_equal(out.total, 2);
  ld_cursor_t list;
  ld_cursor_init(&list, out.enrs, out.enrs_len);
  for (int i = 0; i < 2; i++) {
    const uint8_t *rec;
    size_t len;
    ld_enr_t back;
    assert_int_equal(ld_discv5_nodes_next(&list, &rec, &len), 0);
    assert_int_equal(ld_enr_decode(&back, rec, len), 0);
    assert_memory_equal(back.raw, enrs[i].raw, enrs[i].len);
  }
  const uint8_t *rec;
  size_t len;
  assert_int_equal(ld_discv5_nodes_next(&list, &rec, &len), LD_ERR_NOT_FOUND);
  /* An empty answer. */
  m.total = 1;
  m.enrs_len = 0;
  round_trip(&m, &out, &b);
  assert_int_equal(out.enrs_len, 0);
  ld_buf_clear(&recs);
  ld_buf_clear(&b);
}

static int decode_hex(ld_discv5_msg_t *m, const char *hex) {
  uint8_t buf[256];
  size_t n = vhex(hex, buf);
  return ld_discv5_msg_decode(m, buf, n);
}

static void malformed_messages(void **state) {
  (void)state;
  ld_discv5_msg_t m;
  assert_int_equal(decode_hex(&m, "01c20101"), 0); /* the spec's PING */
  assert_int_equal(ld_discv5_msg_decode(&m, NULL, 0), LD_ERR_TRUNCATED);
  assert_int_equal(decode_hex(&m, "07c20101"), LD_ERR_UNSUPPORTED); /* REGTOPIC */
  assert_int_equal(decode_hex(&m, "00c20101"), LD_ERR_UNSUPPORTED);
  assert_int_equal(decode_hex(&m, "0101"), LD_ERR_MALFORMED);       /* not a list */
  assert_int_equal(decode_hex(&m, "01c301"), LD_ERR_TRUNCATED);     /* list runs out */
  assert_int_equal(decode_hex(&m, "01c2010100"), LD_ERR_MALFORMED); /* trailing byte */
  assert_int_equal(decode_hex(&m, "01c101"), LD_ERR_MALFORMED);     /* enr-seq missing */
  assert_int_equal(decode_hex(&m, "01c3010101"), LD_ERR_MALFORMED); /* extra item */
  assert_int_equal(decode_hex(&m, "01c2c001"), LD_ERR_MALFORMED);   /* req-id a list */
  assert_int_equal(decode_hex(&m, "01cb89010203040506070809"
                                  "01"),
                   LD_ERR_MALFORMED);                                 /* 9 B */
  assert_int_equal(decode_hex(&m, "01c301820001"), LD_ERR_MALFORMED); /* leading zero */
  assert_int_equal(decode_hex(&m, "01cb01"
                                  "89010203040506070809"),
                   LD_ERR_MALFORMED); /* >u64 */
  /* PONG: IP of 5 bytes, port of 3 bytes. */
  assert_int_equal(decode_hex(&m, "02c90101857f00000102"
                                  "01"),
                   LD_ERR_MALFORMED);
  assert_int_equal(decode_hex(&m, "02cb0101847f000001"
                                  "83010000"),
                   LD_ERR_MALFORMED);
  assert_int_equal(decode_hex(&m, "02c90101847f000001"
                                  "8276"
                                  "5f"),
                   LD_ERR_MALFORMED);
  assert_int_equal(decode_hex(&m, "02ca0101847f000001"
                                  "82765f"),
                   0);
  assert_int_equal(m.port, 30303);
  /* FINDNODE: distances must be a list of integers. */
  assert_int_equal(decode_hex(&m, "03c20180"), LD_ERR_MALFORMED);
  assert_int_equal(decode_hex(&m, "03c401c28100"), LD_ERR_MALFORMED);
  assert_int_equal(decode_hex(&m, "03c501c3820100"), 0);
  assert_int_equal(m.n_distances, 1);
  assert_int_equal(m.distances[0], 256);
  /* NODES: the record list must be a list of well-formed items. */
  assert_int_equal(decode_hex(&m, "04c3010180"), LD_ERR_MALFORMED);
  assert_int_equal(decode_hex(&m, "04c40101c183"), LD_ERR_MALFORMED);
  /* TALKRESP with a list as response. */
  assert_int_equal(decode_hex(&m, "06c201c0"), LD_ERR_MALFORMED);
}

static void too_many_distances(void **state) {
  (void)state;
  uint8_t buf[1024];
  size_t n = 0;
  size_t count = LD_DISCV5_MAX_DISTANCES + 1;
  buf[n++] = LD_DISCV5_FINDNODE;
  buf[n++] = 0xf9; /* list, 2-byte length */
  size_t len_at = n;
  n += 2;
  buf[n++] = 0x01;
  buf[n++] = 0xf9;
  buf[n++] = (uint8_t)(count >> 8);
  buf[n++] = (uint8_t)count;
  for (size_t i = 0; i < count; i++)
    buf[n++] = 0x01;
  size_t payload = n - len_at - 2;
  buf[len_at] = (uint8_t)(payload >> 8);
  buf[len_at + 1] = (uint8_t)payload;
  ld_discv5_msg_t m;
  assert_int_equal(ld_discv5_msg_decode(&m, buf, n), LD_ERR_LIMIT);
  /* One fewer fits. */
  buf[len_at + 1]--;
  buf[len_at + 5]--;
  assert_int_equal(ld_discv5_msg_decode(&m, buf, n - 1), 0);
  assert_int_equal(m.n_distances, LD_DISCV5_MAX_DISTANCES);
}

static void encode_refuses_bad_fields(void **state) {
  (void)state;
  ld_buf_t b;
  ld_buf_init(&b);
  ld_discv5_msg_t m;
  memset(&m, 0, sizeof m);
  m.type = LD_DISCV5_PONG;
  m.ip_len = 5;
  assert_int_equal(ld_discv5_msg_encode(&b, &m), LD_ERR_INVALID_ARG);
  m.type = LD_DISCV5_PING;
  m.req_id_len = 9;
  assert_int_equal(ld_discv5_msg_encode(&b, &m), LD_ERR_INVALID_ARG);
  m.req_id_len = 0;
  m.type = (ld_discv5_msg_type_t)9;
  assert_int_equal(ld_discv5_msg_encode(&b, &m), LD_ERR_INVALID_ARG);
  assert_int_equal(b.len, 0);
  ld_buf_clear(&b);
}

static void request_ids_compare_as_integers(void **state) {
  (void)state;
  assert_true(
      ld_discv5_req_id_equal((const uint8_t *)"\x00\x00\x01", 3, (const uint8_t *)"\x01", 1));
  assert_true(ld_discv5_req_id_equal(NULL, 0, (const uint8_t *)"\x00", 1));
  assert_false(ld_discv5_req_id_equal((const uint8_t *)"\x01\x00", 2, (const uint8_t *)"\x01", 1));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_type_round_trips),
      cmocka_unit_test(nodes_carry_records),
      cmocka_unit_test(malformed_messages),
      cmocka_unit_test(too_many_distances),
      cmocka_unit_test(encode_refuses_bad_fields),
      cmocka_unit_test(request_ids_compare_as_integers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
