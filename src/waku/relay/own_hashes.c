#include "waku/relay/own_hashes.h"

#include <stdlib.h>
#include <string.h>

#include "base/hashmap.h"

static uint64_t topic_key(const char *topic) {
  static const uint8_t k[16] = {'l', 'd', '-', 'o', 'w', 'n', '-', 't', 'o', 'p', 'i', 'c'};
  return ld_siphash13(k, topic, strlen(topic));
}

void ld_relay_own_hashes_push(ld_relay_own_hashes_t *q, const char *topic,
                              const uint8_t id[LD_GS_MSG_ID_LEN],
                              const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (q->v == NULL && (q->v = calloc(LD_RELAY_OWN_HASHES_MAX, sizeof *q->v)) == NULL)
    return;
  if (q->n == LD_RELAY_OWN_HASHES_MAX) { /* drop the oldest */
    q->head = (q->head + 1) % LD_RELAY_OWN_HASHES_MAX;
    q->n--;
  }
  ld_relay_own_hash_t *e = &q->v[(q->head + q->n) % LD_RELAY_OWN_HASHES_MAX];
  memcpy(e->id, id, LD_GS_MSG_ID_LEN);
  memcpy(e->hash, hash, LD_WAKU_HASH_LEN);
  e->topic_key = topic_key(topic);
  q->n++;
}

bool ld_relay_own_hashes_take(ld_relay_own_hashes_t *q, const char *topic,
                              const uint8_t id[LD_GS_MSG_ID_LEN], uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (q->n == 0)
    return false;
  uint64_t key = topic_key(topic);
  for (size_t i = 0; i < q->n; i++) {
    const ld_relay_own_hash_t *e = &q->v[(q->head + i) % LD_RELAY_OWN_HASHES_MAX];
    if (e->topic_key != key || memcmp(e->id, id, LD_GS_MSG_ID_LEN) != 0)
      continue;
    memcpy(hash, e->hash, LD_WAKU_HASH_LEN);
    q->head = (q->head + i + 1) % LD_RELAY_OWN_HASHES_MAX;
    q->n -= i + 1;
    return true;
  }
  return false;
}

void ld_relay_own_hashes_clear(ld_relay_own_hashes_t *q) {
  free(q->v);
  q->v = NULL;
  q->head = q->n = 0;
}
