/* Fuzz target: the LIP-243 segment wrapper (channels/segment.h). The input is a sequence of
 * records `sender (1 byte) ‖ len (2 bytes, big-endian) ‖ len bytes`; each record is decoded as a
 * segment (data or parity); a segment must re-encode to a message that decodes to the same fields,
 * and goes to a small reassembler (4 sets, 64 KiB) whose bounds must hold after every step; a
 * payload it rebuilds (from data or through Reed–Solomon parity) must hash to the set's hash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "channels/segment.h"
#include "crypto/keccak.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_reassembler_t *r = ld_reassembler_new(4, 64 * 1024, 1000);
  if (r == NULL)
    return 0;
  size_t off = 0;
  uint64_t now = 0;
  while (off + 3 <= size) {
    char sender[8];
    snprintf(sender, sizeof sender, "p%u", data[off] % 4);
    size_t len = (size_t)data[off + 1] << 8 | data[off + 2];
    off += 3;
    if (len > size - off)
      len = size - off;
    ld_segment_t seg;
    if (ld_segment_decode(data + off, len, &seg) == 0) {
      ld_buf_t again;
      ld_buf_init(&again);
      ld_segment_t back;
      if (ld_segment_encode_full(&seg, &again) != 0 ||
          ld_segment_decode(again.data, again.len, &back) != 0 || back.index != seg.index ||
          back.count != seg.count || back.len != seg.len || back.is_parity != seg.is_parity ||
          back.parity_index != seg.parity_index || back.parity_count != seg.parity_count ||
          back.total_len != seg.total_len || memcmp(back.payload, seg.payload, seg.len) != 0 ||
          memcmp(back.hash, seg.hash, LD_SEGMENT_HASH_LEN) != 0)
        abort();
      ld_buf_clear(&again);
      uint8_t *whole = NULL;
      size_t whole_len = 0;
      int rc = ld_reassembler_add(r, sender, &seg, now, &whole, &whole_len);
      if ((rc == LD_REASSEMBLY_COMPLETE) != (whole != NULL))
        abort();
      uint8_t digest[LD_KECCAK256_LEN];
      if (whole != NULL &&
          (ld_keccak256(whole, whole_len, digest), memcmp(digest, seg.hash, sizeof digest) != 0))
        abort();
      free(whole);
    }
    off += len;
    now += 97;
    ld_reassembler_expire(r, now, NULL);
    if (ld_reassembler_sets(r) > 4 || ld_reassembler_bytes(r) > 64 * 1024)
      abort();
  }
  ld_reassembler_free(r);
  return 0;
}
