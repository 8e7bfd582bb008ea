/* Fuzz target: multistream-select engines in both roles, fed the input in chunks whose sizes
 * come from the input itself. Invariants: consumed never exceeds the chunk, agreement only on a
 * protocol the engine offered or served, and nothing is read or kept after an error. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "p2p/multistream.h"

static const char *const served[] = {"/noise", "/yamux/1.0.0", "/ipfs/id/1.0.0"};

static const char *select_served(void *ud, const char *p, size_t len) {
  (void)ud;
  for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
    if (strlen(served[i]) == len && memcmp(served[i], p, len) == 0)
      return served[i];
  return NULL;
}

static size_t list_served(void *ud, const char **out, size_t max) {
  (void)ud;
  size_t n = sizeof served / sizeof served[0];
  for (size_t i = 0; i < n && i < max; i++)
    out[i] = served[i];
  return n;
}

static bool is_served(const char *p) {
  for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
    if (p == served[i])
      return true;
  return false;
}

static void run(bool initiator, size_t chunk, const uint8_t *data, size_t size) {
  static const char *const proposals[] = {"/mplex/6.7.0", "/yamux/1.0.0", "/noise"};
  ld_mss_t m;
  ld_buf_t out;
  ld_buf_init(&out);
  if (initiator)
    ld_mss_init_initiator(&m, proposals, 3);
  else
    ld_mss_init_listener(&m, select_served, list_served, NULL);
  if (ld_mss_start(&m, &out) != 0)
    abort();
  size_t pos = 0;
  int rc = LD_MSS_PENDING;
  while (pos < size && rc == LD_MSS_PENDING) {
    size_t n = size - pos < chunk ? size - pos : chunk, used = 0;
    rc = ld_mss_read(&m, data + pos, n, &used, &out);
    if (used > n || (rc == LD_MSS_PENDING && used != n))
      abort();
    pos += used;
  }
  if (rc == LD_MSS_DONE) {
    const char *sel = ld_mss_selected(&m);
    if (sel == NULL || (initiator ? sel != proposals[ld_mss_selected_index(&m)] : !is_served(sel)))
      abort();
  }
  ld_mss_clear(&m);
  ld_buf_clear(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t chunk = (data[0] & 0x7f) + 1;
  run((data[0] & 0x80) != 0, chunk, data + 1, size - 1);
  run((data[0] & 0x80) == 0, size, data + 1, size - 1);
  return 0;
}
