/* The discv5 routing table (devp2p discv5-theory.md "Node Table"): k-buckets by logarithmic
 * distance from our node ID, a replacement cache per bucket, IP limits, and nwaku's
 * bits-per-hop.
 *
 * There is one bucket per distance 1..256 (256 buckets of LD_DISCV5_BUCKET_SIZE = 16 nodes),
 * ordered from the most recently seen node (head) to the least (tail); a new node enters at the
 * tail, and a node that answers one of our requests moves to the head and is marked `seen`.
 * When a bucket is full a newcomer goes to the bucket's replacement cache (the latest
 * LD_DISCV5_REPLACEMENTS); when a member fails, the latest replacement takes its place.
 *
 * bits-per-hop (nwaku's --discv5-bits-per-hop, default 1; nim-eth's RoutingTable): nim-eth
 * starts from one bucket and splits a full bucket when it holds our own ID, or when the number
 * of prefix bits its range shares is not a multiple of bits-per-hop. With 1, only the bucket
 * holding our ID splits, which gives exactly one bucket per distance (this table). With b > 1,
 * the bucket of distance d ends up split into 2^x sub-buckets of 16, x being what takes the
 * range's prefix length (257 − d) up to the next multiple of b (capped at 256): more nodes far
 * from us, fewer hops per lookup. Here the sub-buckets exist from the start instead of being
 * split when full, which holds at least as many nodes at every moment.
 *
 * IP limits (nim-eth's TableIpLimits, nwaku's --discv5-bucket-ip-limit 2 and
 * --discv5-table-ip-limit 10): at most bucket_ip_limit entries of one IP per (sub-)bucket and
 * table_ip_limit in the whole table, members and replacements counted alike, so a replacement
 * cache cannot fill with nodes that could never enter. As in nim-eth and go-ethereum, only
 * public addresses count: loopback, private, link-local and shared (100.64/10) addresses are
 * exempt.
 *
 * Memory: at most max_nodes entries (members and replacements) of sizeof(ld_discv5_node_t)
 * (~430 bytes) each, plus the ID, record and IP indexes (the record index keeps a copy of each
 * record's bytes, ≤ 300); ld_discv5_table_add refuses more with
 * LD_ERR_LIMIT. With bits-per-hop 1 the buckets alone hold at most 256 × (16 + 8) = 6,144.
 * Not thread-safe: one thread (the engine's). */
#ifndef LD_WAKU_DISCOVERY_DISCV5_TABLE_H
#define LD_WAKU_DISCOVERY_DISCV5_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "waku/discovery/discv5_packet.h"
#include "waku/enr/enr.h"

#define LD_DISCV5_BUCKET_SIZE 16
#define LD_DISCV5_REPLACEMENTS 8
#define LD_DISCV5_BUCKETS 256
#define LD_DISCV5_BITS_PER_HOP_MAX 8
#define LD_DISCV5_DEFAULT_BUCKET_IP_LIMIT 2
#define LD_DISCV5_DEFAULT_TABLE_IP_LIMIT 10
#define LD_DISCV5_DEFAULT_TABLE_MAX_NODES 6144

/* A UDP endpoint. */
typedef struct ld_discv5_addr {
  uint8_t ip_len; /* 4 or 16 */
  uint8_t ip[16];
  uint16_t port;
} ld_discv5_addr_t;

/* The discv5 endpoint of a record: `ip` with `udp`, else `ip6` with `udp6` (or `udp`).
 * LD_ERR_NOT_FOUND when the record has none. */
int ld_discv5_addr_from_enr(const ld_enr_t *enr, ld_discv5_addr_t *out);

bool ld_discv5_addr_equal(const ld_discv5_addr_t *a, const ld_discv5_addr_t *b);

/* Address classes: loopback (127/8, ::1), site-local (10/8, 172.16/12, 192.168/16, 100.64/10,
 * fc00::/7), link-local (169.254/16, fe80::/10); public is none of these nor unspecified or
 * multicast. */
bool ld_discv5_addr_is_loopback(const ld_discv5_addr_t *a);
bool ld_discv5_addr_is_site_local(const ld_discv5_addr_t *a);
bool ld_discv5_addr_is_public(const ld_discv5_addr_t *a);

/* "1.2.3.4:30303" or "[::1]:9000" into out (64 bytes suffice); returns out. */
char *ld_discv5_addr_text(const ld_discv5_addr_t *a, char *out, size_t cap);

/* logdistance(a, b): the bit length of a XOR b, 0..256. */
int ld_discv5_log_distance(const uint8_t a[LD_DISCV5_NODE_ID_LEN],
                           const uint8_t b[LD_DISCV5_NODE_ID_LEN]);

/* -1, 0 or 1 as a XOR target is below, equal to or above b XOR target. */
int ld_discv5_distance_cmp(const uint8_t target[LD_DISCV5_NODE_ID_LEN],
                           const uint8_t a[LD_DISCV5_NODE_ID_LEN],
                           const uint8_t b[LD_DISCV5_NODE_ID_LEN]);

/* A node as the table keeps it: the verified record and what was read from it once. */
typedef struct ld_discv5_node {
  uint8_t id[LD_DISCV5_NODE_ID_LEN];
  uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN];
  uint64_t seq;
  ld_discv5_addr_t addr;
  bool seen;      /* answered one of our requests */
  bool bootstrap; /* a bootstrap node: never dropped for failing */
  uint16_t enr_len;
  uint8_t enr[LD_ENR_MAX_SIZE];
} ld_discv5_node_t;

/* Fills `n` from a verified record (seen and bootstrap false). LD_ERR_NOT_FOUND when it has no
 * discv5 endpoint, ld_enr_node_id's errors otherwise. */
int ld_discv5_node_from_enr(ld_discv5_node_t *n, const ld_enr_t *enr);

typedef struct ld_discv5_table_config {
  int bits_per_hop;         /* 1..LD_DISCV5_BITS_PER_HOP_MAX */
  unsigned bucket_ip_limit; /* per (sub-)bucket, members and replacements */
  unsigned table_ip_limit;  /* whole table */
  size_t max_nodes;         /* members and replacements */
} ld_discv5_table_config_t;

/* Defaults: bits-per-hop 1, IP limits 2 and 10, LD_DISCV5_DEFAULT_TABLE_MAX_NODES. */
void ld_discv5_table_config_default(ld_discv5_table_config_t *cfg);

typedef struct ld_discv5_table ld_discv5_table_t;

/* A table around `local_id`. NULL for an invalid configuration (bits_per_hop out of range,
 * max_nodes 0) or out of memory. */
ld_discv5_table_t *ld_discv5_table_new(const uint8_t local_id[LD_DISCV5_NODE_ID_LEN],
                                       const ld_discv5_table_config_t *cfg);
void ld_discv5_table_free(ld_discv5_table_t *t);

typedef enum ld_discv5_add_result {
  LD_DISCV5_ADDED = 0,   /* a new bucket member */
  LD_DISCV5_UPDATED,     /* a member or replacement, now with a newer record */
  LD_DISCV5_EXISTING,    /* already there with this record or a newer one */
  LD_DISCV5_REPLACEMENT, /* the bucket is full: kept in its replacement cache */
  LD_DISCV5_IP_LIMIT,    /* refused: its IP has reached a limit */
  LD_DISCV5_LOCAL,       /* refused: our own ID */
} ld_discv5_add_result_t;

/* Adds or updates a node (copied). Returns an ld_discv5_add_result_t (≥ 0), or LD_ERR_LIMIT
 * (max_nodes reached), LD_ERR_NOMEM. A record with a higher seq replaces the stored one (its
 * `seen` is kept); a changed IP is checked against the limits first. */
int ld_discv5_table_add(ld_discv5_table_t *t, const ld_discv5_node_t *n);

/* The member with `id` (not a replacement), or NULL. Valid until the table changes. */
ld_discv5_node_t *ld_discv5_table_get(ld_discv5_table_t *t,
                                      const uint8_t id[LD_DISCV5_NODE_ID_LEN]);

/* The member or replacement whose record is exactly raw[0..len), or NULL: a record already
 * verified, which NODES answers repeat all the time. Valid until the table changes. */
const ld_discv5_node_t *ld_discv5_table_find_record(const ld_discv5_table_t *t, const uint8_t *raw,
                                                    size_t len);

/* Marks a member as having answered: seen, moved to the head of its bucket. No-op otherwise. */
void ld_discv5_table_set_seen(ld_discv5_table_t *t, const uint8_t id[LD_DISCV5_NODE_ID_LEN]);

/* A member failed to answer: removes it and promotes the bucket's latest replacement (to the
 * tail). Bootstrap members stay. Returns true when the node was removed. */
bool ld_discv5_table_replace(ld_discv5_table_t *t, const uint8_t id[LD_DISCV5_NODE_ID_LEN]);

/* Removes a member or replacement outright. LD_ERR_NOT_FOUND when absent. */
int ld_discv5_table_remove(ld_discv5_table_t *t, const uint8_t id[LD_DISCV5_NODE_ID_LEN]);

/* Up to k members closest to `target`, closest first, into out[] (pointers valid until the
 * table changes); only seen ones when `seen_only`. Returns how many. */
size_t ld_discv5_table_neighbours(ld_discv5_table_t *t, const uint8_t target[LD_DISCV5_NODE_ID_LEN],
                                  size_t k, bool seen_only, ld_discv5_node_t **out);

/* Up to k members at the given distances (1..256; others are skipped, duplicates count once),
 * distance by distance in the order given, into out[]; only seen ones when `seen_only`. */
size_t ld_discv5_table_at_distances(ld_discv5_table_t *t, const uint16_t *distances, size_t n,
                                    size_t k, bool seen_only, ld_discv5_node_t **out);

/* The least recently seen member of a non-empty (sub-)bucket picked with `rnd` (uniform among
 * the non-empty ones), or NULL when the table is empty: the next node to revalidate. */
ld_discv5_node_t *ld_discv5_table_revalidation_pick(ld_discv5_table_t *t, uint64_t rnd);

/* Up to `max` members picked with the random words of `rnd` (an xorshift state the table
 * advances), each at most once, into out[]. */
size_t ld_discv5_table_random(ld_discv5_table_t *t, uint64_t *rnd, ld_discv5_node_t **out,
                              size_t max);

/* Members, and replacements. */
size_t ld_discv5_table_size(const ld_discv5_table_t *t);
size_t ld_discv5_table_replacements(const ld_discv5_table_t *t);

/* Visits every member, bucket by bucket from distance 1, head first; stop early by returning
 * false. The table must not change during the walk. */
void ld_discv5_table_foreach(ld_discv5_table_t *t, bool (*fn)(ld_discv5_node_t *n, void *ud),
                             void *ud);

#endif
