/* The Network Reliability Service's store-sync backend: message bodies come from the
 * recent-message cache instead of an archive, a transferred message that passed the checks is
 * kept and delivered instead of stored, and the fill finds nothing (the sets start empty). Every
 * answer comes on a later loop turn, as the backend contract asks. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "waku/nrs/nrs_internal.h"

typedef enum job_kind { JOB_QUERY, JOB_INSERT, JOB_LIST } job_kind_t;

struct nrs_job {
  nrs_job_t *next;
  job_kind_t kind;
  void *user_data;
  ld_archive_query_fn query_done;
  ld_archive_done_fn insert_done;
  ld_archive_list_fn list_done;
  uint8_t (*hashes)[LD_WAKU_HASH_LEN]; /* query */
  size_t n_hashes;
  char *pubsub_topic; /* insert */
  ld_waku_message_t msg;
  uint8_t hash[LD_WAKU_HASH_LEN];
};

static void job_free(nrs_job_t *j) {
  free(j->hashes);
  free(j->pubsub_topic);
  ld_waku_message_clear(&j->msg);
  free(j);
}

static void answer_query(ld_nrs_t *n, nrs_job_t *j, int err) {
  ld_archive_row_t *rows = err == 0 ? calloc(j->n_hashes + 1, sizeof *rows) : NULL;
  if (err == 0 && rows == NULL)
    err = LD_ERR_NOMEM;
  if (err != 0) {
    j->query_done(err, ld_strerror(err), NULL, j->user_data);
    return;
  }
  size_t k = 0;
  for (size_t i = 0; i < j->n_hashes; i++) {
    const char *topic;
    const ld_waku_message_t *msg;
    if (!ld_nrs_cache_get(n->cache, j->hashes[i], &topic, &msg))
      continue;
    memcpy(rows[k].hash, j->hashes[i], LD_WAKU_HASH_LEN);
    rows[k].pubsub_topic = topic;
    rows[k].msg = *msg;
    rows[k].msg.storage = NULL; /* a borrowed view */
    k++;
  }
  n->stats.items_pushed += k;
  ld_archive_result_t res = {rows, k, false, {0}};
  j->query_done(0, NULL, &res, j->user_data);
  free(rows);
}

static void answer_insert(ld_nrs_t *n, nrs_job_t *j, int err) {
  if (err == 0) {
    int rc = ld_nrs_cache_put(n->cache, j->pubsub_topic, &j->msg, j->hash);
    if (rc != 0 && rc != LD_ERR_EXISTS)
      LD_DEBUG(LOG_TOPIC, "a transferred message was not cached: %s", ld_errname(rc));
    n->stats.items_pulled++;
    n->cfg.deliver(n->cfg.deliver_user, j->pubsub_topic, &j->msg, j->hash);
  }
  j->insert_done(err, j->user_data);
}

static void run(ld_nrs_t *n, nrs_job_t *j, int err) {
  switch (j->kind) {
  case JOB_QUERY:
    answer_query(n, j, err);
    break;
  case JOB_INSERT:
    answer_insert(n, j, err);
    break;
  case JOB_LIST:
    j->list_done(err, err != 0 ? ld_strerror(err) : NULL, NULL, 0, false, j->user_data);
    break;
  }
}

static void run_all(ld_nrs_t *n, int err) {
  while (n->jobs != NULL) {
    nrs_job_t *j = n->jobs;
    n->jobs = j->next;
    if (n->jobs == NULL)
      n->jobs_tail = NULL;
    run(n, j, err);
    job_free(j);
  }
}

static void on_jobs(uv_timer_t *t) {
  run_all(t->data, 0);
}

static int enqueue(ld_nrs_t *n, nrs_job_t *j) {
  if (n->jobs_timer == NULL) {
    job_free(j);
    return LD_ERR_CLOSED;
  }
  if (n->jobs_tail != NULL)
    n->jobs_tail->next = j;
  else
    n->jobs = j;
  n->jobs_tail = j;
  if (!uv_is_active((uv_handle_t *)n->jobs_timer))
    uv_timer_start(n->jobs_timer, on_jobs, 0, 0);
  return 0;
}

static int backend_query(void *ctx, const ld_archive_query_t *q, ld_archive_query_fn done,
                         void *user_data) {
  nrs_job_t *j = calloc(1, sizeof *j);
  if (j == NULL)
    return LD_ERR_NOMEM;
  ld_waku_message_init(&j->msg);
  j->kind = JOB_QUERY;
  j->query_done = done;
  j->user_data = user_data;
  if (q->n_hashes > 0) {
    j->hashes = malloc(q->n_hashes * LD_WAKU_HASH_LEN);
    if (j->hashes == NULL) {
      job_free(j);
      return LD_ERR_NOMEM;
    }
    memcpy(j->hashes, q->hashes, q->n_hashes * LD_WAKU_HASH_LEN);
    j->n_hashes = q->n_hashes;
  }
  return enqueue(ctx, j);
}

static int backend_insert(void *ctx, const char *pubsub_topic, const ld_waku_message_t *msg,
                          const uint8_t hash[LD_WAKU_HASH_LEN], ld_archive_done_fn done,
                          void *user_data) {
  nrs_job_t *j = calloc(1, sizeof *j);
  if (j == NULL)
    return LD_ERR_NOMEM;
  ld_waku_message_init(&j->msg);
  j->kind = JOB_INSERT;
  j->insert_done = done;
  j->user_data = user_data;
  memcpy(j->hash, hash, LD_WAKU_HASH_LEN);
  j->pubsub_topic = strdup(pubsub_topic);
  if (j->pubsub_topic == NULL || ld_waku_message_copy(&j->msg, msg) != 0) {
    job_free(j);
    return LD_ERR_NOMEM;
  }
  return enqueue(ctx, j);
}

static int backend_list(void *ctx, const ld_archive_listing_t *l, ld_archive_list_fn done,
                        void *user_data) {
  (void)l;
  nrs_job_t *j = calloc(1, sizeof *j);
  if (j == NULL)
    return LD_ERR_NOMEM;
  ld_waku_message_init(&j->msg);
  j->kind = JOB_LIST;
  j->list_done = done;
  j->user_data = user_data;
  return enqueue(ctx, j);
}

const ld_store_sync_backend_t ld_nrs__backend_template = {backend_query, backend_insert,
                                                          backend_list, NULL};

int ld_nrs__jobs_init(ld_nrs_t *n) {
  n->jobs_timer = calloc(1, sizeof *n->jobs_timer);
  if (n->jobs_timer == NULL)
    return LD_ERR_NOMEM;
  uv_timer_init(ld_switch_loop(n->sw), n->jobs_timer);
  n->jobs_timer->data = n;
  return 0;
}

static void on_closed(uv_handle_t *h) {
  free(h);
}

void ld_nrs__jobs_close(ld_nrs_t *n) {
  run_all(n, LD_ERR_CLOSED);
  if (n->jobs_timer != NULL) {
    uv_close((uv_handle_t *)n->jobs_timer, on_closed);
    n->jobs_timer = NULL;
  }
}
