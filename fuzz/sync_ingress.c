/* Fuzz target: the checks of a message arriving by store-sync transfer (ingress.h) on a frame
 * body. The first input byte picks the rules (js-waku rules, what the session says of the item,
 * a protected shard, a refusing RLN hook); the rest is the frame. A message that passes carries a
 * kept topic, a timestamp inside the window and the item computed from it; anything else leaves
 * nothing decoded. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "waku/sync/ingress.h"

#define NOW 1750000000000000000ll
#define WINDOW (3620ll * 1000000000ll)

static const char *const k_topics[2] = {"/waku/2/rs/0/0", "/waku/2/rs/0/1"};

static ld_sync_wanted_t wanted(void *ctx, const ld_sync_id_t *id) {
  (void)id;
  return (ld_sync_wanted_t)(*(const uint8_t *)ctx % 3);
}

static bool refuse(void *ctx, const char *topic, const ld_waku_message_t *msg) {
  (void)ctx, (void)topic, (void)msg;
  return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ld_sync_shards_t *shards;
  if (shards == NULL && ld_sync_shards_new(k_topics, 2, &shards) != 0)
    abort();
  if (size == 0)
    return 0;
  uint8_t flags = data[0];
  ld_relay_protected_shard_t ps = {.shard = 1};
  memset(ps.pubkey, 0, sizeof ps.pubkey);
  ps.pubkey[0] = 0x02; /* not a point: nothing verifies */
  ld_sync_ingress_rules_t r = {0};
  r.shards = shards;
  r.js_rules = flags & 1;
  r.window_start = NOW - WINDOW;
  r.now_ns = NOW;
  r.wanted = wanted;
  uint8_t answer = (uint8_t)((flags >> 1) & 3);
  r.wanted_ctx = &answer;
  r.protected_shards = &ps;
  r.n_protected_shards = (flags & 8) ? 1 : 0;
  r.rln = (flags & 16) ? refuse : NULL;
  ld_sync_transfer_t t;
  ld_sync_transfer_init(&t);
  ld_sync_id_t id;
  ld_sync_ingress_verdict_t v = ld_sync_ingress_check(data + 1, size - 1, &r, &t, &id);
  if ((unsigned)v >= LD_SYNC_INGRESS_VERDICTS)
    abort();
  bool kept = v == LD_SYNC_INGRESS_OK || v == LD_SYNC_INGRESS_DUPLICATE;
  if (!kept) {
    if (t.pubsub_topic != NULL)
      abort();
    return 0;
  }
  ld_sync_id_t again;
  if (t.pubsub_topic == NULL ||
      ld_sync_shards_find(shards, t.pubsub_topic, t.pubsub_topic_len) < 0 ||
      t.message.timestamp < NOW - WINDOW || t.message.timestamp > NOW + LD_SYNC_MAX_FUTURE_NS ||
      t.message.ephemeral || ld_sync_transfer_id(&t, &again) != 0 ||
      ld_sync_id_cmp(&again, &id) != 0)
    abort();
  if (v == LD_SYNC_INGRESS_OK && (r.rln != NULL || answer % 3 != LD_SYNC_WANTED))
    abort();
  ld_sync_transfer_clear(&t);
  return 0;
}
