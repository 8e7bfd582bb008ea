/* The Network Reliability Service's families (see nrs_metrics.h). */
#include "metrics/nrs_metrics.h"

#include <stddef.h>

static ld_nrs_stats_t stats_of(void *ud) {
  ld_nrs_stats_t st;
  ld_nrs_get_stats(ud, &st);
  return st;
}

static void c_mode(ld_metrics_emitter_t *e, void *ud) {
  ld_metrics_emit(e, (const char *const[]){ud}, 1);
}

static void c_reconciliations(ld_metrics_emitter_t *e, void *ud) {
  ld_nrs_stats_t st = stats_of(ud);
  ld_metrics_emit(e, (const char *const[]){"started"}, (double)st.reconciliations);
  ld_metrics_emit(e, (const char *const[]){"complete"}, (double)st.reconciliations_ok);
}

static void c_bytes(ld_metrics_emitter_t *e, void *ud) {
  ld_nrs_stats_t st = stats_of(ud);
  ld_metrics_emit(e, (const char *const[]){"reconciliation", "receive"}, (double)st.recon_bytes_in);
  ld_metrics_emit(e, (const char *const[]){"reconciliation", "sent"}, (double)st.recon_bytes_out);
  ld_metrics_emit(e, (const char *const[]){"transfer", "receive"}, (double)st.transfer_bytes_in);
  ld_metrics_emit(e, (const char *const[]){"transfer", "sent"}, (double)st.transfer_bytes_out);
}

#define SCALAR(fn, field)                                                                          \
  static void fn(ld_metrics_emitter_t *e, void *ud) {                                              \
    ld_metrics_emit(e, NULL, (double)stats_of(ud).field);                                          \
  }
SCALAR(c_pulled, items_pulled)
SCALAR(c_pushed, items_pushed)
SCALAR(c_confirmations, confirmations)
SCALAR(c_rounds, rounds)
SCALAR(c_awaiting, unconfirmed)
SCALAR(c_items, items)
SCALAR(c_cached, cached)
SCALAR(c_rejected, rejected)
SCALAR(c_banned, peers_banned)

typedef struct family {
  const char *name;
  ld_metric_type_t type;
  const char *help;
  const char *const *labels;
  size_t n_labels;
  ld_metrics_collect_fn fn;
} family_t;

static const char *const k_result[] = {"result"};
static const char *const k_bytes[] = {"protocol", "direction"};

static const family_t k_families[] = {
    {"waku_nrs_reconciliations", LD_METRIC_COUNTER,
     "reconciliation sessions initiated by the Network Reliability Service", k_result, 1,
     c_reconciliations},
    {"waku_nrs_items_pulled", LD_METRIC_COUNTER, "messages received by transfer and delivered",
     NULL, 0, c_pulled},
    {"waku_nrs_items_pushed", LD_METRIC_COUNTER, "messages pushed to peers by transfer", NULL, 0,
     c_pushed},
    {"waku_nrs_confirmations", LD_METRIC_COUNTER, "own sends confirmed by peer presence", NULL, 0,
     c_confirmations},
    {"waku_nrs_rounds", LD_METRIC_COUNTER, "rounds of reconciliation sessions", NULL, 0, c_rounds},
    {"waku_nrs_awaiting_confirmation", LD_METRIC_GAUGE, "own sends not yet confirmed", NULL, 0,
     c_awaiting},
    {"waku_nrs_items", LD_METRIC_GAUGE, "items in the rolling reconciliation sets", NULL, 0,
     c_items},
    {"waku_nrs_cached_messages", LD_METRIC_GAUGE, "message bodies in the recent-message cache",
     NULL, 0, c_cached},
    {"waku_nrs_bytes", LD_METRIC_COUNTER, "reconciliation and transfer frame bytes", k_bytes, 2,
     c_bytes},
    {"waku_nrs_rejected_messages", LD_METRIC_COUNTER,
     "transferred messages refused (duplicates excluded)", NULL, 0, c_rejected},
    {"waku_nrs_peers_banned", LD_METRIC_COUNTER, "peers cut off for an invalid transfer", NULL, 0,
     c_banned},
};

int ld_nrs_metrics_register(ld_metrics_t *reg, const char *mode, ld_nrs_t *nrs) {
  static const char *const mode_label[] = {"mode"};
  int rc = ld_metrics_add_collector(reg, "waku_reliability_mode", LD_METRIC_GAUGE,
                                    "the Messaging API's reliability mode", mode_label, 1, c_mode,
                                    (void *)mode);
  for (size_t i = 0; rc == 0 && nrs != NULL && i < sizeof k_families / sizeof k_families[0]; i++) {
    const family_t *f = &k_families[i];
    rc = ld_metrics_add_collector(reg, f->name, f->type, f->help, f->labels, f->n_labels, f->fn,
                                  nrs);
  }
  return rc;
}
