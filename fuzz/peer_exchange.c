/* Fuzz target: any bytes as a length-prefixed peer-exchange request and response. What decodes
 * must re-encode and decode again to the same request size and the same kept records. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "waku/peer_exchange/peer_exchange.h"

static void check_request(const uint8_t *data, size_t size) {
  uint64_t num = 0, again = 0;
  int used = ld_px_decode_request(data, size, &num);
  if (used < 0)
    return;
  if ((size_t)used > size)
    abort();
  ld_buf_t b;
  ld_buf_init(&b);
  if (ld_px_encode_request(num, &b) == 0 &&
      (ld_px_decode_request(b.data, b.len, &again) != (int)b.len || again != num))
    abort();
  ld_buf_clear(&b);
}

static void check_response(const uint8_t *data, size_t size) {
  ld_px_response_t r, again;
  int used = ld_px_decode_response(data, size, LD_PX_MAX_RESPONSE_ENRS, &r);
  if (used < 0)
    return;
  if ((size_t)used > size || r.n_enrs + r.n_invalid + r.n_unusable > r.n_received ||
      r.n_enrs > LD_PX_MAX_RESPONSE_ENRS || strlen(r.status_desc) > LD_PX_MAX_STATUS_DESC)
    abort();
  const ld_enr_t *ptrs[LD_PX_MAX_RESPONSE_ENRS];
  for (size_t i = 0; i < r.n_enrs; i++)
    ptrs[i] = &r.enrs[i];
  ld_buf_t b;
  ld_buf_init(&b);
  if (ld_px_encode_response(ptrs, r.n_enrs, r.status_code, r.has_status_desc ? r.status_desc : NULL,
                            &b) == 0) {
    if (ld_px_decode_response(b.data, b.len, LD_PX_MAX_RESPONSE_ENRS, &again) != (int)b.len ||
        again.n_enrs != r.n_enrs || again.status_code != r.status_code)
      abort();
    for (size_t i = 0; i < r.n_enrs; i++)
      if (again.enrs[i].len != r.enrs[i].len ||
          memcmp(again.enrs[i].raw, r.enrs[i].raw, r.enrs[i].len) != 0)
        abort();
    ld_px_response_clear(&again);
  }
  ld_buf_clear(&b);
  ld_px_response_clear(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_request(data, size);
  check_response(data, size);
  return 0;
}
