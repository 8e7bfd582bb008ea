/* SDS-R: the timing of repair requests and answers, the response group, and the incoming repair
 * request buffer (answers scheduled at T_resp). */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "channels/sds_internal.h"
#include "crypto/crypto.h"

/* H(a ‖ b): the first 8 bytes of SHA-256, big-endian (js-waku's hashToInteger). */
uint64_t sds_repair_hash(const void *a, size_t alen, const void *b, size_t blen) {
  uint8_t d[LD_SHA256_LEN];
  ld_sha256_2(a, alen, b, blen, d);
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v = (v << 8) | d[i];
  return v;
}

uint64_t sds_repair_t_req(const ld_sds_t *s, const char *id, size_t id_len) {
  uint64_t range = s->cfg.repair_t_max_ms - s->cfg.repair_t_min_ms;
  uint64_t h = sds_repair_hash(s->self, s->self_len, id, id_len);
  return s->now + h % range + s->cfg.repair_t_min_ms;
}

/* (distance · H(id)) mod T_max, exact: both factors are reduced first (T_max < 2^32, so the
 * product of the residues fits in 64 bits). */
uint64_t sds_repair_t_resp(const ld_sds_t *s, const char *sender, size_t sender_len, const char *id,
                           size_t id_len) {
  uint64_t t_max = s->cfg.repair_t_max_ms;
  uint64_t distance = s->self_hash ^ sds_repair_hash(sender, sender_len, NULL, 0);
  uint64_t h = sds_repair_hash(id, id_len, NULL, 0);
  return s->now + ((distance % t_max) * (h % t_max)) % t_max;
}

bool sds_repair_in_group(const ld_sds_t *s, const char *sender, size_t sender_len, const char *id,
                         size_t id_len) {
  uint64_t g = s->cfg.repair_response_groups;
  if (g <= 1)
    return true;
  return sds_repair_hash(s->self, s->self_len, id, id_len) % g ==
         sds_repair_hash(sender, sender_len, id, id_len) % g;
}

/* ---- the answers ---------------------------------------------------------------------------- */

static void response_free(ld_sds_t *s, response_t *r) {
  sds_disarm(s, &r->timer);
  ld_hashmap_remove(s->responses, r->id, r->id_len);
  free(r->id);
  free(r);
}

void sds_responses_free_all(ld_sds_t *s) {
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(s->responses, &it, NULL, NULL, &v))
    response_free(s, v);
}

void sds_repair_forget(ld_sds_t *s, const char *id, size_t id_len) {
  response_t *r = ld_hashmap_get(s->responses, id, id_len);
  if (r != NULL)
    response_free(s, r);
}

static int schedule_answer(ld_sds_t *s, const ld_sds_history_entry_t *req) {
  if (ld_hashmap_size(s->responses) >= s->cfg.max_repair_responses) {
    s->stats.repairs_untracked++;
    return 0;
  }
  response_t *r = calloc(1, sizeof *r);
  if (r == NULL || (r->id = sds_strndup(req->message_id, req->message_id_len)) == NULL) {
    free(r);
    return LD_ERR_NOMEM;
  }
  r->id_len = req->message_id_len;
  r->timer.kind = TK_RESPONSE;
  uint64_t at = sds_repair_t_resp(s, req->sender_id, req->sender_id_len, r->id, r->id_len);
  if (ld_hashmap_put(s->responses, r->id, r->id_len, r, NULL) != 0 ||
      sds_arm(s, &r->timer, at) != 0) {
    response_free(s, r);
    return LD_ERR_NOMEM;
  }
  return 0;
}

/* For each request: ours for the same message waits (someone asked already); when we hold the
 * message and are in its response group, an answer is scheduled at T_resp. */
int sds_repair_process_requests(ld_sds_t *s, const ld_sds_message_t *m) {
  for (size_t i = 0; i < m->repair_request_len; i++) {
    const ld_sds_history_entry_t *req = &m->repair_request[i];
    int rc = sds_missing_postpone(s, req->message_id, req->message_id_len);
    if (rc != 0)
      return rc;
    const log_entry_t *e = sds_log_find(&s->log, req->message_id, req->message_id_len);
    if (e == NULL || e->cached == NULL || !req->has_sender_id ||
        ld_hashmap_contains(s->responses, req->message_id, req->message_id_len) ||
        !sds_repair_in_group(s, req->sender_id, req->sender_id_len, req->message_id,
                             req->message_id_len))
      continue;
    if ((rc = schedule_answer(s, req)) != 0)
      return rc;
  }
  return 0;
}

int sds_response_on_timer(ld_sds_t *s, response_t *r) {
  const log_entry_t *e = sds_log_find(&s->log, r->id, r->id_len);
  int rc = 0;
  if (e != NULL && e->cached != NULL) {
    rc = sds_emit_send(s, LD_SDS_SEND_REPAIR, r->id, 0, e->cached, e->cached_len);
    s->stats.repairs_answered++;
  }
  response_free(s, r);
  return rc;
}
