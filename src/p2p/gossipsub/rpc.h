/* The pubsub RPC codec: decoding with protobuf-c and an outbox that packs queued subscriptions,
 * messages and control entries into RPCs no larger than a given size.
 *
 * Decoding keeps every field as received (presence flags included) and skips unknown fields;
 * semantic checks (StrictNoSign, topic syntax, message ID lengths) belong to the router.
 * Encoding emits only the fields StrictNoSign allows in a message (data, topic), PRUNEs without
 * peer exchange, and fields in field-number order, so the output matches the published vectors
 * byte for byte. Not thread-safe; no global state. */
#ifndef LD_P2P_GOSSIPSUB_RPC_H
#define LD_P2P_GOSSIPSUB_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gossipsub.pb-c.h"

#define LD_GS_RPC_ID_LEN 32 /* the only message ID length the outbox emits */

typedef Ld__Gossipsub__RPC ld_gs_rpc_t;

/* Decodes one RPC (no length prefix). On success *out owns the decoded tree; free it with
 * ld_gs_rpc_free. Errors: LD_ERR_BAD_PROTOBUF (malformed), LD_ERR_INVALID_ARG. Allocation is
 * bounded by a small multiple of `len`, so callers cap `len` first. */
int ld_gs_rpc_decode(const uint8_t *buf, size_t len, ld_gs_rpc_t **out);
void ld_gs_rpc_free(ld_gs_rpc_t *rpc);

/* Bytes of an RPC that carries exactly one message with the given topic and data lengths. */
size_t ld_gs_rpc_msg_size(size_t topic_len, size_t data_len);

/* ---- outbox --------------------------------------------------------------------------------- */

typedef enum {
  LD_GS_OUT_SUB,
  LD_GS_OUT_MSG,
  LD_GS_OUT_IHAVE,
  LD_GS_OUT_IWANT,
  LD_GS_OUT_GRAFT,
  LD_GS_OUT_PRUNE,
  LD_GS_OUT_IDONTWANT,
} ld_gs_out_kind_t;

typedef struct ld_gs_out_item {
  uint8_t kind;      /* ld_gs_out_kind_t */
  bool flag;         /* SUB: subscribe; PRUNE: carries a backoff */
  const char *topic; /* borrowed */
  size_t topic_len;
  const uint8_t *data; /* MSG: borrowed */
  size_t len;
  uint64_t backoff; /* PRUNE: seconds */
  size_t ids_off;   /* IHAVE/IWANT/IDONTWANT: first id in the id buffer */
  size_t n_ids;
} ld_gs_out_item_t;

/* Pending output for one peer. Topic strings and message data are borrowed: they must stay valid
 * until the next ld_gs_out_flush or ld_gs_out_reset. Message IDs are copied. Caller storage:
 * zero-initialise or ld_gs_out_init, release with ld_gs_out_clear. */
typedef struct ld_gs_out {
  ld_gs_out_item_t *items;
  size_t n_items, cap_items;
  uint8_t *ids; /* n * LD_GS_RPC_ID_LEN bytes */
  size_t n_ids, cap_ids;
} ld_gs_out_t;

void ld_gs_out_init(ld_gs_out_t *o);
void ld_gs_out_clear(ld_gs_out_t *o);
/* Drops everything queued but keeps the memory. */
void ld_gs_out_reset(ld_gs_out_t *o);
static inline bool ld_gs_out_empty(const ld_gs_out_t *o) {
  return o->n_items == 0;
}

/* Queue entries. Each returns 0 or LD_ERR_NOMEM (nothing queued). `ids` holds n consecutive
 * 32-byte IDs. */
int ld_gs_out_sub(ld_gs_out_t *o, const char *topic, bool subscribe);
int ld_gs_out_msg(ld_gs_out_t *o, const char *topic, const uint8_t *data, size_t len);
int ld_gs_out_ihave(ld_gs_out_t *o, const char *topic, const uint8_t *ids, size_t n);
int ld_gs_out_iwant(ld_gs_out_t *o, const uint8_t *ids, size_t n);
int ld_gs_out_graft(ld_gs_out_t *o, const char *topic);
/* with_backoff false: the PRUNE has no backoff field (gossipsub v1.0 peers). */
int ld_gs_out_prune(ld_gs_out_t *o, const char *topic, bool with_backoff, uint64_t backoff_s);
int ld_gs_out_idontwant(ld_gs_out_t *o, const uint8_t *ids, size_t n);

/* Called once per packed RPC; `rpc` is valid only during the call. */
typedef void (*ld_gs_out_emit_fn)(void *ctx, const uint8_t *rpc, size_t len);

/* Packs everything queued into as few RPCs as fit, each at most `max` bytes, in queue order
 * (within an RPC protobuf field order applies: subscriptions, messages, control). ID lists are
 * split across RPCs when needed; all IWANT ids of one RPC share one ControlIWant entry, and
 * likewise IDONTWANT. An entry that cannot fit even alone (a message too large) is dropped and
 * counted in *dropped (may be NULL). `scratch` must hold `max` bytes. Empties the outbox. Returns
 * the number of RPCs emitted or LD_ERR_NOMEM (the outbox is emptied anyway). */
int ld_gs_out_flush(ld_gs_out_t *o, uint8_t *scratch, size_t max, ld_gs_out_emit_fn emit, void *ctx,
                    size_t *dropped);

#endif
