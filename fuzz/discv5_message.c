/* Fuzz target: any bytes as a discv5 message plaintext (message-type ‖ RLP). A message that
 * decodes must encode to the very same bytes (the decoder takes canonical RLP only) and decode
 * again to the same fields; the records of a NODES message are read one by one and decoded as
 * node records. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/cursor.h"
#include "waku/discovery/discv5_msg.h"
#include "waku/enr/enr.h"

static void same(const ld_discv5_msg_t *a, const ld_discv5_msg_t *b) {
  if (a->type != b->type || a->req_id_len != b->req_id_len ||
      memcmp(a->req_id, b->req_id, a->req_id_len) != 0 || a->enr_seq != b->enr_seq ||
      a->n_distances != b->n_distances ||
      memcmp(a->distances, b->distances, a->n_distances * sizeof a->distances[0]) != 0 ||
      a->total != b->total || a->enrs_len != b->enrs_len ||
      (a->enrs_len > 0 && memcmp(a->enrs, b->enrs, a->enrs_len) != 0) ||
      a->payload_len != b->payload_len ||
      (a->payload_len > 0 && memcmp(a->payload, b->payload, a->payload_len) != 0) ||
      a->protocol_len != b->protocol_len)
    abort();
  if (a->type == LD_DISCV5_PONG &&
      (a->ip_len != b->ip_len || memcmp(a->ip, b->ip, a->ip_len) != 0 || a->port != b->port))
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_discv5_msg_t m, again;
  if (ld_discv5_msg_decode(&m, data, size) != 0)
    return 0;
  ld_buf_t b;
  ld_buf_init(&b);
  if (ld_discv5_msg_encode(&b, &m) != 0 || b.len != size || memcmp(b.data, data, size) != 0 ||
      ld_discv5_msg_decode(&again, b.data, b.len) != 0)
    abort();
  same(&m, &again);
  ld_buf_clear(&b);
  if (m.type == LD_DISCV5_NODES) {
    ld_cursor_t list;
    const uint8_t *rec;
    size_t len;
    ld_enr_t enr;
    ld_cursor_init(&list, m.enrs, m.enrs_len);
    while (ld_discv5_nodes_next(&list, &rec, &len) == 0)
      ld_enr_decode(&enr, rec, len);
  }
  return 0;
}
