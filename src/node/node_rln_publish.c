/* Publishing with RLN proofs off the loop's thread.
 *
 * A proof takes about a third of a second of CPU: made on the loop, it would stall every
 * connection, timer and REST request of the node for that long. Instead ld_node_rln_publish does
 * on the loop what can fail at once (the nonce manager's claim, relay's outgoing checks with a
 * proof of its final size, the hash), copies the message and queues it. The queue runs one proof
 * at a time on libuv's thread pool (uv_queue_work) with the immutable prover and a copy of our
 * membership; back on the loop the message gets its proof and is published, and the next queued
 * message is proved. So a sender's messages go out in the order they were published, each as
 * soon as its proof is ready.
 *
 * From the node's start (a member node, see below; else from the first publish) the queue also
 * keeps a proving context for our membership (zk/rln_prover.h): made without its tables in a
 * few milliseconds, it proves from then on,
 * reusing the sums over the membership wires (a proof with a new root or path remakes them);
 * its fixed-base tables (some 16 MB, 0.7 s of CPU in a Release build, several seconds under the
 * sanitizers) are built in some 45 slices of about 15 ms, each a thread-pool job started only when
 * no proof is waiting. So the queue never runs more than one job at a time, a proof waits at most
 * one slice, and a node without credentials pays nothing. The context is freed (its secret
 * values wiped) when the node stops.
 *
 * A member node makes the context at start (ld_node_rln_publish_warm, from node_rln.c) and
 * keeps it warm: when the node learns a new root or our Merkle path changes (a member joined the
 * group), a prepare job brings the context's membership sums to our new path
 * (ld_rln_proving_ctx_prepare), so that the next publish does not pay for that (a proof that
 * misses costs up to three times one that hits). Like a slice, the prepare starts only when no
 * proof waits, and takes the membership as it is then (several root changes meanwhile: one
 * prepare); a publish arriving while it runs waits for it. A node without credentials never
 * calls it and pays nothing.
 *
 * A publish's outcome (relay peers, or the error) goes to the caller of ld_node_publish_async
 * once the message is published, or fails. Our message that waited for its proof is stamped again
 * when the proof starts, if its epoch ended or it is older than LD_NODE_RLN_RESTAMP_AFTER_MS:
 * validators refuse a timestamp more than 20 s off, and a message proved in its own epoch counts
 * in the budget of the epoch it goes out in. In its epoch it keeps its message id; in a new one it
 * claims one there (none left: LD_ERR_LIMIT is its outcome). Its hash changes with the timestamp:
 * the outcome carries the final one. A light client's message keeps its sender's timestamp (and
 * hash): a stale one is refused by the lightpush step's validation, never sent. */
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "node/node_internal.h"
#include "node/node_rln_publish.h"

#define TOPIC "rln"

typedef struct ld_node_publish_call prove_job_t;
struct ld_node_publish_call {
  prove_job_t *next;
  struct node_rln_queue *queue;
  uv_work_t work;
  char *pubsub_topic;
  ld_waku_message_t msg; /* owned copy, without a proof */
  ld_node_rln_claim_t claim;
  ld_rln_proving_ctx_t *ctx;     /* the queue's context to prove through, or NULL */
  uint64_t ctx_hits, ctx_misses; /* the context's counts after the proof */
  uint8_t proof[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  size_t proof_len;
  int rc;       /* of the proof */
  bool restamp; /* our message: stamped again when it is stale as its proof starts */
  /* a light client's message (ld_node_rln_prove_for): handed to `proved` instead of published */
  ld_node_rln_proved_fn proved;
  void *proved_ud;
  /* our own message: its outcome goes to `published` (ld_node_publish_async; NULL: logged) */
  ld_node_published_fn published;
  void *published_ud;
};

typedef struct node_rln_queue {
  ld_node_t *node;
  prove_job_t *head, *tail; /* waiting for the thread pool */
  prove_job_t *running;     /* being proved, or NULL */
  size_t waiting;
  bool stopping; /* the node stops: the running job's end calls ld_node_pending_done */
  bool entering; /* inside ld_node_rln_publish: start_next leaves the new job's stamp alone */
  bool held;     /* ld_node_rln_publish_hold: no proof starts */
  /* the proving context: only the job on the thread pool touches it while one runs */
  const ld_rln_prover_t *prover; /* of the latest claim (NULL: nothing published yet) */
  ld_rln_proving_ctx_t *ctx;
  bool building;     /* a build slice (or the context's making) is on the thread pool */
  bool build_failed; /* out of memory once: no more slices */
  uv_work_t build;
  const ld_rln_prover_t *build_prover; /* the prover the build job makes a context for */
  ld_rln_proving_ctx_t *made;          /* the context the build job made */
  int build_rc;                        /* of the slice: 1 more to do, 0 complete, < 0 error */
  bool warm_wanted; /* our membership changed since the last prepare (ld_node_rln_publish_warm) */
  bool preparing;   /* a prepare job is on the thread pool */
  uv_work_t prepare;
  ld_rln_member_t prepare_member; /* its copy of our membership (wiped once used) */
  int prepare_rc;                 /* of ld_rln_proving_ctx_prepare */
  ld_node_rln_proving_stats_t stats;
} node_rln_queue_t;

/* Points' rows per slice of the context's tables: some 15 ms of CPU in a Release build. */
#define BUILD_SLICE_POINTS 256

/* The length of every encoded RateLimitProof (seven fixed-size fields), for the size check
 * before the proof exists. */
static size_t proof_encoded_len(void) {
  ld_rln_rate_limit_proof_t zero;
  uint8_t buf[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED];
  memset(&zero, 0, sizeof zero);
  return ld_rln_rate_limit_proof_encode(&zero, buf);
}

static void free_job(prove_job_t *job) {
  if (job->proved != NULL) /* dropped before its proof was handed over */
    job->proved(job->proved_ud, LD_ERR_CANCELED, job->pubsub_topic, NULL);
  if (job->published != NULL) /* dropped before it was published */
    job->published(job->published_ud, LD_ERR_CANCELED, job->pubsub_topic, NULL, NULL);
  explicit_bzero(&job->claim.member, sizeof job->claim.member);
  ld_waku_message_clear(&job->msg);
  free(job->pubsub_topic);
  free(job);
}

/* ---- on the thread pool ----------------------------------------------------------------------
 */

static void prove_work(uv_work_t *w) {
  prove_job_t *job = w->data;
  const ld_node_rln_claim_t *c = &job->claim;
  if (job->ctx != NULL) {
    job->rc = ld_rln_attach_proof_ctx(job->ctx, &c->member, &job->msg, c->epoch_sec, c->message_id,
                                      NULL, job->proof, &job->proof_len);
    ld_rln_proving_ctx_stats(job->ctx, NULL, &job->ctx_hits, &job->ctx_misses);
  } else {
    job->rc = ld_rln_attach_proof(c->prover, &c->member, &job->msg, c->epoch_sec, c->message_id,
                                  NULL, job->proof, &job->proof_len);
  }
  explicit_bzero(&job->claim.member, sizeof job->claim.member);
}

static void prepare_work(uv_work_t *w) {
  node_rln_queue_t *q = w->data;
  ld_rln_witness_t wit;
  memset(&wit, 0, sizeof wit);
  wit.identity_secret = q->prepare_member.identity_secret;
  wit.user_message_limit = q->prepare_member.user_message_limit;
  wit.merkle = q->prepare_member.merkle;
  q->prepare_rc = ld_rln_proving_ctx_prepare(q->ctx, &wit);
  explicit_bzero(&wit, sizeof wit);
  explicit_bzero(&q->prepare_member, sizeof q->prepare_member);
}

static void build_work(uv_work_t *w) {
  node_rln_queue_t *q = w->data;
  if (q->ctx == NULL) {
    q->build_rc = ld_rln_proving_ctx_new_deferred(&q->made, q->build_prover);
    if (q->build_rc == 0)
      q->build_rc = 1;
  } else {
    q->build_rc = ld_rln_proving_ctx_build_step(q->ctx, BUILD_SLICE_POINTS);
  }
}

/* ---- on the loop -----------------------------------------------------------------------------
 */

static void prove_done(uv_work_t *w, int status);
static void build_done(uv_work_t *w, int status);
static void prepare_done(uv_work_t *w, int status);

/* A job (a proof, a slice or the context's making, a prepare) is on the thread pool. */
static bool busy(const node_rln_queue_t *q) {
  return q->running != NULL || q->building || q->preparing;
}

/* The context when it was made for `prover`, else NULL (prove without). */
static ld_rln_proving_ctx_t *ctx_for(const node_rln_queue_t *q, const ld_rln_prover_t *prover) {
  return q->ctx != NULL && ld_rln_proving_ctx_prover(q->ctx) == prover ? q->ctx : NULL;
}

static void drop_ctx(node_rln_queue_t *q) {
  ld_rln_proving_ctx_free(q->ctx); /* wipes its secret values */
  q->ctx = NULL;
  q->stats.ctx_complete = false;
}

/* With no proof waiting: the next slice of the context for the latest claim's prover, when it
 * is not complete yet. */
static void start_build(node_rln_queue_t *q) {
  if (q->prover == NULL || q->build_failed)
    return;
  if (q->ctx != NULL && ctx_for(q, q->prover) == NULL)
    drop_ctx(q); /* made for another prover */
  if (q->ctx != NULL && ld_rln_proving_ctx_complete(q->ctx))
    return;
  q->building = true;
  q->build_prover = q->prover; /* the loop may change q->prover while the job runs */
  q->build.data = q;
  int rc = uv_queue_work(q->node->loop, &q->build, build_work, build_done);
  if (rc != 0) {
    LD_ERROR(TOPIC, "RLN proving context not built: %s", uv_strerror(rc));
    q->building = false;
    q->build_failed = true;
  }
}

/* With no proof waiting: a prepare of the context for our membership as it is now, when it
 * changed since the last one and the context exists. false when none was started. */
static bool start_prepare(node_rln_queue_t *q) {
  if (!q->warm_wanted || q->prover == NULL || ctx_for(q, q->prover) == NULL)
    return false; /* not wanted, or the context comes first (start_build makes it) */
  q->warm_wanted = false;
  const ld_rln_prover_t *prover = NULL;
  if (ld_node_rln_membership(q->node, &prover, &q->prepare_member) != 0 || prover != q->prover) {
    explicit_bzero(&q->prepare_member, sizeof q->prepare_member);
    return false; /* no path yet: the node calls ld_node_rln_publish_warm once it has one */
  }
  q->preparing = true;
  q->prepare.data = q;
  int rc = uv_queue_work(q->node->loop, &q->prepare, prepare_work, prepare_done);
  if (rc != 0) {
    LD_ERROR(TOPIC, "RLN proving context not prepared: %s", uv_strerror(rc));
    q->preparing = false;
    explicit_bzero(&q->prepare_member, sizeof q->prepare_member);
    return false;
  }
  return true;
}

static void finish_job(node_rln_queue_t *q, prove_job_t *job);

/* Whether our message `job`, about to be proved at `now_ns`, must be stamped again: its epoch
 * ended, or its timestamp is more than LD_NODE_RLN_RESTAMP_AFTER_MS old. */
static bool stale(const prove_job_t *job, int64_t now_ns) {
  uint64_t epoch_sec = job->claim.epoch_sec;
  return ld_rln_epoch_of(now_ns, epoch_sec) != ld_rln_epoch_of(job->msg.timestamp, epoch_sec) ||
         now_ns - job->msg.timestamp > (int64_t)LD_NODE_RLN_RESTAMP_AFTER_MS * 1000000;
}

/* Stamps our message `job` with the current time when it is stale. In the epoch it was claimed
 * in, it keeps its message id (reserved for it, never proved); in a later epoch it claims one of
 * that epoch (the old id stays unused). 0, or the claim's error (LD_ERR_LIMIT: the current
 * epoch's ids are used up). */
static int restamp_if_stale(node_rln_queue_t *q, prove_job_t *job) {
  int64_t now = (int64_t)ld_wall_ns();
  if (!job->restamp || !stale(job, now))
    return 0;
  int64_t was = job->msg.timestamp;
  uint64_t epoch_sec = job->claim.epoch_sec;
  if (ld_rln_epoch_of(now, epoch_sec) != ld_rln_epoch_of(was, epoch_sec)) {
    ld_node_rln_claim_t claim;
    job->msg.timestamp = now;
    int rc = ld_node_rln_claim(q->node, &job->msg, &claim);
    if (rc == 0 && claim.prover == NULL)
      rc = LD_ERR_STATE;
    if (rc != 0) {
      LD_WARN(TOPIC, "Message on %s not published: no RLN message id for it in the new epoch: %s",
              job->pubsub_topic, ld_strerror(rc));
      job->msg.timestamp = was;
      explicit_bzero(&claim.member, sizeof claim.member);
      return rc;
    }
    explicit_bzero(&job->claim.member, sizeof job->claim.member);
    job->claim = claim;
    explicit_bzero(&claim.member, sizeof claim.member);
    q->prover = job->claim.prover;
  }
  job->msg.timestamp = now;
  LD_DEBUG(TOPIC, "Message on %s stamped again after %lld ms in the queue", job->pubsub_topic,
           (long long)((now - was) / 1000000));
  q->stats.restamped++;
  return 0;
}

static prove_job_t *pop(node_rln_queue_t *q) {
  prove_job_t *job = q->head;
  q->head = job->next;
  if (q->head == NULL)
    q->tail = NULL;
  q->waiting--;
  job->next = NULL;
  return job;
}

/* Proves the next queued message, if the queue is idle; our messages that cannot be stamped
 * again are reported and skipped. Inside ld_node_rln_publish (`q->entering`), the message just
 * queued was stamped and claimed a moment ago: it is not checked, so that no outcome is reported
 * from inside the publish call. */
static void start_next(node_rln_queue_t *q) {
  while (!busy(q) && !q->stopping && !q->held && q->head != NULL) {
    prove_job_t *job = pop(q);
    int rc = q->entering ? 0 : restamp_if_stale(q, job);
    if (rc != 0) {
      job->rc = rc;
      finish_job(q, job);
      continue;
    }
    q->running = job;
    job->ctx = ctx_for(q, job->claim.prover);
    job->work.data = job;
    rc = uv_queue_work(q->node->loop, &job->work, prove_work, prove_done);
    if (rc == 0)
      return;
    /* only for a NULL callback: never, but not silently */
    LD_ERROR(TOPIC, "RLN proof not started: %s", uv_strerror(rc));
    q->running = NULL;
    job->rc = LD_ERR_INTERNAL;
    finish_job(q, job);
  }
  if (!busy(q) && !q->stopping && q->head == NULL && !start_prepare(q))
    start_build(q);
}

/* Our message's outcome to its caller (ld_node_publish_async): the relay peers it went to, or the
 * error; with the message as published and its hash. */
static void report_published(prove_job_t *job, int rc, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  ld_node_published_fn published = job->published;
  job->published = NULL;
  if (published != NULL)
    published(job->published_ud, rc, job->pubsub_topic, rc >= 0 ? &job->msg : NULL,
              rc >= 0 ? hash : NULL);
}

static void publish_proved(node_rln_queue_t *q, prove_job_t *job) {
  if (job->rc != 0) {
    LD_WARN(TOPIC, "RLN proof failed, message not published on %s: %s", job->pubsub_topic,
            ld_strerror(job->rc));
    report_published(job, job->rc, NULL);
    return;
  }
  ld_relay_t *relay = q->node->relay;
  job->msg.proof = job->proof;
  job->msg.proof_len = job->proof_len;
  uint8_t hash[LD_WAKU_HASH_LEN];
  int rc = ld_node_outgoing_error(ld_relay_check_outgoing(relay, job->pubsub_topic, &job->msg));
  if (rc == 0)
    rc = ld_relay_publish(relay, job->pubsub_topic, &job->msg, hash);
  if (rc < 0)
    LD_WARN(TOPIC, "Proved message not published on %s: %s", job->pubsub_topic, ld_strerror(rc));
  else
    q->stats.published++;
  report_published(job, rc, hash);
  job->msg.proof = NULL;
  job->msg.proof_len = 0;
}

/* The job under way at stop ended: the context goes with the queue's last job. */
static void stopped_job_done(node_rln_queue_t *q) {
  drop_ctx(q);
  ld_node_pending_done(q->node);
}

static void build_done(uv_work_t *w, int status) {
  node_rln_queue_t *q = w->data;
  q->building = false;
  if (q->made != NULL) {
    q->ctx = q->made;
    q->made = NULL;
  }
  if (status != 0 || q->build_rc < 0) {
    LD_WARN(TOPIC, "RLN proving context not built, proving without it: %s",
            status != 0 ? uv_strerror(status) : ld_strerror(q->build_rc));
    q->build_failed = true;
  } else {
    q->stats.build_slices++;
    q->stats.ctx_complete = q->build_rc == 0;
  }
  if (q->stopping) {
    stopped_job_done(q);
    return;
  }
  start_next(q);
}

static void prepare_done(uv_work_t *w, int status) {
  node_rln_queue_t *q = w->data;
  q->preparing = false;
  explicit_bzero(&q->prepare_member, sizeof q->prepare_member); /* when it never ran */
  if (q->stopping) {
    stopped_job_done(q);
    return;
  }
  if (status != 0 || q->prepare_rc < 0)
    LD_WARN(TOPIC, "RLN proving context not prepared for our new Merkle path: %s",
            status != 0 ? uv_strerror(status) : ld_strerror(q->prepare_rc));
  else if (q->prepare_rc == 1)
    q->stats.prepares++;
  start_next(q);
}

static void hand_over_proved(prove_job_t *job); /* light clients' messages, below */

static void prove_done(uv_work_t *w, int status) {
  prove_job_t *job = w->data;
  node_rln_queue_t *q = job->queue;
  q->running = NULL;
  if (q->stopping) {
    free_job(job);
    stopped_job_done(q);
    return;
  }
  if (job->ctx == NULL) {
    q->stats.plain++;
  } else if (status == 0) {
    q->stats.ctx_hits = job->ctx_hits;
    q->stats.ctx_misses = job->ctx_misses;
  }
  if (status != 0)
    job->rc = status == UV_ECANCELED ? LD_ERR_CANCELED : LD_ERR_INTERNAL;
  finish_job(q, job);
  start_next(q);
}

/* A job's end on the loop: a light client's message to its caller, ours to relay (or its error
 * reported); then it is freed. */
static void finish_job(node_rln_queue_t *q, prove_job_t *job) {
  if (job->proved != NULL)
    hand_over_proved(job);
  else
    publish_proved(q, job);
  free_job(job);
}

static node_rln_queue_t *queue_of(ld_node_t *node) {
  if (node->rln_queue == NULL) {
    node->rln_queue = calloc(1, sizeof *node->rln_queue);
    if (node->rln_queue != NULL)
      node->rln_queue->node = node;
  }
  return node->rln_queue;
}

/* A job for `msg` (timestamp set, no proof) with its claim; NULL when out of memory. */
static prove_job_t *new_job(node_rln_queue_t *q, const char *pubsub_topic,
                            const ld_waku_message_t *msg, const ld_node_rln_claim_t *claim) {
  prove_job_t *job = calloc(1, sizeof *job);
  if (job == NULL)
    return NULL;
  job->queue = q;
  ld_waku_message_init(&job->msg);
  job->pubsub_topic = strdup(pubsub_topic);
  if (job->pubsub_topic == NULL || ld_waku_message_copy(&job->msg, msg) != 0) {
    free_job(job);
    return NULL;
  }
  job->claim = *claim;
  return job;
}

/* Appends `job` to the queue and starts it if the queue is idle. */
static void enqueue(node_rln_queue_t *q, prove_job_t *job) {
  if (q->tail != NULL)
    q->tail->next = job;
  else
    q->head = job;
  q->tail = job;
  q->waiting++;
  start_next(q);
}

/* What both ways into the queue do first: the node's queue (made on first use), refused while
 * the node stops, and `msg` as it will be proved, in *m (any proof it carries left out). */
static int open_entry(ld_node_t *node, const ld_waku_message_t *msg, node_rln_queue_t **q,
                      ld_waku_message_t *m) {
  *q = queue_of(node);
  if (*q == NULL)
    return LD_ERR_NOMEM;
  if ((*q)->stopping)
    return LD_ERR_STATE;
  *m = *msg;
  m->proof = NULL;
  m->proof_len = 0;
  return 0;
}

int ld_node_rln_publish(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                        uint8_t hash[LD_WAKU_HASH_LEN], ld_relay_reason_t *reason,
                        ld_node_published_fn done, void *user_data, ld_node_publish_call_t **call) {
  if (reason != NULL)
    *reason = LD_RELAY_OK;
  node_rln_queue_t *q;
  ld_waku_message_t m;
  int rc = open_entry(node, msg, &q, &m);
  if (rc != 0)
    return rc;
  if (m.timestamp != 0 &&
      m.timestamp < (int64_t)ld_wall_ns() - (int64_t)LD_NODE_RLN_RESTAMP_AFTER_MS * 1000000)
    m.timestamp = 0; /* stale already: stamped now, as it would be when its proof starts */
  ld_node_rln_claim_t claim;
  rc = ld_node_rln_claim(node, &m, &claim);
  if (rc != 0 || claim.prover == NULL) /* the claim sets a missing timestamp */
    return rc != 0 ? rc : LD_ERR_STATE;
  q->prover = claim.prover; /* a proving context is wanted from now on */
  /* relay's outgoing checks on the message as it will go out: any proof has the same size */
  uint8_t placeholder[LD_RLN_RATE_LIMIT_PROOF_MAX_ENCODED] = {0};
  m.proof = placeholder;
  m.proof_len = proof_encoded_len();
  ld_relay_reason_t why = ld_relay_check_outgoing(node->relay, pubsub_topic, &m);
  m.proof = NULL;
  m.proof_len = 0;
  prove_job_t *job = NULL;
  if (why != LD_RELAY_OK) {
    if (reason != NULL)
      *reason = why;
    rc = ld_node_outgoing_error(why);
  } else if (hash != NULL) {
    rc = ld_waku_message_hash(pubsub_topic, &m, hash);
  }
  if (rc == 0 && (job = new_job(q, pubsub_topic, &m, &claim)) == NULL)
    rc = LD_ERR_NOMEM;
  explicit_bzero(&claim.member, sizeof claim.member);
  if (rc != 0)
    return rc;
  job->restamp = true;
  job->published = done;
  job->published_ud = user_data;
  if (call != NULL)
    *call = done != NULL ? job : NULL;
  q->entering = true;
  enqueue(q, job);
  q->entering = false;
  if (done != NULL)
    return LD_NODE_PUBLISH_LATER;
  /* the relay peers it will go to, as ld_relay_publish counts them: 0 is nwaku's
   * NoPeersToPublish for the C library, "not propagated" for the Messaging API */
  return (int)ld_gs_service_topic_peers(node->gs, pubsub_topic, NULL, 0);
}

void ld_node_publish_detach(ld_node_publish_call_t *call) {
  if (call != NULL)
    call->published = NULL;
}

/* ---- light clients' messages (node_lightpush.c) -------------------------------------------- */

static void hand_over_proved(prove_job_t *job) {
  ld_node_rln_proved_fn proved = job->proved;
  job->proved = NULL;
  if (job->rc == 0) {
    job->msg.proof = job->proof;
    job->msg.proof_len = job->proof_len;
  }
  proved(job->proved_ud, job->rc, job->pubsub_topic, job->rc == 0 ? &job->msg : NULL);
  job->msg.proof = NULL;
  job->msg.proof_len = 0;
}

int ld_node_rln_prove_for(ld_node_t *node, const char *pubsub_topic, const ld_waku_message_t *msg,
                          const ld_node_rln_claim_t *claim, ld_node_rln_proved_fn proved,
                          void *user_data) {
  node_rln_queue_t *q;
  ld_waku_message_t m;
  int rc = open_entry(node, msg, &q, &m);
  if (rc != 0)
    return rc;
  prove_job_t *job = new_job(q, pubsub_topic, &m, claim);
  if (job == NULL)
    return LD_ERR_NOMEM;
  job->proved = proved;
  job->proved_ud = user_data;
  enqueue(q, job);
  return 0;
}

size_t ld_node_rln_pending(const ld_node_t *node) {
  const node_rln_queue_t *q = node->rln_queue;
  return q == NULL ? 0 : q->waiting + (q->running != NULL ? 1 : 0);
}

void ld_node_rln_publish_stop(ld_node_t *node) {
  node_rln_queue_t *q = node->rln_queue;
  if (q == NULL || q->stopping)
    return;
  q->stopping = true;
  if (q->waiting > 0)
    LD_WARN(TOPIC, "Stopping: %zu messages waiting for their RLN proof not published", q->waiting);
  while (q->head != NULL) {
    prove_job_t *job = q->head;
    q->head = job->next;
    free_job(job);
  }
  q->tail = NULL;
  q->waiting = 0;
  if (busy(q))
    node->pending++; /* the running job's end calls ld_node_pending_done */
  else
    drop_ctx(q);
}

void ld_node_rln_proving_stats(const ld_node_t *node, ld_node_rln_proving_stats_t *out) {
  const node_rln_queue_t *q = node->rln_queue;
  if (q == NULL)
    memset(out, 0, sizeof *out);
  else
    *out = q->stats;
}

void ld_node_rln_publish_hold(ld_node_t *node, bool hold) {
  node_rln_queue_t *q = queue_of(node);
  if (q == NULL)
    return;
  q->held = hold;
  if (!hold)
    start_next(q);
}

void ld_node_rln_publish_warm(ld_node_t *node, const ld_rln_prover_t *prover) {
  node_rln_queue_t *q = queue_of(node);
  if (q == NULL || q->stopping)
    return;
  q->prover = prover; /* a proving context is wanted from now on */
  q->warm_wanted = true;
  start_next(q);
}

void ld_node_rln_publish_free(ld_node_t *node) {
  node_rln_queue_t *q = node->rln_queue;
  if (q == NULL)
    return;
  while (q->head != NULL) {
    prove_job_t *job = q->head;
    q->head = job->next;
    free_job(job);
  }
  drop_ctx(q);
  explicit_bzero(&q->prepare_member, sizeof q->prepare_member);
  free(q);
  node->rln_queue = NULL;
}
