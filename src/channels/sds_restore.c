/* Restoring an SDS engine from persisted state (channels/sds.h, "persistence"). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/utf8.h"
#include "channels/sds_internal.h"

/* UTF-8 without NUL, as the wire decoder requires of text fields. */
static bool text_ok(const char *p, size_t n, size_t max) {
  if (p == NULL || n == 0 || n > max)
    return false;
  const uint8_t *s = (const uint8_t *)p;
  for (size_t i = 0; i < n;) {
    size_t l = s[i] == 0 ? 0 : ld_utf8_char_len(s + i, n - i);
    if (l == 0)
      return false;
    i += l;
  }
  return true;
}

void ld_sds_restore_lamport(ld_sds_t *s, uint64_t lamport) {
  if (lamport > s->lamport)
    s->lamport = lamport;
}

int ld_sds_restore_logged(ld_sds_t *s, uint64_t lamport, const char *id, size_t id_len,
                          const char *sender, size_t sender_len, const uint8_t *hint,
                          size_t hint_len) {
  if (!text_ok(id, id_len, LD_SDS_MAX_ID_LEN) || !text_ok(sender, sender_len, LD_SDS_MAX_ID_LEN) ||
      hint_len > LD_SDS_MAX_HINT_LEN || (hint == NULL && hint_len > 0))
    return LD_ERR_INVALID_ARG;
  if (sds_log_find(&s->log, id, id_len) != NULL)
    return LD_ERR_EXISTS;
  int rc = sds_log_insert(s, lamport, id, id_len, sender, sender_len, hint_len > 0 ? hint : NULL,
                          hint_len, NULL, 0);
  if (rc != 0)
    return rc;
  sds_bloom_insert(s, id, id_len);
  ld_sds_restore_lamport(s, lamport);
  return 0;
}

static bool same(const char *a, size_t alen, const char *b, size_t blen) {
  return alen == blen && memcmp(a, b, alen) == 0;
}

int ld_sds_restore_outgoing(ld_sds_t *s, uint64_t now_ms, const uint8_t *wire, size_t len,
                            uint32_t retransmissions, char **message_id) {
  if (message_id != NULL)
    *message_id = NULL;
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  int rc = ld_sds_message_decode(wire, len, &m, NULL, 0);
  if (rc != 0)
    return rc;
  if (ld_sds_message_class(&m) != LD_SDS_CLASS_CONTENT ||
      !same(m.sender_id, m.sender_id_len, s->self, s->self_len) ||
      !same(m.channel_id, m.channel_id_len, s->channel_id, s->channel_id_len) ||
      m.message_id_len == 0 || retransmissions > s->cfg.max_retransmissions) {
    ld_sds_message_clear(&m);
    return LD_ERR_MALFORMED;
  }
  char *id = NULL;
  if (message_id != NULL && (id = sds_strndup(m.message_id, m.message_id_len)) == NULL) {
    ld_sds_message_clear(&m);
    return LD_ERR_NOMEM;
  }
  ld_buf_t with_bloom; /* stored without its bloom filter: retransmitted with the current one */
  ld_buf_init(&with_bloom);
  if (!m.has_bloom) {
    m.has_bloom = true;
    m.bloom = s->bloom.data;
    m.bloom_len = s->bloom.params.bytes;
    if ((rc = ld_sds_message_encode(&m, &with_bloom)) == 0) {
      wire = with_bloom.data;
      len = with_bloom.len;
    }
  }
  if (rc == 0 && (rc = sds_begin(s, now_ms)) == 0)
    rc = sds_outgoing_restore(s, m.message_id, m.message_id_len, wire, len, retransmissions);
  ld_buf_clear(&with_bloom);
  if (rc == 0)
    ld_sds_restore_lamport(s, m.lamport);
  ld_sds_message_clear(&m);
  if (rc != 0) {
    free(id);
    return rc;
  }
  if (message_id != NULL)
    *message_id = id;
  return 0;
}

int ld_sds_strip_bloom(const uint8_t *wire, size_t len, ld_buf_t *out) {
  ld_buf_reset(out);
  ld_sds_message_t m;
  ld_sds_message_init(&m);
  int rc = ld_sds_message_decode(wire, len, &m, NULL, 0);
  if (rc == 0) {
    m.has_bloom = false;
    m.bloom_len = 0;
    rc = ld_sds_message_encode(&m, out);
  }
  ld_sds_message_clear(&m);
  return rc;
}
