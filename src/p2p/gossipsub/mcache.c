#include "p2p/gossipsub/mcache.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

void ld_gs_mcache_init(ld_gs_mcache_t *mc, uint32_t len, uint32_t gossip) {
  memset(mc, 0, sizeof *mc);
  ld_gs_idset_init(&mc->idx, LD_GS_MCACHE_MAX_MSGS);
  mc->len = len ? len : 1;
  mc->gossip = gossip > mc->len ? mc->len : gossip;
}

static void free_msg(void *ctx, const ld_gs_idset_entry_t *e) {
  (void)ctx;
  ld_gs_cmsg_t *m = (ld_gs_cmsg_t *)(uintptr_t)e->value;
  free(m->tx);
  free(m);
}

void ld_gs_mcache_clear(ld_gs_mcache_t *mc) {
  ld_gs_idset_expire(&mc->idx, UINT64_MAX, free_msg, NULL);
  ld_gs_idset_clear(&mc->idx);
}

int ld_gs_mcache_put(ld_gs_mcache_t *mc, const uint8_t id[LD_GS_IDSET_ID_LEN], const char *topic,
                     const uint8_t *data, size_t len, ld_gs_cmsg_t **out) {
  if (ld_gs_idset_find(&mc->idx, id, LD_GS_IDSET_ID_LEN) != NULL) {
    return LD_ERR_EXISTS;
  }
  size_t tlen = strlen(topic);
  ld_gs_cmsg_t *m = malloc(sizeof *m + tlen + 1 + len);
  if (m == NULL) {
    return LD_ERR_NOMEM;
  }
  memset(m, 0, sizeof *m);
  memcpy(m->id, id, LD_GS_IDSET_ID_LEN);
  char *t = (char *)(m + 1);
  memcpy(t, topic, tlen + 1);
  uint8_t *d = (uint8_t *)t + tlen + 1;
  if (len > 0) {
    memcpy(d, data, len);
  }
  m->topic = t;
  m->topic_len = tlen;
  m->data = d;
  m->len = len;
  int rc = ld_gs_idset_add(&mc->idx, id, mc->window + mc->len, (uint64_t)(uintptr_t)m);
  if (rc != 0) {
    free(m);
    return rc;
  }
  if (out != NULL) {
    *out = m;
  }
  return 0;
}

ld_gs_cmsg_t *ld_gs_mcache_get(const ld_gs_mcache_t *mc, const uint8_t *id, size_t id_len) {
  ld_gs_idset_entry_t *e = ld_gs_idset_find(&mc->idx, id, id_len);
  return e ? (ld_gs_cmsg_t *)(uintptr_t)e->value : NULL;
}

void ld_gs_mcache_gossip_each(const ld_gs_mcache_t *mc, void (*fn)(void *ctx, ld_gs_cmsg_t *m),
                              void *ctx) {
  /* entries put in the newest `gossip` windows have expiry > window + len - gossip */
  uint64_t floor = mc->window + mc->len - mc->gossip;
  for (uint64_t q = mc->idx.tail; q > mc->idx.head; q--) {
    ld_gs_idset_entry_t *e = ld_gs_idset_at(&mc->idx, q - 1);
    if (e == NULL) {
      continue;
    }
    if (e->expiry <= floor) {
      break;
    }
    fn(ctx, (ld_gs_cmsg_t *)(uintptr_t)e->value);
  }
}

uint32_t ld_gs_mcache_count_tx(ld_gs_cmsg_t *m, uint64_t peer) {
  for (uint32_t i = 0; i < m->n_tx; i++) {
    if (m->tx[i].peer == peer) {
      return ++m->tx[i].count;
    }
  }
  if (m->n_tx == m->cap_tx) {
    if (m->cap_tx >= LD_GS_MCACHE_MAX_TX_PEERS) {
      return UINT32_MAX;
    }
    uint32_t ncap = m->cap_tx ? m->cap_tx * 2 : 4;
    ld_gs_mcache_tx_t *tx = realloc(m->tx, ncap * sizeof *tx);
    if (tx == NULL) {
      return UINT32_MAX;
    }
    m->tx = tx;
    m->cap_tx = ncap;
  }
  m->tx[m->n_tx].peer = peer;
  m->tx[m->n_tx].count = 1;
  m->n_tx++;
  return 1;
}

void ld_gs_mcache_shift(ld_gs_mcache_t *mc) {
  mc->window++;
  ld_gs_idset_expire(&mc->idx, mc->window, free_msg, NULL);
}
