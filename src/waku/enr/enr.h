/* Ethereum Node Records (EIP-778) with the "v4" identity scheme, and the Waku keys of
 * 31/WAKU2-ENR: the `waku2` capability bitfield, `multiaddrs`, and the relay shards `rs`/`rsv`.
 *
 * A record is RLP [signature, seq, k1, v1, k2, v2, …] of at most LD_ENR_MAX_SIZE bytes with keys
 * sorted and unique; the signature is ECDSA secp256k1 over keccak256(RLP [seq, k1, v1, …]) as
 * 64 bytes r ‖ s, checked against the 33-byte compressed key under `secp256k1`. The text form is
 * "enr:" + base64url without padding.
 *
 * ld_enr_t is a plain value (no heap memory): it keeps the record's bytes and an index of its
 * pairs, so it can be copied with memcpy or assignment. Every ld_enr_t that a function here
 * fills has been fully validated, its signature included. Pure functions; any thread. */
#ifndef LD_WAKU_ENR_ENR_H
#define LD_WAKU_ENR_ENR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base64.h"
#include "crypto/crypto.h"
#include "crypto/keccak.h"
#include "p2p/key.h"
#include "p2p/multiaddr.h"
#include "p2p/peerid.h"

/* EIP-778: a record is at most 300 bytes. */
#define LD_ENR_MAX_SIZE 300
#define LD_ENR_SIG_LEN 64
#define LD_ENR_NODE_ID_LEN 32
/* Key/value pairs a record can hold: after the list header, the signature and the sequence
 * number, 230 bytes remain, and a pair takes at least 2. */
#define LD_ENR_MAX_PAIRS 115
/* Longest text form: "enr:" + base64url of 300 bytes (+ NUL). */
#define LD_ENR_TEXT_MAX (4 + LD_BASE64URL_ENCODED_LEN(LD_ENR_MAX_SIZE) + 1)
/* Longest text accepted by ld_enr_parse_text (padding tolerated). */
#define LD_ENR_TEXT_PARSE_MAX (4 + LD_BASE64_ENCODED_LEN(LD_ENR_MAX_SIZE))
/* Entries read from a `multiaddrs` value (each takes at least 3 bytes). */
#define LD_ENR_MAX_MULTIADDRS 100
/* Dialable addresses of a record: the multiaddrs entries plus ip/tcp and ip6/tcp6. */
#define LD_ENR_MAX_ADDRS (LD_ENR_MAX_MULTIADDRS + 2)

/* `waku2` capability bits (bit 0 = least significant). */
#define LD_ENR_RELAY 0x01u
#define LD_ENR_STORE 0x02u
#define LD_ENR_FILTER 0x04u
#define LD_ENR_LIGHTPUSH 0x08u
#define LD_ENR_SYNC 0x10u
#define LD_ENR_MIX 0x20u

/* Shard indices are 0..1023 (RELAY-SHARDING); `rs` uses an index list below this many shards
 * and the 128-byte `rsv` bit vector from it on (nwaku's ShardingIndicesListMaxLength). */
#define LD_ENR_MAX_SHARD 1023
#define LD_ENR_RS_MAX_LIST 64
#define LD_ENR_RSV_LEN 130

typedef struct ld_enr_pair {
  uint16_t key_off, key_len;   /* key string bytes in raw[] */
  uint16_t item_off, item_len; /* value as a whole RLP item */
  uint16_t val_off, val_len;   /* value payload (string bytes, or a list's items) */
  bool is_list;
} ld_enr_pair_t;

typedef struct ld_enr {
  size_t len;
  uint8_t raw[LD_ENR_MAX_SIZE]; /* the record as received or signed */
  uint64_t seq;
  uint8_t signature[LD_ENR_SIG_LEN];
  uint8_t pubkey[LD_SECP256K1_PUBLIC_LEN]; /* value of `secp256k1` */
  size_t n_pairs;
  ld_enr_pair_t pairs[LD_ENR_MAX_PAIRS]; /* in key order, id and secp256k1 included */
} ld_enr_t;

/* ---- decoding ------------------------------------------------------------------------------- */

/* Decodes and verifies a binary record. `data` may be enr->raw itself. Errors:
 * LD_ERR_TOO_LARGE (more than LD_ENR_MAX_SIZE bytes), LD_ERR_TRUNCATED (the outer list runs
 * past the input), LD_ERR_MALFORMED (not one canonical RLP list of [signature, seq, key,
 * value, …] with string keys and a seq of at most 8 bytes, trailing bytes, keys not strictly
 * ascending), LD_ERR_LIMIT (more than LD_ENR_MAX_PAIRS pairs), LD_ERR_UNSUPPORTED (`id` absent
 * or not "v4"), LD_ERR_BAD_KEY (`secp256k1` absent, not 33 bytes, or not a curve point),
 * LD_ERR_BAD_SIGNATURE (not 64 bytes, or not valid). `enr` is overwritten, and meaningless on
 * failure. */
int ld_enr_decode(ld_enr_t *enr, const uint8_t *data, size_t len);

/* ld_enr_decode without the signature check, for bytes that ld_enr_decode accepted before,
 * byte for byte (a cache of verified records: discv5 receives the same records over and over,
 * and the check costs a secp256k1 verification). Never for bytes of unknown origin. */
int ld_enr_decode_verified(ld_enr_t *enr, const uint8_t *data, size_t len);

/* Decodes the text form: "enr:" followed by base64url (unpadded, or correctly padded). Text
 * longer than LD_ENR_TEXT_PARSE_MAX or not in that form is LD_ERR_BAD_ENCODING; then as
 * ld_enr_decode. `text` is NUL-terminated. */
int ld_enr_parse_text(ld_enr_t *enr, const char *text);

/* Writes "enr:…" and a NUL into `out` (cap ≥ LD_ENR_TEXT_MAX suffices). Returns the text length
 * or LD_ERR_LIMIT. */
int ld_enr_to_text(const ld_enr_t *enr, char *out, size_t cap);

/* ---- generic access ------------------------------------------------------------------------- */

/* The value of `key` (NUL-terminated) when it is an RLP string: returns its bytes (pointing into
 * enr->raw) and stores the length in *len; NULL when the key is absent or its value is a list. */
const uint8_t *ld_enr_get(const ld_enr_t *enr, const char *key, size_t *len);

/* The value of `key` as a whole RLP item (string or list); NULL when absent. */
const uint8_t *ld_enr_get_item(const ld_enr_t *enr, const char *key, size_t *len);

/* ---- standard keys -------------------------------------------------------------------------- */

/* keccak256 of the uncompressed public key (EIP-778 node ID). */
int ld_enr_node_id(const ld_enr_t *enr, uint8_t out[LD_ENR_NODE_ID_LEN]);

/* The libp2p peer ID of the record's secp256k1 key ("16Uiu2…"). */
int ld_enr_peer_id(const ld_enr_t *enr, ld_peerid_t *id);

/* `ip` (4 bytes) and `ip6` (16 bytes). LD_ERR_NOT_FOUND when absent or of another length. */
int ld_enr_ip4(const ld_enr_t *enr, uint8_t out[4]);
int ld_enr_ip6(const ld_enr_t *enr, uint8_t out[16]);

/* A port key ("tcp", "udp", "tcp6", "udp6"): a big-endian integer of 1 or 2 bytes, nonzero.
 * LD_ERR_NOT_FOUND when absent or not such an integer. */
int ld_enr_port(const ld_enr_t *enr, const char *key, uint16_t *port);

/* ---- Waku keys ------------------------------------------------------------------------------ */

/* The `waku2` bitfield. LD_ERR_NOT_FOUND when absent or not exactly one byte (such records
 * announce no capability, as nwaku reads them). */
int ld_enr_waku2(const ld_enr_t *enr, uint8_t *caps);

/* The protocol IDs of the capabilities in `caps` (relay, store, filter, lightpush, sync, mix
 * in bit order) into out[0..max); returns how many bits are set among them. Static strings. */
size_t ld_enr_waku2_codecs(uint8_t caps, const char **out, size_t max);

/* Decodes the `multiaddrs` key into out[0..max) and returns how many entries were decoded (they
 * may be more than max; only max are written), 0 when the key is absent. Entries that are not a
 * valid multiaddr are skipped and counted in *skipped (may be NULL); a zero length or an entry
 * that runs past the value makes the whole value invalid: LD_ERR_MALFORMED (nwaku). */
int ld_enr_multiaddrs(const ld_enr_t *enr, ld_multiaddr_t *out, size_t max, size_t *skipped);

/* Relay shards from `rs`/`rsv`: a cluster and a set of shards 0..1023. Plain value. */
typedef struct ld_enr_shards {
  uint16_t cluster_id;
  uint16_t n_shards;                        /* bits set in `bits` */
  uint8_t bits[(LD_ENR_MAX_SHARD + 1) / 8]; /* shard s: bit s%8 of byte s/8 */
} ld_enr_shards_t;

/* Fills `out` from `rs` (uint16 cluster ‖ u8 count ‖ count × uint16 shard, length exactly
 * 3 + 2·count) or, when `rs` is absent or invalid, from `rsv` (uint16 cluster ‖ 128-byte vector,
 * shard s in byte s/8 at bit s%8 from the least significant bit, as nwaku and go-waku). Shards
 * above 1023 in `rs` are dropped. LD_ERR_NOT_FOUND when neither key gives a valid value. */
int ld_enr_shards(const ld_enr_t *enr, ld_enr_shards_t *out);

bool ld_enr_shards_has(const ld_enr_shards_t *s, uint16_t shard);
/* Adds a shard; LD_ERR_INVALID_ARG above LD_ENR_MAX_SHARD. */
int ld_enr_shards_add(ld_enr_shards_t *s, uint16_t shard);

/* nwaku's isClusterMismatched: true only when the record carries shards of another cluster. */
bool ld_enr_cluster_mismatch(const ld_enr_t *enr, uint16_t cluster_id);

/* The addresses to dial the node at, deduplicated, in this order: /ip4/<ip>/tcp/<tcp>,
 * /ip6/<ip6>/tcp/<tcp6, else tcp>, then the `multiaddrs` entries (each without /p2p; an invalid
 * `multiaddrs` value contributes nothing). `udp` is discovery, not a transport, and is left
 * out. Writes up to `max` and returns how many there are. */
size_t ld_enr_dial_addrs(const ld_enr_t *enr, ld_multiaddr_t *out, size_t max);

/* ---- building and signing ------------------------------------------------------------------- */

/* Pairs to sign, in any order; `id` = "v4" and `secp256k1` are added when signing. Caller
 * storage, no heap: init, set, sign. Setting a key again replaces its value. */
#define LD_ENR_BUILDER_MAX_PAIRS 24
#define LD_ENR_KEY_MAX 32

typedef struct ld_enr_builder {
  uint64_t seq;
  size_t n;
  struct {
    char key[LD_ENR_KEY_MAX + 1];
    uint16_t off, len; /* RLP-encoded value in pool[] */
  } pairs[LD_ENR_BUILDER_MAX_PAIRS];
  size_t pool_len;
  uint8_t pool[2 * LD_ENR_MAX_SIZE];
} ld_enr_builder_t;

void ld_enr_builder_init(ld_enr_builder_t *b, uint64_t seq);

/* Sets `key` to the string `value` (may be NULL when len is 0). LD_ERR_INVALID_ARG for an empty
 * key, one longer than LD_ENR_KEY_MAX, or "id"/"secp256k1"; LD_ERR_LIMIT when the builder is full
 * (pairs or bytes). A failed set leaves the builder unchanged. */
int ld_enr_builder_set(ld_enr_builder_t *b, const char *key, const void *value, size_t len);

/* Sets `key` to a minimal big-endian integer (ports: "tcp", "udp", …). */
int ld_enr_builder_set_uint(ld_enr_builder_t *b, const char *key, uint64_t v);

/* Removes `key`; LD_ERR_NOT_FOUND when it is not set. */
int ld_enr_builder_remove(ld_enr_builder_t *b, const char *key);

/* `ip`/`ip6` from 4 or 16 bytes. */
int ld_enr_builder_set_ip4(ld_enr_builder_t *b, const uint8_t ip[4]);
int ld_enr_builder_set_ip6(ld_enr_builder_t *b, const uint8_t ip[16]);

int ld_enr_builder_set_waku2(ld_enr_builder_t *b, uint8_t caps);

/* `multiaddrs` from n addresses: each without its /p2p component, duplicates dropped, as
 * uint16_be(len) ‖ bytes. n = 0 removes the key. LD_ERR_LIMIT when the value alone exceeds
 * LD_ENR_MAX_SIZE. */
int ld_enr_builder_set_multiaddrs(ld_enr_builder_t *b, const ld_multiaddr_t *addrs, size_t n);

/* `rs` (fewer than LD_ENR_RS_MAX_LIST distinct shards) or `rsv` (from that many on) for the
 * cluster and shards (duplicates merged); the other key is removed. LD_ERR_INVALID_ARG for a
 * shard above LD_ENR_MAX_SHARD. */
int ld_enr_builder_set_shards(ld_enr_builder_t *b, uint16_t cluster_id, const uint16_t *shards,
                              size_t n);

/* Signs the pairs with `key` (a secp256k1 key; LD_ERR_UNSUPPORTED for other types) and stores
 * the verified record in `out`. LD_ERR_TOO_LARGE when the record would exceed
 * LD_ENR_MAX_SIZE. Signatures are deterministic (RFC 6979). */
int ld_enr_builder_sign(const ld_enr_builder_t *b, const ld_privkey_t *key, ld_enr_t *out);

/* ---- our node's record ---------------------------------------------------------------------- */

typedef struct ld_enr_node_config {
  uint64_t seq; /* 0: 1 */
  /* Announced addresses. The first /ip4/<a>/tcp/<p> with a non-wildcard address gives `ip` and
   * `tcp`, the first such /ip6 one `ip6` and `tcp6`; addresses with dns4, dns6, ws or wss go to
   * `multiaddrs` (without /p2p, duplicates dropped), as nwaku's enrMultiaddrs; others are not
   * representable and left out. */
  const ld_multiaddr_t *addrs;
  size_t n_addrs;
  uint16_t udp_port; /* discv5 port for `udp`; 0: none */
  uint8_t waku2;     /* capability bits; 0: no `waku2` key */
  bool has_cluster;  /* write `rs`/`rsv` for cluster_id and shards (possibly none) */
  uint16_t cluster_id;
  const uint16_t *shards;
  size_t n_shards;
} ld_enr_node_config_t;

/* Builds and signs the record a node announces (for discv5, peer exchange and the REST
 * /debug/v1/info "enrUri"). When the record would exceed LD_ENR_MAX_SIZE, `multiaddrs` entries
 * are dropped from the end until it fits (nwaku). Errors: LD_ERR_INVALID_ARG (a shard above
 * 1023), LD_ERR_UNSUPPORTED (not a secp256k1 key), LD_ERR_TOO_LARGE (does not fit even without
 * multiaddrs). */
int ld_enr_build_node(ld_enr_t *out, const ld_privkey_t *key, const ld_enr_node_config_t *cfg);

#endif
