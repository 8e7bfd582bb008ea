/* Fuzz target: any bytes as a binary node record, as "enr:" text, and as a stream of RLP items.
 * A record that decodes must print and parse back to the same bytes, and every accessor must
 * stay within the record. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "waku/enr/enr.h"
#include "waku/enr/rlp.h"

#define MAX_DEPTH 16

static void walk_rlp(ld_cursor_t *c, int depth) {
  ld_rlp_item_t it;
  while (!ld_cursor_empty(c) && ld_rlp_read(c, &it) == 0) {
    if (it.raw_len == 0 || it.payload_len > it.raw_len)
      abort();
    uint64_t v;
    ld_rlp_item_uint(&it, &v);
    if (it.is_list && depth < MAX_DEPTH) {
      ld_cursor_t inner;
      ld_cursor_init(&inner, it.payload, it.payload_len);
      walk_rlp(&inner, depth + 1);
    }
  }
}

static void use_record(const ld_enr_t *enr) {
  char text[LD_ENR_TEXT_MAX];
  int n = ld_enr_to_text(enr, text, sizeof text);
  if (n <= 0)
    abort();
  ld_enr_t again;
  if (ld_enr_parse_text(&again, text) != 0 || again.len != enr->len ||
      memcmp(again.raw, enr->raw, enr->len) != 0 || again.seq != enr->seq)
    abort();
  uint8_t id[LD_ENR_NODE_ID_LEN], caps, ip[16];
  uint16_t port;
  ld_peerid_t peer;
  if (ld_enr_node_id(enr, id) != 0 || ld_enr_peer_id(enr, &peer) != 0)
    abort();
  ld_enr_waku2(enr, &caps);
  ld_enr_ip4(enr, ip);
  ld_enr_ip6(enr, ip);
  ld_enr_port(enr, "tcp", &port);
  ld_enr_shards_t shards;
  if (ld_enr_shards(enr, &shards) == 0 && shards.n_shards > LD_ENR_MAX_SHARD + 1)
    abort();
  ld_multiaddr_t addrs[4];
  size_t skipped;
  ld_enr_multiaddrs(enr, addrs, 4, &skipped);
  ld_enr_dial_addrs(enr, addrs, 4);
  for (size_t i = 0; i < enr->n_pairs; i++) {
    const ld_enr_pair_t *p = &enr->pairs[i];
    if ((size_t)p->item_off + p->item_len > enr->len || (size_t)p->key_off + p->key_len > enr->len)
      abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_cursor_t c;
  ld_cursor_init(&c, data, size);
  walk_rlp(&c, 0);

  ld_enr_t enr;
  if (ld_enr_decode(&enr, data, size) == 0) {
    if (enr.len != size)
      abort();
    use_record(&enr);
  }
  char text[LD_ENR_TEXT_PARSE_MAX + 16];
  size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
  memcpy(text, data, n);
  text[n] = '\0';
  if (ld_enr_parse_text(&enr, text) == 0)
    use_record(&enr);
  return 0;
}
