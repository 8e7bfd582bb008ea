/* Fuzz target: the loader of persisted channel state (channels/channel_store.h,
 * ld_channel_record_apply) on a fresh engine. The input is a sequence of records
 * `kind ‖ ord (1 byte) ‖ len (2 bytes, big-endian) ‖ len bytes`, applied in order as the loader
 * applies a channel's rows (kind 1 log, 2 outgoing, 3 incoming; 4 queued needs its row key, so
 * it and other kinds must be refused here). After
 * each record the engine's queue is drained and its sizes must stay within the limits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channels/channel_store.h"
#include "channels/sds.h"

static void on_restored(void *ud, const char *message_id, const char *request_id) {
  size_t *n = ud;
  if (message_id == NULL || request_id == NULL || request_id[0] == '\0' ||
      strlen(request_id) > LD_CHANNEL_STORE_MAX_REQUEST_ID)
    abort();
  (*n)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_sds_config_t c;
  ld_sds_config_default(&c);
  c.random_seed = 1;
  c.max_log = 16;
  c.max_outgoing = 4;
  c.max_incoming = 8;
  c.max_incoming_bytes = 1u << 20;
  c.bloom_capacity = 16;
  c.bloom_error_rate = 0.05;
  ld_sds_t *s = NULL;
  if (ld_sds_new(&c, "room", "carol", 1000, &s) != 0)
    return 0;
  size_t restored = 0, off = 0;
  while (off + 4 <= size) {
    int kind = data[off];
    uint64_t ord = data[off + 1];
    size_t len = (size_t)data[off + 2] << 8 | data[off + 3];
    off += 4;
    if (len > size - off)
      len = size - off;
    char why[256];
    ld_channel_restore_fns_t fns = {.outgoing = on_restored};
    int rc = ld_channel_record_apply(s, 2000, kind, ord, data + off, len, &fns, &restored, why,
                                     sizeof why);
    if (rc != 0 && why[0] == '\0')
      abort(); /* every refusal says why */
    if ((kind < 1 || kind > 3) && rc == 0)
      abort();
    off += len;
    ld_sds_event_t ev;
    while (ld_sds_next_event(s, &ev))
      ld_sds_event_clear(&ev);
    ld_sds_stats_t st;
    ld_sds_get_stats(s, &st);
    if (st.log_len > c.max_log || st.outgoing_len > c.max_outgoing ||
        st.incoming_len > c.max_incoming)
      abort();
  }
  (void)ld_sds_handle_timeout(s, 1000000);
  ld_sds_event_t ev;
  while (ld_sds_next_event(s, &ev))
    ld_sds_event_clear(&ev);
  ld_sds_free(s);
  return 0;
}
