#include "message_collector.h"

#include <string.h>

#include "node/fanout.h"

void got_on_message(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_fanout_message_t *m = payload;
  got_t *g = ud;
  if (m->own || g->n >= GOT_MAX)
    return;
  size_t n = m->msg->payload_len < 31 ? m->msg->payload_len : 31;
  memcpy(g->payloads[g->n], m->msg->payload, n);
  g->payloads[g->n][n] = '\0';
  g->proof_len[g->n] = m->msg->proof_len;
  g->timestamp[g->n] = m->msg->timestamp;
  memcpy(g->hash[g->n], m->hash, LD_WAKU_HASH_LEN);
  g->n++;
}

int got_find(const got_t *g, const char *text) {
  for (size_t i = 0; i < g->n; i++)
    if (strcmp(g->payloads[i], text) == 0)
      return (int)i;
  return -1;
}

bool got_payload(const got_t *g, const char *text) {
  return got_find(g, text) >= 0;
}
