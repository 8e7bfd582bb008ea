/* The checks of a transferred message (see ingress.h). */
#include "waku/sync/ingress.h"

#include "base/error.h"

static const char *const k_names[LD_SYNC_INGRESS_VERDICTS] = {
    "ok",      "duplicate", "undecodable", "ephemeral",     "wrong_shard",
    "too_old", "future",    "unsolicited", "bad_signature", "rln",
};

const char *ld_sync_ingress_verdict_name(ld_sync_ingress_verdict_t v) {
  return (unsigned)v < LD_SYNC_INGRESS_VERDICTS ? k_names[v] : "unknown";
}

bool ld_sync_rln_accept(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg) {
  (void)ctx, (void)pubsub_topic, (void)msg;
  return true;
}

/* Checks 1 to 4: what the message says about itself. */
static ld_sync_ingress_verdict_t check_message(const ld_sync_ingress_rules_t *r,
                                               const ld_sync_transfer_t *t) {
  const ld_waku_message_t *m = &t->message;
  if (r->js_rules && (m->content_topic_len == 0 || m->payload_len == 0))
    return LD_SYNC_INGRESS_UNDECODABLE;
  if (m->ephemeral)
    return LD_SYNC_INGRESS_EPHEMERAL;
  if (ld_sync_shards_find(r->shards, t->pubsub_topic, t->pubsub_topic_len) < 0)
    return LD_SYNC_INGRESS_WRONG_SHARD;
  if (m->timestamp < r->window_start)
    return LD_SYNC_INGRESS_TOO_OLD;
  if (m->timestamp > r->now_ns &&
      (uint64_t)m->timestamp - (uint64_t)r->now_ns > (uint64_t)LD_SYNC_MAX_FUTURE_NS)
    return LD_SYNC_INGRESS_FUTURE;
  return LD_SYNC_INGRESS_OK;
}

/* Checks 6 and 7: a protected shard's signature (verified at the message's own time, so that
 * relay's window never refuses it) and the RLN hook. */
static ld_sync_ingress_verdict_t check_proofs(const ld_sync_ingress_rules_t *r,
                                              const ld_sync_transfer_t *t) {
  const ld_relay_protected_shard_t *ps = ld_relay_protected_find(
      r->protected_shards, r->n_protected_shards, r->cluster_id, t->pubsub_topic);
  if (ps != NULL && ld_relay_verify_signed(ps->pubkey, t->pubsub_topic, &t->message,
                                           t->message.timestamp) != LD_RELAY_OK)
    return LD_SYNC_INGRESS_BAD_SIGNATURE;
  ld_sync_rln_fn rln = r->rln != NULL ? r->rln : ld_sync_rln_accept;
  return rln(r->rln_ctx, t->pubsub_topic, &t->message) ? LD_SYNC_INGRESS_OK : LD_SYNC_INGRESS_RLN;
}

static ld_sync_ingress_verdict_t verdict(const ld_sync_ingress_rules_t *r,
                                         const ld_sync_transfer_t *t, ld_sync_id_t *id) {
  ld_sync_ingress_verdict_t v = check_message(r, t);
  if (v != LD_SYNC_INGRESS_OK)
    return v;
  if (ld_sync_transfer_id(t, id) != 0)
    return LD_SYNC_INGRESS_UNDECODABLE;
  switch (r->wanted(r->wanted_ctx, id)) {
  case LD_SYNC_WANTED:
    return check_proofs(r, t);
  case LD_SYNC_HELD:
    return LD_SYNC_INGRESS_DUPLICATE;
  default:
    return LD_SYNC_INGRESS_UNSOLICITED;
  }
}

ld_sync_ingress_verdict_t ld_sync_ingress_check(const uint8_t *data, size_t len,
                                                const ld_sync_ingress_rules_t *rules,
                                                ld_sync_transfer_t *out, ld_sync_id_t *id) {
  if (ld_sync_transfer_decode(data, len, rules->max_msg_size, out, NULL, 0) != 0)
    return LD_SYNC_INGRESS_UNDECODABLE;
  ld_sync_ingress_verdict_t v = verdict(rules, out, id);
  if (v != LD_SYNC_INGRESS_OK && v != LD_SYNC_INGRESS_DUPLICATE)
    ld_sync_transfer_clear(out);
  return v;
}
