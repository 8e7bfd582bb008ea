#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"
#include "waku/enr/enr.h"
#include "waku/enr/rlp.h"

/* ---- builder -------------------------------------------------------------------------------- */

void ld_enr_builder_init(ld_enr_builder_t *b, uint64_t seq) {
  memset(b, 0, sizeof *b);
  b->seq = seq;
}

static int find_key(const ld_enr_builder_t *b, const char *key) {
  for (size_t i = 0; i < b->n; i++)
    if (strcmp(b->pairs[i].key, key) == 0)
      return (int)i;
  return -1;
}

/* Drops pair i and closes the gap its value left in the pool. */
static void remove_at(ld_enr_builder_t *b, size_t i) {
  uint16_t off = b->pairs[i].off, len = b->pairs[i].len;
  memmove(b->pool + off, b->pool + off + len, b->pool_len - off - len);
  b->pool_len -= len;
  memmove(&b->pairs[i], &b->pairs[i + 1], (b->n - i - 1) * sizeof b->pairs[0]);
  b->n--;
  for (size_t j = 0; j < b->n; j++)
    if (b->pairs[j].off > off)
      b->pairs[j].off = (uint16_t)(b->pairs[j].off - len);
}

int ld_enr_builder_remove(ld_enr_builder_t *b, const char *key) {
  int i = find_key(b, key);
  if (i < 0)
    return LD_ERR_NOT_FOUND;
  remove_at(b, (size_t)i);
  return 0;
}

static bool key_ok(const char *key) {
  size_t n = key != NULL ? strnlen(key, LD_ENR_KEY_MAX + 1) : 0;
  return n > 0 && n <= LD_ENR_KEY_MAX && strcmp(key, "id") != 0 && strcmp(key, "secp256k1") != 0;
}

int ld_enr_builder_set(ld_enr_builder_t *b, const char *key, const void *value, size_t len) {
  if (!key_ok(key) || (value == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  uint8_t item[8 + LD_ENR_MAX_SIZE];
  if (len > LD_ENR_MAX_SIZE)
    return LD_ERR_LIMIT;
  ld_buf_t enc;
  ld_buf_init(&enc);
  if (ld_rlp_put_string(&enc, value, len) != 0)
    return LD_ERR_NOMEM;
  size_t n = enc.len;
  memcpy(item, enc.data, n);
  ld_buf_clear(&enc);
  int i = find_key(b, key);
  size_t freed = i >= 0 ? b->pairs[i].len : 0;
  if (b->pool_len - freed + n > sizeof b->pool || (i < 0 && b->n == LD_ENR_BUILDER_MAX_PAIRS))
    return LD_ERR_LIMIT;
  if (i >= 0)
    remove_at(b, (size_t)i);
  strcpy(b->pairs[b->n].key, key);
  b->pairs[b->n].off = (uint16_t)b->pool_len;
  b->pairs[b->n].len = (uint16_t)n;
  memcpy(b->pool + b->pool_len, item, n);
  b->pool_len += n;
  b->n++;
  return 0;
}

int ld_enr_builder_set_uint(ld_enr_builder_t *b, const char *key, uint64_t v) {
  uint8_t be[8];
  size_t n = 0;
  for (int shift = 56; shift >= 0; shift -= 8)
    if (n > 0 || (uint8_t)(v >> shift) != 0)
      be[n++] = (uint8_t)(v >> shift);
  return ld_enr_builder_set(b, key, be, n);
}

int ld_enr_builder_set_ip4(ld_enr_builder_t *b, const uint8_t ip[4]) {
  return ld_enr_builder_set(b, "ip", ip, 4);
}

int ld_enr_builder_set_ip6(ld_enr_builder_t *b, const uint8_t ip[16]) {
  return ld_enr_builder_set(b, "ip6", ip, 16);
}

int ld_enr_builder_set_waku2(ld_enr_builder_t *b, uint8_t caps) {
  return ld_enr_builder_set(b, "waku2", &caps, 1);
}

/* ---- multiaddrs and shards ------------------------------------------------------------------ */

/* `ma` without any /p2p component (nwaku strips them all). */
static int strip_p2p(const ld_multiaddr_t *ma, ld_multiaddr_t *out) {
  size_t off = 0;
  ld_multiaddr_component_t comp;
  memset(out, 0, sizeof *out);
  while (ld_multiaddr_next(ma, &off, &comp) == 1) {
    if (comp.code == LD_MA_P2P)
      continue;
    int rc = ld_multiaddr_push(out, comp.code, comp.value, comp.value_len);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static bool entry_present(const uint8_t *v, size_t len, const ld_multiaddr_t *ma) {
  for (size_t off = 0; off + 2 <= len;) {
    size_t n = (size_t)(v[off] << 8 | v[off + 1]);
    if (n == ma->len && memcmp(v + off + 2, ma->bytes, n) == 0)
      return true;
    off += 2 + n;
  }
  return false;
}

/* Encodes up to `limit` addresses accepted by `pick` (NULL: all) as the `multiaddrs` value. */
static int encode_multiaddrs(const ld_multiaddr_t *addrs, size_t n,
                             bool (*pick)(const ld_multiaddr_t *), size_t limit, uint8_t *out,
                             size_t *out_len) {
  size_t len = 0, taken = 0;
  for (size_t i = 0; i < n && taken < limit; i++) {
    ld_multiaddr_t ma;
    if ((pick != NULL && !pick(&addrs[i])) || strip_p2p(&addrs[i], &ma) != 0 || ma.len == 0 ||
        entry_present(out, len, &ma))
      continue;
    if (len + 2 + ma.len > LD_ENR_MAX_SIZE)
      return LD_ERR_LIMIT;
    out[len] = (uint8_t)(ma.len >> 8);
    out[len + 1] = (uint8_t)ma.len;
    memcpy(out + len + 2, ma.bytes, ma.len);
    len += 2 + ma.len;
    taken++;
  }
  *out_len = len;
  return 0;
}

static int set_multiaddrs(ld_enr_builder_t *b, const ld_multiaddr_t *addrs, size_t n,
                          bool (*pick)(const ld_multiaddr_t *), size_t limit) {
  uint8_t v[LD_ENR_MAX_SIZE];
  size_t len;
  int rc = encode_multiaddrs(addrs, n, pick, limit, v, &len);
  if (rc != 0)
    return rc;
  if (len == 0) {
    ld_enr_builder_remove(b, "multiaddrs");
    return 0;
  }
  return ld_enr_builder_set(b, "multiaddrs", v, len);
}

int ld_enr_builder_set_multiaddrs(ld_enr_builder_t *b, const ld_multiaddr_t *addrs, size_t n) {
  if (addrs == NULL && n > 0)
    return LD_ERR_INVALID_ARG;
  return set_multiaddrs(b, addrs, n, NULL, n);
}

int ld_enr_builder_set_shards(ld_enr_builder_t *b, uint16_t cluster_id, const uint16_t *shards,
                              size_t n) {
  ld_enr_shards_t set;
  memset(&set, 0, sizeof set);
  for (size_t i = 0; i < n; i++)
    if (ld_enr_shards_add(&set, shards[i]) != 0)
      return LD_ERR_INVALID_ARG;
  uint8_t v[LD_ENR_RSV_LEN] = {(uint8_t)(cluster_id >> 8), (uint8_t)cluster_id};
  const char *key = "rsv", *other = "rs";
  size_t len = LD_ENR_RSV_LEN;
  if (set.n_shards < LD_ENR_RS_MAX_LIST) {
    key = "rs";
    other = "rsv";
    v[2] = (uint8_t)set.n_shards;
    len = 3;
    for (uint16_t s = 0; s <= LD_ENR_MAX_SHARD; s++)
      if (ld_enr_shards_has(&set, s)) {
        v[len++] = (uint8_t)(s >> 8);
        v[len++] = (uint8_t)s;
      }
  } else {
    memcpy(v + 2, set.bits, sizeof set.bits);
  }
  int rc = ld_enr_builder_set(b, key, v, len);
  if (rc == 0)
    ld_enr_builder_remove(b, other);
  return rc;
}

/* ---- signing -------------------------------------------------------------------------------- */

typedef struct sorted_pair {
  const char *key;
  const uint8_t *item; /* RLP-encoded value */
  size_t item_len;
} sorted_pair_t;

static int pair_cmp(const void *a, const void *b) {
  const char *ka = ((const sorted_pair_t *)a)->key, *kb = ((const sorted_pair_t *)b)->key;
  size_t la = strlen(ka), lb = strlen(kb);
  int c = memcmp(ka, kb, la < lb ? la : lb);
  return c != 0 ? c : (la > lb) - (la < lb);
}

/* Appends RLP [seq, k1, v1, …]'s payload (the items without the list header). */
static int put_content(ld_buf_t *out, uint64_t seq, const sorted_pair_t *pairs, size_t n) {
  int rc = ld_rlp_put_uint(out, seq);
  for (size_t i = 0; i < n && rc == 0; i++) {
    rc = ld_rlp_put_string(out, pairs[i].key, strlen(pairs[i].key));
    if (rc == 0)
      rc = ld_buf_append(out, pairs[i].item, pairs[i].item_len);
  }
  return rc;
}

/* Signs the content payload and wraps [signature, content…] into the record bytes. */
static int seal(const ld_buf_t *content, const ld_privkey_t *key, ld_enr_t *out) {
  ld_buf_t msg, rec;
  ld_buf_init(&msg);
  ld_buf_init(&rec);
  uint8_t sig[LD_ENR_SIG_LEN];
  int rc = ld_rlp_put_list_header(&msg, content->len);
  if (rc == 0)
    rc = ld_buf_append(&msg, content->data, content->len);
  if (rc == 0)
    rc = ld_secp256k1_sign_keccak(key->secret, msg.data, msg.len, sig);
  if (rc == 0)
    rc = ld_rlp_put_list_header(&rec, 2 + LD_ENR_SIG_LEN + content->len);
  if (rc == 0)
    rc = ld_rlp_put_string(&rec, sig, sizeof sig);
  if (rc == 0)
    rc = ld_buf_append(&rec, content->data, content->len);
  if (rc == 0)
    /* signed just now: the signature needs no check (which would page in libsecp256k1's 1 MiB
     * verification tables) */
    rc = rec.len > LD_ENR_MAX_SIZE ? LD_ERR_TOO_LARGE
                                   : ld_enr_decode_verified(out, rec.data, rec.len);
  ld_buf_clear(&msg);
  ld_buf_clear(&rec);
  return rc;
}

int ld_enr_builder_sign(const ld_enr_builder_t *b, const ld_privkey_t *key, ld_enr_t *out) {
  if (b == NULL || key == NULL || out == NULL)
    return LD_ERR_INVALID_ARG;
  if (key->type != LD_KEY_SECP256K1)
    return LD_ERR_UNSUPPORTED;
  uint8_t id_item[3], pub_item[1 + LD_SECP256K1_PUBLIC_LEN];
  id_item[0] = 0x82;
  memcpy(id_item + 1, "v4", 2);
  pub_item[0] = 0x80 + LD_SECP256K1_PUBLIC_LEN;
  memcpy(pub_item + 1, key->pub, LD_SECP256K1_PUBLIC_LEN);
  sorted_pair_t pairs[LD_ENR_BUILDER_MAX_PAIRS + 2] = {{"id", id_item, sizeof id_item},
                                                       {"secp256k1", pub_item, sizeof pub_item}};
  size_t n = 2;
  for (size_t i = 0; i < b->n; i++, n++)
    pairs[n] = (sorted_pair_t){b->pairs[i].key, b->pool + b->pairs[i].off, b->pairs[i].len};
  qsort(pairs, n, sizeof pairs[0], pair_cmp);
  ld_buf_t content;
  ld_buf_init(&content);
  int rc = put_content(&content, b->seq, pairs, n);
  if (rc == 0)
    rc = seal(&content, key, out);
  ld_buf_clear(&content);
  return rc;
}

/* ---- our node's record ---------------------------------------------------------------------- */

static bool all_zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != 0)
      return false;
  return true;
}

/* Matches /<ip_code>/<addr>/tcp/<port>[/p2p/…] with a non-wildcard address. */
static bool plain_tcp(const ld_multiaddr_t *ma, uint32_t ip_code, const uint8_t **ip,
                      uint16_t *port) {
  size_t off = 0;
  ld_multiaddr_component_t a, t, rest;
  if (ld_multiaddr_next(ma, &off, &a) != 1 || a.code != ip_code ||
      ld_multiaddr_next(ma, &off, &t) != 1 || t.code != LD_MA_TCP || all_zero(a.value, a.value_len))
    return false;
  if (ld_multiaddr_next(ma, &off, &rest) == 1 &&
      (rest.code != LD_MA_P2P || ld_multiaddr_next(ma, &off, &rest) == 1))
    return false;
  *ip = a.value;
  *port = (uint16_t)(t.value[0] << 8 | t.value[1]);
  return true;
}

/* nwaku's enrMultiaddrs: the addresses ip/tcp keys cannot express. */
static bool for_multiaddrs_key(const ld_multiaddr_t *ma) {
  size_t off = 0;
  ld_multiaddr_component_t c;
  while (ld_multiaddr_next(ma, &off, &c) == 1)
    if (c.code == LD_MA_DNS4 || c.code == LD_MA_DNS6 || c.code == LD_MA_WS || c.code == LD_MA_WSS)
      return true;
  return false;
}

static int set_transport(ld_enr_builder_t *b, const ld_enr_node_config_t *cfg) {
  bool have4 = false, have6 = false;
  int rc = 0;
  for (size_t i = 0; i < cfg->n_addrs && rc == 0; i++) {
    const uint8_t *ip;
    uint16_t port;
    if (!have4 && plain_tcp(&cfg->addrs[i], LD_MA_IP4, &ip, &port)) {
      have4 = true;
      rc = ld_enr_builder_set_ip4(b, ip);
      if (rc == 0)
        rc = ld_enr_builder_set_uint(b, "tcp", port);
    } else if (!have6 && plain_tcp(&cfg->addrs[i], LD_MA_IP6, &ip, &port)) {
      have6 = true;
      rc = ld_enr_builder_set_ip6(b, ip);
      if (rc == 0)
        rc = ld_enr_builder_set_uint(b, "tcp6", port);
    }
  }
  if (rc == 0 && cfg->udp_port != 0)
    rc = ld_enr_builder_set_uint(b, "udp", cfg->udp_port);
  return rc;
}

static int count_for_key(const ld_enr_node_config_t *cfg) {
  int n = 0;
  for (size_t i = 0; i < cfg->n_addrs; i++)
    n += for_multiaddrs_key(&cfg->addrs[i]);
  return n;
}

int ld_enr_build_node(ld_enr_t *out, const ld_privkey_t *key, const ld_enr_node_config_t *cfg) {
  if (out == NULL || key == NULL || cfg == NULL || (cfg->addrs == NULL && cfg->n_addrs > 0) ||
      (cfg->shards == NULL && cfg->n_shards > 0))
    return LD_ERR_INVALID_ARG;
  ld_enr_builder_t b;
  ld_enr_builder_init(&b, cfg->seq != 0 ? cfg->seq : 1);
  int rc = set_transport(&b, cfg);
  if (rc == 0 && cfg->waku2 != 0)
    rc = ld_enr_builder_set_waku2(&b, cfg->waku2);
  if (rc == 0 && cfg->has_cluster)
    rc = ld_enr_builder_set_shards(&b, cfg->cluster_id, cfg->shards, cfg->n_shards);
  for (int limit = count_for_key(cfg); rc == 0 && limit >= 0; limit--) {
    int mrc = set_multiaddrs(&b, cfg->addrs, cfg->n_addrs, for_multiaddrs_key, (size_t)limit);
    if (mrc == 0)
      mrc = ld_enr_builder_sign(&b, key, out);
    if (mrc != LD_ERR_TOO_LARGE && mrc != LD_ERR_LIMIT)
      return mrc;
    if (limit == 0)
      return LD_ERR_TOO_LARGE;
  }
  return rc;
}
