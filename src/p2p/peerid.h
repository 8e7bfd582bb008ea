/* libp2p peer IDs: the multihash of a PublicKey protobuf (identity multihash when the protobuf is
 * at most 42 bytes, sha2-256 otherwise), and their two text forms: base58btc (displayed) and
 * CIDv1 with the libp2p-key codec in base32 (parsed; also printable). */
#ifndef LD_P2P_PEERID_H
#define LD_P2P_PEERID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/key.h"

#define LD_PEERID_MAX 48      /* identity multihash of a ≤ 42-byte key: 2 + 42 */
#define LD_PEERID_TEXT_MAX 80 /* base58 or base32 CID text plus NUL */
/* Longest text ld_peerid_parse accepts, without the NUL (the base16 CID form is the longest). */
#define LD_PEERID_PARSE_MAX 128

typedef struct ld_peerid {
  size_t len;
  uint8_t bytes[LD_PEERID_MAX];
} ld_peerid_t;

int ld_peerid_from_pubkey(ld_peerid_t *id, const ld_pubkey_t *pub);

/* Validates and copies a binary peer ID: an identity multihash (whose content must be a decodable
 * PublicKey) or a sha2-256 multihash with a 32-byte digest. LD_ERR_BAD_PEER_ID otherwise.
 * Identity content must also be canonical (at most 42 bytes, equal to its re-encoding), so that
 * ld_peerid_matches holds for the key it carries. */
int ld_peerid_from_bytes(ld_peerid_t *id, const uint8_t *data, size_t len);

/* Parses text: base58btc multihash (starting with "1" or "Qm") or a multibase CIDv1 with codec
 * libp2p-key (0x72), at least base32 ("b…"). Accepted multibases: 'b'/'B' base32, 'z' base58btc,
 * 'f'/'F' base16; others, and text longer than LD_PEERID_PARSE_MAX, give LD_ERR_BAD_PEER_ID. */
int ld_peerid_parse(ld_peerid_t *id, const char *text);

/* Writes the base58btc text with a NUL into `out` (cap ≥ LD_PEERID_TEXT_MAX). Returns the text
 * length or LD_ERR_LIMIT when `cap` is too small. */
int ld_peerid_to_text(const ld_peerid_t *id, char *out, size_t cap);

/* Writes the CIDv1 base32 text ("bafz…") with a NUL. Returns the text length or an error. */
int ld_peerid_to_cid_text(const ld_peerid_t *id, char *out, size_t cap);

/* Extracts the public key of an identity-multihash peer ID; LD_ERR_NOT_FOUND for sha2-256 IDs. */
int ld_peerid_pubkey(const ld_peerid_t *id, ld_pubkey_t *pub);

/* True when the peer ID was derived from `pub`. */
bool ld_peerid_matches(const ld_peerid_t *id, const ld_pubkey_t *pub);

bool ld_peerid_equal(const ld_peerid_t *a, const ld_peerid_t *b);

#endif
