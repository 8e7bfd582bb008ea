/* RLN-relay's validator in relay and in store-sync's ingress. */
#include "waku/rln/hooks.h"

#include "base/clock.h"

void ld_rln_relay_validate(ld_relay_t *r, uint64_t token, const char *pubsub_topic,
                           const ld_waku_message_t *msg, const ld_peerid_t *from, void *user_data) {
  (void)pubsub_topic, (void)from;
  ld_rln_relay_hook_t *h = user_data;
  int64_t now = h->now_ns != NULL ? h->now_ns(h->now_ctx) : (int64_t)ld_wall_ns();
  ld_rln_verdict_t v = ld_rln_validator_check(h->validator, msg, now, NULL);
  ld_relay_validation_done(r, token, ld_rln_gossipsub_verdict(v));
}

bool ld_rln_sync_accept(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg) {
  (void)pubsub_topic;
  return ld_rln_validator_check_proof(ctx, msg, NULL) == LD_RLN_VALID;
}
