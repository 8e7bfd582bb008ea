#include "p2p/peerstore.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"

typedef struct peer {
  ld_peerstore_peer_t view;
  ld_pubkey_t *key;
  char *agent;
  char *proto_version;
  ld_multiaddr_t *addrs;
  size_t n_addrs;
  char **protocols;
  size_t n_protocols;
} peer_t;

struct ld_peerstore {
  ld_peerstore_config_t cfg;
  ld_hashmap_t *peers; /* peer ID bytes → peer_t */
};

void ld_peerstore_config_default(ld_peerstore_config_t *cfg) {
  cfg->max_peers = LD_PEERSTORE_DEFAULT_MAX_PEERS;
  cfg->max_addrs = LD_PEERSTORE_DEFAULT_MAX_ADDRS;
  cfg->max_protocols = LD_PEERSTORE_DEFAULT_MAX_PROTOCOLS;
}

static void free_strings(char **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(v[i]);
  free(v);
}

static void peer_free(void *ptr) {
  peer_t *p = ptr;
  if (p == NULL)
    return;
  free(p->key);
  free(p->agent);
  free(p->proto_version);
  free(p->addrs);
  free_strings(p->protocols, p->n_protocols);
  free(p);
}

static void sync_view(peer_t *p) {
  p->view.public_key = p->key;
  p->view.agent_version = p->agent;
  p->view.protocol_version = p->proto_version;
  p->view.addrs = p->addrs;
  p->view.n_addrs = p->n_addrs;
  p->view.protocols = (const char *const *)p->protocols;
  p->view.n_protocols = p->n_protocols;
}

ld_peerstore_t *ld_peerstore_new(const ld_peerstore_config_t *cfg) {
  ld_peerstore_t *ps = calloc(1, sizeof *ps);
  if (ps == NULL)
    return NULL;
  ld_peerstore_config_default(&ps->cfg);
  if (cfg != NULL) {
    if (cfg->max_peers > 0)
      ps->cfg.max_peers = cfg->max_peers;
    if (cfg->max_addrs > 0)
      ps->cfg.max_addrs = cfg->max_addrs;
    if (cfg->max_protocols > 0)
      ps->cfg.max_protocols = cfg->max_protocols;
  }
  ps->peers = ld_hashmap_new(64);
  if (ps->peers == NULL) {
    free(ps);
    return NULL;
  }
  return ps;
}

void ld_peerstore_free(ld_peerstore_t *ps) {
  if (ps == NULL)
    return;
  ld_hashmap_free(ps->peers, peer_free);
  free(ps);
}

static peer_t *find(const ld_peerstore_t *ps, const ld_peerid_t *id) {
  return ld_hashmap_get(ps->peers, id->bytes, id->len);
}

static void evict_oldest(ld_peerstore_t *ps) {
  ld_hashmap_iter_t it = {0};
  void *value;
  peer_t *oldest = NULL;
  while (ld_hashmap_next(ps->peers, &it, NULL, NULL, &value)) {
    peer_t *p = value;
    if (oldest == NULL || p->view.last_seen_ms < oldest->view.last_seen_ms)
      oldest = p;
  }
  if (oldest != NULL) {
    ld_hashmap_remove(ps->peers, oldest->view.id.bytes, oldest->view.id.len);
    peer_free(oldest);
  }
}

/* The peer's entry, created when unknown; NULL when out of memory. */
static peer_t *obtain(ld_peerstore_t *ps, const ld_peerid_t *id, uint64_t now_ms) {
  peer_t *p = find(ps, id);
  if (p == NULL) {
    p = calloc(1, sizeof *p);
    if (p == NULL)
      return NULL;
    p->view.id = *id;
    if (ld_hashmap_size(ps->peers) >= ps->cfg.max_peers)
      evict_oldest(ps);
    if (ld_hashmap_put(ps->peers, id->bytes, id->len, p, NULL) != 0) {
      free(p);
      return NULL;
    }
    sync_view(p);
  }
  p->view.last_seen_ms = now_ms;
  return p;
}

static bool valid_id(const ld_peerid_t *id) {
  return id != NULL && id->len > 0 && id->len <= LD_PEERID_MAX;
}

/* ---- addresses ------------------------------------------------------------------------------ */

static bool has_addr(const peer_t *p, const ld_multiaddr_t *ma) {
  for (size_t i = 0; i < p->n_addrs; i++)
    if (ld_multiaddr_equal(&p->addrs[i], ma))
      return true;
  return false;
}

static int push_addr(const ld_peerstore_t *ps, peer_t *p, const ld_multiaddr_t *ma) {
  if (p->n_addrs >= ps->cfg.max_addrs) {
    memmove(&p->addrs[0], &p->addrs[1], (p->n_addrs - 1) * sizeof p->addrs[0]);
    p->n_addrs--;
  } else {
    ld_multiaddr_t *grown = realloc(p->addrs, (p->n_addrs + 1) * sizeof *grown);
    if (grown == NULL)
      return LD_ERR_NOMEM;
    p->addrs = grown;
  }
  p->addrs[p->n_addrs++] = *ma;
  return 0;
}

/* Copies `in` without its /p2p suffix into `out`; false when it names another peer. */
static bool transport_addr(const ld_multiaddr_t *in, const ld_peerid_t *id, ld_multiaddr_t *out) {
  ld_peerid_t named;
  *out = *in;
  if (ld_multiaddr_peerid(out, &named, true) && !ld_peerid_equal(&named, id))
    return false;
  return out->len > 0;
}

int ld_peerstore_add_addrs(ld_peerstore_t *ps, const ld_peerid_t *id, const ld_multiaddr_t *addrs,
                           size_t n, uint64_t now_ms) {
  if (ps == NULL || !valid_id(id) || (n > 0 && addrs == NULL))
    return LD_ERR_INVALID_ARG;
  peer_t *p = obtain(ps, id, now_ms);
  if (p == NULL)
    return LD_ERR_NOMEM;
  int added = 0;
  for (size_t i = 0; i < n; i++) {
    ld_multiaddr_t ma;
    if (!transport_addr(&addrs[i], id, &ma) || has_addr(p, &ma))
      continue;
    int rc = push_addr(ps, p, &ma);
    if (rc != 0) {
      sync_view(p);
      return rc;
    }
    added++;
  }
  sync_view(p);
  return added;
}

int ld_peerstore_set_addrs(ld_peerstore_t *ps, const ld_peerid_t *id, const ld_multiaddr_t *addrs,
                           size_t n, uint64_t now_ms) {
  if (ps == NULL || !valid_id(id) || (n > 0 && addrs == NULL))
    return LD_ERR_INVALID_ARG;
  peer_t *p = obtain(ps, id, now_ms);
  if (p == NULL)
    return LD_ERR_NOMEM;
  p->n_addrs = 0;
  return ld_peerstore_add_addrs(ps, id, addrs, n, now_ms);
}

/* ---- protocols and versions ----------------------------------------------------------------- */

static bool in_list(char *const *v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], s) == 0)
      return true;
  return false;
}

static bool protocol_ok(const char *s) {
  size_t len = s != NULL ? strnlen(s, LD_PEERSTORE_MAX_STRING + 1) : 0;
  return len > 0 && len <= LD_PEERSTORE_MAX_STRING;
}

int ld_peerstore_set_protocols(ld_peerstore_t *ps, const ld_peerid_t *id,
                               const char *const *protocols, size_t n, uint64_t now_ms) {
  if (ps == NULL || !valid_id(id) || (n > 0 && protocols == NULL))
    return LD_ERR_INVALID_ARG;
  size_t cap = n < ps->cfg.max_protocols ? n : ps->cfg.max_protocols;
  char **list = calloc(cap > 0 ? cap : 1, sizeof *list);
  if (list == NULL)
    return LD_ERR_NOMEM;
  size_t count = 0;
  for (size_t i = 0; i < n && count < cap; i++) {
    if (!protocol_ok(protocols[i]) || in_list(list, count, protocols[i]))
      continue;
    if ((list[count] = strdup(protocols[i])) == NULL) {
      free_strings(list, count);
      return LD_ERR_NOMEM;
    }
    count++;
  }
  peer_t *p = obtain(ps, id, now_ms);
  if (p == NULL) {
    free_strings(list, count);
    return LD_ERR_NOMEM;
  }
  free_strings(p->protocols, p->n_protocols);
  p->protocols = list;
  p->n_protocols = count;
  sync_view(p);
  return (int)count;
}

/* A copy of `s` cut to LD_PEERSTORE_MAX_STRING bytes at a UTF-8 character boundary. */
static char *dup_capped(const char *s) {
  size_t len = strnlen(s, LD_PEERSTORE_MAX_STRING + 1);
  if (len > LD_PEERSTORE_MAX_STRING) {
    len = LD_PEERSTORE_MAX_STRING;
    while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
      len--;
  }
  return strndup(s, len);
}

int ld_peerstore_set_versions(ld_peerstore_t *ps, const ld_peerid_t *id, const char *agent_version,
                              const char *protocol_version, uint64_t now_ms) {
  if (ps == NULL || !valid_id(id))
    return LD_ERR_INVALID_ARG;
  char *agent = agent_version != NULL ? dup_capped(agent_version) : NULL;
  char *pv = protocol_version != NULL ? dup_capped(protocol_version) : NULL;
  peer_t *p = NULL;
  if ((agent_version == NULL || agent != NULL) && (protocol_version == NULL || pv != NULL))
    p = obtain(ps, id, now_ms);
  if (p == NULL) {
    free(agent);
    free(pv);
    return LD_ERR_NOMEM;
  }
  if (agent != NULL) {
    free(p->agent);
    p->agent = agent;
  }
  if (pv != NULL) {
    free(p->proto_version);
    p->proto_version = pv;
  }
  sync_view(p);
  return 0;
}

int ld_peerstore_set_public_key(ld_peerstore_t *ps, const ld_peerid_t *id, const ld_pubkey_t *pub,
                                uint64_t now_ms) {
  if (ps == NULL || !valid_id(id) || pub == NULL)
    return LD_ERR_INVALID_ARG;
  if (!ld_peerid_matches(id, pub))
    return LD_ERR_PEER_ID_MISMATCH;
  ld_pubkey_t *copy = malloc(sizeof *copy);
  if (copy == NULL)
    return LD_ERR_NOMEM;
  *copy = *pub;
  peer_t *p = obtain(ps, id, now_ms);
  if (p == NULL) {
    free(copy);
    return LD_ERR_NOMEM;
  }
  free(p->key);
  p->key = copy;
  sync_view(p);
  return 0;
}

int ld_peerstore_touch(ld_peerstore_t *ps, const ld_peerid_t *id, uint64_t now_ms) {
  if (ps == NULL || !valid_id(id))
    return LD_ERR_INVALID_ARG;
  return obtain(ps, id, now_ms) != NULL ? 0 : LD_ERR_NOMEM;
}

/* ---- queries -------------------------------------------------------------------------------- */

const ld_peerstore_peer_t *ld_peerstore_get(const ld_peerstore_t *ps, const ld_peerid_t *id) {
  if (ps == NULL || !valid_id(id))
    return NULL;
  peer_t *p = find(ps, id);
  return p != NULL ? &p->view : NULL;
}

static bool peer_supports(const peer_t *p, const char *protocol) {
  return in_list(p->protocols, p->n_protocols, protocol);
}

bool ld_peerstore_supports(const ld_peerstore_t *ps, const ld_peerid_t *id, const char *protocol) {
  if (ps == NULL || !valid_id(id) || protocol == NULL)
    return false;
  peer_t *p = find(ps, id);
  return p != NULL && peer_supports(p, protocol);
}

int ld_peerstore_remove(ld_peerstore_t *ps, const ld_peerid_t *id) {
  if (ps == NULL || !valid_id(id))
    return LD_ERR_INVALID_ARG;
  peer_t *p = ld_hashmap_remove(ps->peers, id->bytes, id->len);
  if (p == NULL)
    return LD_ERR_NOT_FOUND;
  peer_free(p);
  return 0;
}

size_t ld_peerstore_count(const ld_peerstore_t *ps) {
  return ps != NULL ? ld_hashmap_size(ps->peers) : 0;
}

static int by_last_seen_desc(const void *a, const void *b) {
  const peer_t *pa = *(peer_t *const *)a, *pb = *(peer_t *const *)b;
  if (pa->view.last_seen_ms != pb->view.last_seen_ms)
    return pa->view.last_seen_ms > pb->view.last_seen_ms ? -1 : 1;
  if (pa->view.id.len != pb->view.id.len)
    return pa->view.id.len < pb->view.id.len ? -1 : 1;
  return memcmp(pa->view.id.bytes, pb->view.id.bytes, pa->view.id.len);
}

size_t ld_peerstore_peers(const ld_peerstore_t *ps, const char *protocol, ld_peerid_t *out,
                          size_t max) {
  if (ps == NULL)
    return 0;
  size_t total = ld_hashmap_size(ps->peers);
  peer_t **all = malloc((total > 0 ? total : 1) * sizeof *all);
  ld_hashmap_iter_t it = {0};
  void *value;
  size_t n = 0, copied = 0;
  while (ld_hashmap_next(ps->peers, &it, NULL, NULL, &value)) {
    peer_t *p = value;
    if (protocol != NULL && !peer_supports(p, protocol))
      continue;
    if (all != NULL)
      all[n] = p;
    else if (copied < max && out != NULL)
      out[copied++] = p->view.id; /* out of memory: unsorted */
    n++;
  }
  if (all != NULL) {
    qsort(all, n, sizeof *all, by_last_seen_desc);
    for (size_t i = 0; i < n && i < max && out != NULL; i++)
      out[i] = all[i]->view.id;
    free(all);
  }
  return n;
}
