/* The messages a node's relay delivered, as the integration tests collect them: subscribed to a
 * node's LD_EVENT_MESSAGE (nh_start_subscribed(..., LD_EVENT_MESSAGE, got_on_message, &got)), it
 * keeps the first GOT_MAX messages from peers (the node's own are skipped): payload text (cut to
 * 31 bytes), proof length, timestamp and hash. */
#ifndef LD_TESTS_MESSAGE_COLLECTOR_H
#define LD_TESTS_MESSAGE_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/core/message.h"

#define GOT_MAX 32

typedef struct got {
  char payloads[GOT_MAX][32];
  size_t proof_len[GOT_MAX];
  int64_t timestamp[GOT_MAX];
  uint8_t hash[GOT_MAX][LD_WAKU_HASH_LEN];
  size_t n;
} got_t;

/* The broker listener (ud: the got_t). */
void got_on_message(int kind, const void *payload, void *ud);

/* The index of the first message with payload `text`, or -1. */
int got_find(const got_t *g, const char *text);

/* Whether a message with payload `text` was collected. */
bool got_payload(const got_t *g, const char *text);

#endif
