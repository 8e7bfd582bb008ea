/* RLN-relay's validator plugged into its two callers: relay (an added validator, answering
 * gossipsub with nwaku's mapping) and store-sync's transfer path (the ingress RLN hook, which
 * checks the proof of a message old by design: no clock gap, no nullifier log). */
#ifndef LD_WAKU_RLN_HOOKS_H
#define LD_WAKU_RLN_HOOKS_H

#include <stdbool.h>

#include "waku/relay/relay.h"
#include "waku/rln/validator.h"

/* The relay side: `validator` owned by the caller; `now_ns` NULL means the wall clock. */
typedef struct ld_rln_relay_hook {
  ld_rln_validator_t *validator;
  int64_t (*now_ns)(void *ctx);
  void *now_ctx;
} ld_rln_relay_hook_t;

/* An ld_relay_validator_fn: user_data is an ld_rln_relay_hook_t. Answers at once. */
void ld_rln_relay_validate(ld_relay_t *r, uint64_t token, const char *pubsub_topic,
                           const ld_waku_message_t *msg, const ld_peerid_t *from, void *user_data);

/* An ld_sync_rln_fn (waku/sync/ingress.h): ctx is an ld_rln_validator_t; true when
 * ld_rln_validator_check_proof finds the message valid. */
bool ld_rln_sync_accept(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg);

#endif
