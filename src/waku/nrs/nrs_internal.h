/* Internals shared by nrs.c (rounds, sets, confirmation) and nrs_backend.c (the store-sync
 * backend over the recent-message cache). Loop thread only. */
#ifndef LD_WAKU_NRS_NRS_INTERNAL_H
#define LD_WAKU_NRS_NRS_INTERNAL_H

#include <uv.h>

#include "waku/nrs/cache.h"
#include "waku/nrs/nrs.h"
#include "waku/nrs/presence.h"

#define LOG_TOPIC "nrs"

typedef struct nrs_job nrs_job_t;

struct ld_nrs {
  ld_switch_t *sw;
  ld_peerstore_t *ps;
  ld_nrs_config_t cfg;
  ld_store_sync_t *sync;
  ld_nrs_cache_t *cache;
  ld_nrs_presence_t *presence;
  uv_timer_t *tick; /* rounds and prune */
  uv_timer_t *jobs_timer;
  nrs_job_t *jobs, *jobs_tail; /* backend answers due on the next loop turn */
  uint64_t next_round_ms, next_prune_ms, kick_at_ms, last_track_ms;
  ld_nrs_eligible_fn eligible;
  void *eligible_user;
  ld_nrs_confirmed_fn on_confirmed;
  void *confirmed_user;
  bool stopped;
  ld_nrs_stats_t stats;
};

uint64_t ld_nrs__now_ms(void);
int64_t ld_nrs__now_ns(const ld_nrs_t *n);

/* ---- nrs_backend.c ----------------------------------------------------------------------------
 */

/* The store-sync backend over the cache; ctx is the ld_nrs_t. */
extern const ld_store_sync_backend_t ld_nrs__backend_template;
int ld_nrs__jobs_init(ld_nrs_t *n);
/* Answers every queued request with LD_ERR_CLOSED (their callbacks free store-sync's state) and
 * closes the jobs timer. */
void ld_nrs__jobs_close(ld_nrs_t *n);

#endif
