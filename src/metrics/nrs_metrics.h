/* The Network Reliability Service's figures on /metrics (waku/nrs/nrs.h), read at scrape time:
 *   waku_reliability_mode{mode}             gauge 1 for the node's mode ("store" or "p2p")
 *   waku_nrs_reconciliations_total{result}  counter: sessions we initiated ("started"), and of
 *                                           them those that ended complete ("complete")
 *   waku_nrs_items_pulled_total             counter: messages received by transfer and delivered
 *   waku_nrs_items_pushed_total             counter: messages pushed to peers by transfer
 *   waku_nrs_confirmations_total            counter: own sends confirmed by peer presence
 *   waku_nrs_rounds_total                   counter: rounds of sessions
 *   waku_nrs_awaiting_confirmation          gauge: own sends tracked and not yet confirmed
 *   waku_nrs_items                          gauge: items in the rolling sets
 *   waku_nrs_cached_messages                gauge: message bodies in the recent-message cache
 *   waku_nrs_bytes_total{protocol,direction} counter: reconciliation and transfer frame bodies
 *   waku_nrs_rejected_messages_total        counter: transferred messages refused (duplicates
 *                                           excluded)
 *   waku_nrs_peers_banned_total             counter: peers cut off for an invalid transfer
 * (counters registered without the _total the exposition appends). The NRS families only when `nrs`
 * is not NULL. The registry's thread. */
#ifndef LD_METRICS_NRS_METRICS_H
#define LD_METRICS_NRS_METRICS_H

#include "metrics/metrics.h"
#include "waku/nrs/nrs.h"

/* Registers the families above. `mode` is a static string; `nrs` (may be NULL) must outlive the
 * registry's scrapes. LD_ERR_EXISTS, LD_ERR_NOMEM. */
int ld_nrs_metrics_register(ld_metrics_t *reg, const char *mode, ld_nrs_t *nrs);

#endif
