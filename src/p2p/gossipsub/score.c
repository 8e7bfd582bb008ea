#include "p2p/gossipsub/score.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

#define MAX_DECAY_ROUNDS 1024

typedef struct tstat {
  char *topic;
  bool in_mesh;
  uint64_t graft_time;
  double first_deliveries;
  double mesh_deliveries;
  double mesh_failure;
  double invalid;
} tstat_t;

typedef struct pscore {
  uint64_t peer;
  bool connected;
  uint64_t expire; /* when retained */
  char ip[LD_GS_SCORE_MAX_IP_LEN + 1];
  double behaviour;
  double app;
  tstat_t *topics;
  uint32_t n_topics, cap_topics;
} pscore_t;

struct ld_gs_score {
  const ld_gs_params_t *p;
  ld_hashmap_t *peers; /* u64 -> pscore_t* */
  ld_hashmap_t *ips;   /* ip -> connected peer count (as uintptr_t) */
  uint64_t last_decay;
  bool started;
  size_t retained;
};

static void pscore_free(void *v) {
  pscore_t *ps = v;
  for (uint32_t i = 0; i < ps->n_topics; i++) {
    free(ps->topics[i].topic);
  }
  free(ps->topics);
  free(ps);
}

ld_gs_score_t *ld_gs_score_new(const ld_gs_params_t *p) {
  ld_gs_score_t *s = calloc(1, sizeof *s);
  if (s == NULL) {
    return NULL;
  }
  s->p = p;
  s->peers = ld_hashmap_new(64);
  s->ips = ld_hashmap_new(64);
  if (s->peers == NULL || s->ips == NULL) {
    ld_gs_score_free(s);
    return NULL;
  }
  return s;
}

void ld_gs_score_free(ld_gs_score_t *s) {
  if (s == NULL) {
    return;
  }
  ld_hashmap_free(s->peers, pscore_free);
  ld_hashmap_free(s->ips, NULL);
  free(s);
}

/* ---- IP colocation ------------------------------------------------------------------------ */

static size_t ip_count(const ld_gs_score_t *s, const char *ip) {
  return (size_t)(uintptr_t)ld_hashmap_get(s->ips, ip, strlen(ip));
}

static void ip_adjust(ld_gs_score_t *s, const char *ip, int delta) {
  if (ip[0] == '\0') {
    return;
  }
  size_t n = ip_count(s, ip);
  n = (delta < 0) ? (n > 0 ? n - 1 : 0) : n + 1;
  if (n == 0) {
    ld_hashmap_remove(s->ips, ip, strlen(ip));
  } else {
    ld_hashmap_put(s->ips, ip, strlen(ip), (void *)(uintptr_t)n, NULL);
  }
}

/* ---- peers -------------------------------------------------------------------------------- */

static pscore_t *find(const ld_gs_score_t *s, uint64_t peer) {
  return ld_hashmap_get_u64(s->peers, peer);
}

static void set_ip(pscore_t *ps, const char *ip) {
  ps->ip[0] = '\0';
  if (ip != NULL && strlen(ip) <= LD_GS_SCORE_MAX_IP_LEN) {
    strcpy(ps->ip, ip);
  }
}

int ld_gs_score_connect(ld_gs_score_t *s, uint64_t peer, const char *ip, uint64_t now_ms) {
  (void)now_ms;
  pscore_t *ps = find(s, peer);
  if (ps != NULL && ps->connected) {
    return LD_ERR_EXISTS;
  }
  if (ps == NULL) {
    ps = calloc(1, sizeof *ps);
    if (ps == NULL) {
      return LD_ERR_NOMEM;
    }
    ps->peer = peer;
    if (ld_hashmap_put_u64(s->peers, peer, ps, NULL) != 0) {
      free(ps);
      return LD_ERR_NOMEM;
    }
  } else {
    s->retained--;
  }
  ps->connected = true;
  set_ip(ps, ip);
  ip_adjust(s, ps->ip, +1);
  return 0;
}

static tstat_t *topic_find(const pscore_t *ps, const char *topic) {
  for (uint32_t i = 0; i < ps->n_topics; i++) {
    if (strcmp(ps->topics[i].topic, topic) == 0) {
      return &ps->topics[i];
    }
  }
  return NULL;
}

static tstat_t *topic_get(pscore_t *ps, const char *topic) {
  tstat_t *t = topic_find(ps, topic);
  if (t != NULL || ps->n_topics >= LD_GS_SCORE_MAX_TOPICS) {
    return t;
  }
  if (ps->n_topics == ps->cap_topics) {
    uint32_t ncap = ps->cap_topics ? ps->cap_topics * 2 : 2;
    tstat_t *nt = realloc(ps->topics, ncap * sizeof *nt);
    if (nt == NULL) {
      return NULL;
    }
    ps->topics = nt;
    ps->cap_topics = ncap;
  }
  t = &ps->topics[ps->n_topics];
  memset(t, 0, sizeof *t);
  t->topic = strdup(topic);
  if (t->topic == NULL) {
    return NULL;
  }
  ps->n_topics++;
  return t;
}

static bool deliveries_active(const ld_gs_topic_score_params_t *tp, const tstat_t *t,
                              uint64_t now) {
  return t->in_mesh && now - t->graft_time >= tp->mesh_message_deliveries_activation_ms;
}

static void leave_mesh(const ld_gs_params_t *p, tstat_t *t, uint64_t now) {
  const ld_gs_topic_score_params_t *tp = &p->topic_score;
  if (!t->in_mesh) {
    return;
  }
  if (tp->mesh_message_deliveries_weight != 0 && deliveries_active(tp, t, now) &&
      t->mesh_deliveries < tp->mesh_message_deliveries_threshold) {
    double deficit = tp->mesh_message_deliveries_threshold - t->mesh_deliveries;
    t->mesh_failure += deficit * deficit;
  }
  t->in_mesh = false;
}

void ld_gs_score_disconnect(ld_gs_score_t *s, uint64_t peer, uint64_t now_ms) {
  pscore_t *ps = find(s, peer);
  if (ps == NULL || !ps->connected) {
    return;
  }
  for (uint32_t i = 0; i < ps->n_topics; i++) {
    leave_mesh(s->p, &ps->topics[i], now_ms);
  }
  ip_adjust(s, ps->ip, -1);
  ps->connected = false;
  if (s->p->retain_score_ms == 0 || s->retained >= LD_GS_SCORE_MAX_RETAINED) {
    ld_hashmap_remove_u64(s->peers, peer);
    pscore_free(ps);
    return;
  }
  ps->expire = now_ms + s->p->retain_score_ms;
  s->retained++;
}

/* ---- events ------------------------------------------------------------------------------- */

void ld_gs_score_graft(ld_gs_score_t *s, uint64_t peer, const char *topic, uint64_t now_ms) {
  pscore_t *ps = find(s, peer);
  tstat_t *t = ps ? topic_get(ps, topic) : NULL;
  if (t == NULL) {
    return;
  }
  t->in_mesh = true;
  t->graft_time = now_ms;
  t->mesh_deliveries = 0;
}

void ld_gs_score_prune(ld_gs_score_t *s, uint64_t peer, const char *topic, uint64_t now_ms) {
  pscore_t *ps = find(s, peer);
  tstat_t *t = ps ? topic_find(ps, topic) : NULL;
  if (t != NULL) {
    leave_mesh(s->p, t, now_ms);
  }
}

static double capped_inc(double v, double cap) {
  v += 1;
  return (cap > 0 && v > cap) ? cap : v;
}

void ld_gs_score_first_delivery(ld_gs_score_t *s, uint64_t peer, const char *topic) {
  const ld_gs_topic_score_params_t *tp = &s->p->topic_score;
  pscore_t *ps = find(s, peer);
  tstat_t *t = ps ? topic_get(ps, topic) : NULL;
  if (t == NULL) {
    return;
  }
  t->first_deliveries = capped_inc(t->first_deliveries, tp->first_message_deliveries_cap);
  if (t->in_mesh) {
    t->mesh_deliveries = capped_inc(t->mesh_deliveries, tp->mesh_message_deliveries_cap);
  }
}

void ld_gs_score_mesh_delivery(ld_gs_score_t *s, uint64_t peer, const char *topic) {
  pscore_t *ps = find(s, peer);
  tstat_t *t = ps ? topic_find(ps, topic) : NULL;
  if (t != NULL && t->in_mesh) {
    t->mesh_deliveries =
        capped_inc(t->mesh_deliveries, s->p->topic_score.mesh_message_deliveries_cap);
  }
}

void ld_gs_score_invalid(ld_gs_score_t *s, uint64_t peer, const char *topic) {
  pscore_t *ps = find(s, peer);
  tstat_t *t = ps ? topic_get(ps, topic) : NULL;
  if (t != NULL) {
    t->invalid += 1;
  }
}

void ld_gs_score_penalize(ld_gs_score_t *s, uint64_t peer, double count) {
  pscore_t *ps = find(s, peer);
  if (ps != NULL) {
    ps->behaviour += count;
  }
}

int ld_gs_score_set_app(ld_gs_score_t *s, uint64_t peer, double value) {
  pscore_t *ps = find(s, peer);
  if (ps == NULL) {
    return LD_ERR_NOT_FOUND;
  }
  ps->app = value;
  return 0;
}

/* ---- the score ---------------------------------------------------------------------------- */

static double topic_score(const ld_gs_topic_score_params_t *tp, const tstat_t *t, uint64_t now) {
  double v = 0;
  if (t->in_mesh && tp->time_in_mesh_weight != 0) {
    uint64_t q = tp->time_in_mesh_quantum_ms ? tp->time_in_mesh_quantum_ms : 1;
    double p1 = (double)(now - t->graft_time) / (double)q;
    if (tp->time_in_mesh_cap > 0 && p1 > tp->time_in_mesh_cap) {
      p1 = tp->time_in_mesh_cap;
    }
    v += p1 * tp->time_in_mesh_weight;
  }
  v += t->first_deliveries * tp->first_message_deliveries_weight;
  if (tp->mesh_message_deliveries_weight != 0 && deliveries_active(tp, t, now) &&
      t->mesh_deliveries < tp->mesh_message_deliveries_threshold) {
    double deficit = tp->mesh_message_deliveries_threshold - t->mesh_deliveries;
    v += deficit * deficit * tp->mesh_message_deliveries_weight;
  }
  v += t->mesh_failure * tp->mesh_failure_penalty_weight;
  v += t->invalid * t->invalid * tp->invalid_message_deliveries_weight;
  return v * tp->topic_weight;
}

static double colocation(const ld_gs_score_t *s, const pscore_t *ps) {
  if (!ps->connected || ps->ip[0] == '\0' || s->p->ip_colocation_weight == 0) {
    return 0;
  }
  size_t n = ip_count(s, ps->ip);
  if (n <= s->p->ip_colocation_threshold) {
    return 0;
  }
  double surplus = (double)(n - s->p->ip_colocation_threshold);
  return surplus * surplus * s->p->ip_colocation_weight;
}

double ld_gs_score_get(const ld_gs_score_t *s, uint64_t peer, uint64_t now_ms) {
  const ld_gs_params_t *p = s->p;
  const pscore_t *ps = find(s, peer);
  if (ps == NULL) {
    return 0;
  }
  double topics = 0;
  for (uint32_t i = 0; i < ps->n_topics; i++) {
    topics += topic_score(&p->topic_score, &ps->topics[i], now_ms);
  }
  if (p->topic_score_cap > 0 && topics > p->topic_score_cap) {
    topics = p->topic_score_cap;
  }
  double v = topics + ps->app * p->app_specific_weight + colocation(s, ps);
  if (ps->behaviour > p->behaviour_penalty_threshold) {
    double excess = ps->behaviour - p->behaviour_penalty_threshold;
    v += excess * excess * p->behaviour_penalty_weight;
  }
  return v;
}

/* ---- decay and retention ------------------------------------------------------------------ */

static double decay(double v, double factor, double to_zero) {
  v *= factor;
  return v < to_zero ? 0 : v;
}

static void decay_peer(const ld_gs_params_t *p, pscore_t *ps) {
  const ld_gs_topic_score_params_t *tp = &p->topic_score;
  double z = p->decay_to_zero;
  for (uint32_t i = 0; i < ps->n_topics; i++) {
    tstat_t *t = &ps->topics[i];
    t->first_deliveries = decay(t->first_deliveries, tp->first_message_deliveries_decay, z);
    t->mesh_deliveries = decay(t->mesh_deliveries, tp->mesh_message_deliveries_decay, z);
    t->mesh_failure = decay(t->mesh_failure, tp->mesh_failure_penalty_decay, z);
    t->invalid = decay(t->invalid, tp->invalid_message_deliveries_decay, z);
  }
  ps->behaviour = decay(ps->behaviour, p->behaviour_penalty_decay, z);
}

static void decay_all(ld_gs_score_t *s, uint64_t now) {
  ld_hashmap_iter_t it = {0};
  void *v;
  uint64_t rounds = 0;
  while (now - s->last_decay >= s->p->decay_interval_ms && rounds < MAX_DECAY_ROUNDS) {
    s->last_decay += s->p->decay_interval_ms;
    rounds++;
  }
  if (rounds == MAX_DECAY_ROUNDS) {
    s->last_decay = now;
  }
  for (uint64_t r = 0; r < rounds; r++) {
    ld_hashmap_iter_init(&it);
    while (ld_hashmap_next(s->peers, &it, NULL, NULL, &v)) {
      decay_peer(s->p, v);
    }
  }
}

static void expire_retained(ld_gs_score_t *s, uint64_t now) {
  ld_hashmap_iter_t it = {0};
  void *v;
  while (ld_hashmap_next(s->peers, &it, NULL, NULL, &v)) {
    pscore_t *ps = v;
    if (!ps->connected && ps->expire <= now) {
      ld_hashmap_remove_u64(s->peers, ps->peer);
      pscore_free(ps);
      s->retained--;
    }
  }
}

void ld_gs_score_tick(ld_gs_score_t *s, uint64_t now_ms) {
  if (!s->started || now_ms < s->last_decay) {
    s->last_decay = now_ms;
    s->started = true;
  }
  if (s->p->decay_interval_ms > 0) {
    decay_all(s, now_ms);
  }
  if (s->retained > 0) {
    expire_retained(s, now_ms);
  }
}

size_t ld_gs_score_count(const ld_gs_score_t *s) {
  return ld_hashmap_size(s->peers);
}
