/* RLN-relay's message validator (nwaku's order). */
#include "waku/rln/validator.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/hashmap.h"

/* The log covers at most 2 * gap - 1 epochs around now; gap <= 20 (1-second epochs). */
#define LOG_MAX_EPOCHS (2 * LD_RLN_MAX_CLOCK_GAP_SEC)

typedef struct log_epoch {
  uint64_t epoch;
  ld_hashmap_t *nullifiers; /* 32-byte nullifier -> NULL */
} log_epoch_t;

struct ld_rln_validator {
  const ld_rln_verifier_t *verifier;
  uint64_t epoch_sec, gap;
  ld_fr_t roots[LD_RLN_ROOT_WINDOW];
  size_t n_roots, next_root;
  log_epoch_t log[LOG_MAX_EPOCHS];
  size_t n_log;
  ld_rln_validator_stats_t stats;
};

static const char *const k_reasons[LD_RLN_REASON_COUNT] = {
    "ok",
    "undecodable",
    "invalid_timestamp",
    "timestamp_mismatch",
    "invalid_root",
    "invalid_proof",
    "spam",
};

const char *ld_rln_reason_name(ld_rln_reason_t r) {
  return (unsigned)r < LD_RLN_REASON_COUNT ? k_reasons[r] : "unknown";
}

int ld_rln_validator_new(ld_rln_validator_t **out, const ld_rln_verifier_t *verifier,
                         uint64_t epoch_sec) {
  *out = NULL;
  if (verifier == NULL || epoch_sec == 0) {
    return LD_ERR_INVALID_ARG;
  }
  ld_rln_validator_t *v = calloc(1, sizeof *v);
  if (v == NULL) {
    return LD_ERR_NOMEM;
  }
  v->verifier = verifier;
  v->epoch_sec = epoch_sec;
  v->gap = LD_RLN_MAX_CLOCK_GAP_SEC / epoch_sec;
  if (v->gap < 1) {
    v->gap = 1;
  }
  *out = v;
  return 0;
}

void ld_rln_validator_free(ld_rln_validator_t *v) {
  if (v == NULL) {
    return;
  }
  for (size_t i = 0; i < v->n_log; i++) {
    ld_hashmap_free(v->log[i].nullifiers, NULL);
  }
  free(v);
}

uint64_t ld_rln_validator_epoch_sec(const ld_rln_validator_t *v) {
  return v->epoch_sec;
}

void ld_rln_validator_add_root(ld_rln_validator_t *v, const ld_fr_t *root) {
  if (v->n_roots > 0) {
    size_t newest = (v->next_root + LD_RLN_ROOT_WINDOW - 1) % LD_RLN_ROOT_WINDOW;
    if (ld_fr_equal(&v->roots[newest], root)) {
      return;
    }
  }
  v->roots[v->next_root] = *root;
  v->next_root = (v->next_root + 1) % LD_RLN_ROOT_WINDOW;
  if (v->n_roots < LD_RLN_ROOT_WINDOW) {
    v->n_roots++;
  }
}

bool ld_rln_validator_root_ok(const ld_rln_validator_t *v, const uint8_t root[32]) {
  ld_fr_t r;
  if (ld_fr_from_bytes(&r, root) != 0) {
    return false;
  }
  for (size_t i = 0; i < v->n_roots; i++) {
    if (ld_fr_equal(&v->roots[i], &r)) {
      return true;
    }
  }
  return false;
}

/* clearNullifierLog: drops every epoch e with e >= current + gap or e <= current - gap. */
static void prune_log(ld_rln_validator_t *v, uint64_t current) {
  size_t kept = 0;
  for (size_t i = 0; i < v->n_log; i++) {
    uint64_t e = v->log[i].epoch;
    bool far = e >= current + v->gap || (current >= v->gap && e <= current - v->gap);
    if (far) {
      ld_hashmap_free(v->log[i].nullifiers, NULL);
    } else {
      v->log[kept++] = v->log[i];
    }
  }
  v->n_log = kept;
}

static log_epoch_t *log_find(ld_rln_validator_t *v, uint64_t epoch) {
  for (size_t i = 0; i < v->n_log; i++) {
    if (v->log[i].epoch == epoch) {
      return &v->log[i];
    }
  }
  return NULL;
}

static uint64_t epoch_value(const uint8_t e[32]) {
  uint64_t x = 0;
  for (int i = 7; i >= 0; i--) {
    x = (x << 8) | e[i];
  }
  return x;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Step 5 up to the zk verification: the values decode canonically, x is the signal's hash; the
 * external nullifier from the epoch and the identifier. */
static bool values_of(const ld_rln_rate_limit_proof_t *p, const ld_waku_message_t *msg,
                      ld_rln_proof_values_t *values) {
  if (ld_fr_from_bytes(&values->root, p->merkle_root) != 0 ||
      ld_fr_from_bytes(&values->x, p->share_x) != 0 ||
      ld_fr_from_bytes(&values->y, p->share_y) != 0 ||
      ld_fr_from_bytes(&values->nullifier, p->nullifier) != 0) {
    return false;
  }
  size_t n = ld_rln_message_signal(NULL, NULL, msg->payload_len, NULL, msg->content_topic_len,
                                   msg->timestamp);
  uint8_t *signal = malloc(n);
  if (signal == NULL) {
    return false;
  }
  ld_rln_message_signal(signal, msg->payload, msg->payload_len, msg->content_topic,
                        msg->content_topic_len, msg->timestamp);
  ld_fr_t x;
  ld_rln_hash_to_field(&x, signal, n);
  free(signal);
  if (!ld_fr_equal(&x, &values->x)) {
    return false;
  }
  ld_rln_external_nullifier_nwaku(&values->external_nullifier, p->epoch, p->rln_identifier);
  return true;
}

static ld_rln_verdict_t finish(ld_rln_validator_t *v, ld_rln_reason_t r, ld_rln_reason_t *out) {
  v->stats.by_reason[r]++;
  if (out != NULL) {
    *out = r;
  }
  if (r == LD_RLN_OK) {
    v->stats.valid++;
    return LD_RLN_VALID;
  }
  if (r == LD_RLN_DUPLICATE) {
    v->stats.spam++;
    return LD_RLN_SPAM;
  }
  return LD_RLN_INVALID;
}

/* Steps 3 and 4, and step 5 up to the zk verification, on a decoded proof: LD_RLN_OK with *out
 * ready for the verification, or why not. */
static ld_rln_reason_t check_decoded(ld_rln_validator_t *v, const ld_rln_rate_limit_proof_t *p,
                                     const ld_waku_message_t *msg, ld_rln_pending_proof_t *out) {
  uint8_t epoch[32];
  ld_rln_epoch_bytes(epoch, ld_rln_epoch_of(msg->timestamp, v->epoch_sec));
  if (memcmp(epoch, p->epoch, 32) != 0) {
    return LD_RLN_TIMESTAMP_MISMATCH;
  }
  if (!ld_rln_validator_root_ok(v, p->merkle_root)) {
    return LD_RLN_INVALID_ROOT;
  }
  if (!values_of(p, msg, &out->values)) {
    return LD_RLN_INVALID_PROOF;
  }
  memcpy(out->proof, p->proof, sizeof out->proof);
  memcpy(out->epoch, p->epoch, sizeof out->epoch);
  memcpy(out->nullifier, p->nullifier, sizeof out->nullifier);
  return LD_RLN_OK;
}

static bool clock_gap_ok(int64_t now_ns, int64_t ts_ns) {
  /* nwaku: uint64(abs(now - ts)) in float seconds, truncated */
  double diff = ((double)now_ns - (double)ts_ns) / 1e9;
  if (diff < 0) {
    diff = -diff;
  }
  return (uint64_t)diff <= LD_RLN_MAX_CLOCK_GAP_SEC;
}

/* Steps 6 and 7. */
static ld_rln_reason_t log_nullifier(ld_rln_validator_t *v, const ld_rln_pending_proof_t *p) {
  uint64_t epoch = epoch_value(p->epoch);
  log_epoch_t *e = log_find(v, epoch);
  if (e != NULL && ld_hashmap_contains(e->nullifiers, p->nullifier, 32)) {
    return LD_RLN_DUPLICATE;
  }
  if (e == NULL && v->n_log < LOG_MAX_EPOCHS) {
    ld_hashmap_t *m = ld_hashmap_new(64);
    if (m != NULL) {
      v->log[v->n_log] = (log_epoch_t){epoch, m};
      e = &v->log[v->n_log++];
    }
  }
  if (e != NULL) {
    ld_hashmap_put(e->nullifiers, p->nullifier, 32, NULL, NULL);
  }
  return LD_RLN_OK;
}

ld_rln_reason_t ld_rln_validator_begin(ld_rln_validator_t *v, const ld_waku_message_t *msg,
                                       int64_t now_ns, ld_rln_pending_proof_t *out) {
  prune_log(v, ld_rln_epoch_of(now_ns, v->epoch_sec));
  ld_rln_rate_limit_proof_t p;
  ld_rln_reason_t r;
  if (ld_rln_rate_limit_proof_decode(&p, msg->proof, msg->proof_len) != 0) {
    r = LD_RLN_UNDECODABLE;
  } else {
    v->stats.messages++;
    r = clock_gap_ok(now_ns, msg->timestamp) ? check_decoded(v, &p, msg, out)
                                             : LD_RLN_INVALID_TIMESTAMP;
  }
  if (r != LD_RLN_OK) {
    finish(v, r, NULL);
  }
  return r;
}

ld_rln_verdict_t ld_rln_validator_end(ld_rln_validator_t *v, const ld_rln_pending_proof_t *p,
                                      int zk_result, double verify_seconds, int64_t now_ns,
                                      ld_rln_reason_t *reason) {
  v->stats.verifications++;
  v->stats.last_verify_seconds = verify_seconds;
  v->stats.verify_seconds_sum += verify_seconds;
  if (zk_result != 0) {
    return finish(v, LD_RLN_INVALID_PROOF, reason);
  }
  prune_log(v, ld_rln_epoch_of(now_ns, v->epoch_sec));
  return finish(v, log_nullifier(v, p), reason);
}

void ld_rln_validator_note_batch(ld_rln_validator_t *v, size_t count) {
  v->stats.batches++;
  v->stats.batched += count;
  if (count > v->stats.largest_batch) {
    v->stats.largest_batch = count;
  }
}

const ld_rln_verifier_t *ld_rln_validator_verifier(const ld_rln_validator_t *v) {
  return v->verifier;
}

/* The zk verification of a begun message, timed. */
static int verify_pending(const ld_rln_validator_t *v, const ld_rln_pending_proof_t *p,
                          double *seconds) {
  double t = now_seconds();
  int rc = ld_rln_verify(v->verifier, p->proof, &p->values);
  *seconds = now_seconds() - t;
  return rc;
}

ld_rln_verdict_t ld_rln_validator_check(ld_rln_validator_t *v, const ld_waku_message_t *msg,
                                        int64_t now_ns, ld_rln_reason_t *reason) {
  ld_rln_pending_proof_t p;
  ld_rln_reason_t r = ld_rln_validator_begin(v, msg, now_ns, &p);
  if (r != LD_RLN_OK) {
    if (reason != NULL) {
      *reason = r;
    }
    return r == LD_RLN_DUPLICATE ? LD_RLN_SPAM : LD_RLN_INVALID;
  }
  double seconds;
  int rc = verify_pending(v, &p, &seconds);
  return ld_rln_validator_end(v, &p, rc, seconds, now_ns, reason);
}

ld_rln_verdict_t ld_rln_validator_check_proof(ld_rln_validator_t *v, const ld_waku_message_t *msg,
                                              ld_rln_reason_t *reason) {
  ld_rln_rate_limit_proof_t p;
  if (ld_rln_rate_limit_proof_decode(&p, msg->proof, msg->proof_len) != 0) {
    return finish(v, LD_RLN_UNDECODABLE, reason);
  }
  ld_rln_pending_proof_t pending;
  ld_rln_reason_t r = check_decoded(v, &p, msg, &pending);
  if (r != LD_RLN_OK) {
    return finish(v, r, reason);
  }
  double seconds;
  int rc = verify_pending(v, &pending, &seconds);
  v->stats.verifications++;
  v->stats.last_verify_seconds = seconds;
  v->stats.verify_seconds_sum += seconds;
  return finish(v, rc == 0 ? LD_RLN_OK : LD_RLN_INVALID_PROOF, reason);
}

size_t ld_rln_validator_log_size(const ld_rln_validator_t *v, size_t *epochs) {
  size_t n = 0;
  for (size_t i = 0; i < v->n_log; i++) {
    n += ld_hashmap_size(v->log[i].nullifiers);
  }
  if (epochs != NULL) {
    *epochs = v->n_log;
  }
  return n;
}

const ld_rln_validator_stats_t *ld_rln_validator_stats(const ld_rln_validator_t *v) {
  return &v->stats;
}

ld_gs_verdict_t ld_rln_gossipsub_verdict(ld_rln_verdict_t v) {
  return v == LD_RLN_VALID ? LD_GS_ACCEPT : LD_GS_REJECT;
}
