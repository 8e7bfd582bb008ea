/* Fuzz target: the Waku metadata decoder. Whatever it accepts must re-encode to a frame that
 * decodes to the same cluster and shards. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "waku/metadata/metadata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_metadata_info_t info, again;
  int used = ld_metadata_decode(data, size, &info);
  if (used < 0)
    return 0;
  if ((size_t)used > size || info.n_shards > LD_METADATA_MAX_SHARDS)
    abort();
  ld_buf_t out;
  ld_buf_init(&out);
  int rc = ld_metadata_encode(&info, &out);
  if (rc == 0) {
    if (ld_metadata_decode(out.data, out.len, &again) != (int)out.len ||
        memcmp(&info, &again, sizeof info) != 0)
      abort();
  }
  ld_buf_clear(&out);
  return 0;
}
