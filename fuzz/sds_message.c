/* Fuzz target: the SDS message decoder (src/channels/sds_wire.c). Whatever it accepts stays
 * within the caps, re-encodes, and decodes again to the same fields; the re-encoding is
 * canonical (encoding it again gives the same bytes). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "channels/sds_wire.h"

static void check_text(const char *p, size_t n) {
  if (p == NULL || p[n] != '\0' || memchr(p, 0, n) != NULL)
    abort();
}

static void check_entries(const ld_sds_history_entry_t *e, size_t n) {
  for (size_t i = 0; i < n; i++) {
    check_text(e[i].message_id, e[i].message_id_len);
    if (e[i].message_id_len > LD_SDS_MAX_ID_LEN || e[i].retrieval_hint_len > LD_SDS_MAX_HINT_LEN)
      abort();
    if (!e[i].has_retrieval_hint && e[i].retrieval_hint_len != 0)
      abort();
    if (e[i].has_sender_id)
      check_text(e[i].sender_id, e[i].sender_id_len);
  }
}

static bool same_entries(const ld_sds_history_entry_t *a, const ld_sds_history_entry_t *b,
                         size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (a[i].message_id_len != b[i].message_id_len ||
        memcmp(a[i].message_id, b[i].message_id, a[i].message_id_len) != 0 ||
        a[i].has_retrieval_hint != b[i].has_retrieval_hint ||
        a[i].retrieval_hint_len != b[i].retrieval_hint_len ||
        memcmp(a[i].retrieval_hint, b[i].retrieval_hint, a[i].retrieval_hint_len) != 0 ||
        a[i].has_sender_id != b[i].has_sender_id || a[i].sender_id_len != b[i].sender_id_len ||
        memcmp(a[i].sender_id, b[i].sender_id, a[i].sender_id_len) != 0)
      return false;
  }
  return true;
}

static bool same(const ld_sds_message_t *a, const ld_sds_message_t *b) {
  return a->sender_id_len == b->sender_id_len &&
         memcmp(a->sender_id, b->sender_id, a->sender_id_len) == 0 &&
         a->message_id_len == b->message_id_len &&
         memcmp(a->message_id, b->message_id, a->message_id_len) == 0 &&
         a->channel_id_len == b->channel_id_len &&
         memcmp(a->channel_id, b->channel_id, a->channel_id_len) == 0 &&
         a->has_lamport == b->has_lamport && a->lamport == b->lamport &&
         a->has_bloom == b->has_bloom && a->bloom_len == b->bloom_len &&
         memcmp(a->bloom, b->bloom, a->bloom_len) == 0 && a->has_content == b->has_content &&
         a->content_len == b->content_len && memcmp(a->content, b->content, a->content_len) == 0 &&
         a->causal_history_len == b->causal_history_len &&
         a->repair_request_len == b->repair_request_len &&
         same_entries(a->causal_history, b->causal_history, a->causal_history_len) &&
         same_entries(a->repair_request, b->repair_request, a->repair_request_len) &&
         ld_sds_message_class(a) == ld_sds_message_class(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ld_sds_message_t m, again;
  ld_sds_message_init(&m);
  ld_sds_message_init(&again);
  char why[160];
  if (ld_sds_message_decode(data, size, &m, why, sizeof why) != 0) {
    if (m.storage != NULL || why[0] == '\0')
      abort();
    return 0;
  }
  if (m.causal_history_len > LD_SDS_MAX_CAUSAL_HISTORY ||
      m.repair_request_len > LD_SDS_MAX_REPAIR_REQUESTS)
    abort();
  check_text(m.sender_id, m.sender_id_len);
  check_text(m.message_id, m.message_id_len);
  check_text(m.channel_id, m.channel_id_len);
  check_entries(m.causal_history, m.causal_history_len);
  check_entries(m.repair_request, m.repair_request_len);
  ld_buf_t out, out2;
  ld_buf_init(&out);
  ld_buf_init(&out2);
  if (ld_sds_message_encode(&m, &out) != 0 || out.len > size ||
      ld_sds_message_decode(out.data, out.len, &again, NULL, 0) != 0 || !same(&m, &again) ||
      ld_sds_message_encode(&again, &out2) != 0 || out2.len != out.len ||
      (out.len > 0 && memcmp(out.data, out2.data, out.len) != 0))
    abort();
  ld_buf_clear(&out);
  ld_buf_clear(&out2);
  ld_sds_message_clear(&again);
  ld_sds_message_clear(&m);
  return 0;
}
