#include "p2p/peerid.h"

#include <string.h>

#include "base/base32.h"
#include "base/base58.h"
#include "base/cursor.h"
#include "base/error.h"
#include "base/hex.h"
#include "base/varint.h"

#define MH_IDENTITY 0x00
#define MH_SHA2_256 0x12
#define CID_VERSION 0x01
#define CODEC_LIBP2P_KEY 0x72
#define IDENTITY_KEY_MAX 42 /* longest key protobuf inlined in an identity multihash */

int ld_peerid_from_pubkey(ld_peerid_t *id, const ld_pubkey_t *pub) {
  if (id == NULL || pub == NULL || pub->proto_len > LD_PUBKEY_PROTO_MAX)
    return LD_ERR_INVALID_ARG;
  if (pub->proto_len <= IDENTITY_KEY_MAX) {
    id->bytes[0] = MH_IDENTITY;
    id->bytes[1] = (uint8_t)pub->proto_len;
    memcpy(id->bytes + 2, pub->proto, pub->proto_len);
    id->len = 2 + pub->proto_len;
    return 0;
  }
  id->bytes[0] = MH_SHA2_256;
  id->bytes[1] = LD_SHA256_LEN;
  ld_sha256(pub->proto, pub->proto_len, id->bytes + 2);
  id->len = 2 + LD_SHA256_LEN;
  return 0;
}

/* The identity content must be the canonical protobuf of a key we can decode. */
static int check_identity(const uint8_t *content, size_t len) {
  ld_pubkey_t pub;
  if (len > IDENTITY_KEY_MAX || ld_pubkey_decode(&pub, content, len) != 0)
    return LD_ERR_BAD_PEER_ID;
  if (pub.proto_len != len || memcmp(pub.proto, content, len) != 0)
    return LD_ERR_BAD_PEER_ID;
  return 0;
}

int ld_peerid_from_bytes(ld_peerid_t *id, const uint8_t *data, size_t len) {
  if (id == NULL || (data == NULL && len > 0))
    return LD_ERR_INVALID_ARG;
  if (len > LD_PEERID_MAX)
    return LD_ERR_BAD_PEER_ID;
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  uint64_t code, dlen;
  if (ld_cursor_uvarint(&c, &code) != 0 || ld_cursor_uvarint(&c, &dlen) != 0)
    return LD_ERR_BAD_PEER_ID;
  if (dlen != ld_cursor_remaining(&c))
    return LD_ERR_BAD_PEER_ID;
  if (code == MH_IDENTITY) {
    if (check_identity(ld_cursor_ptr(&c), (size_t)dlen) != 0)
      return LD_ERR_BAD_PEER_ID;
  } else if (code != MH_SHA2_256 || dlen != LD_SHA256_LEN) {
    return LD_ERR_BAD_PEER_ID;
  }
  memcpy(id->bytes, data, len);
  id->len = len;
  return 0;
}

/* CIDv1 bytes: version 1, codec libp2p-key, then the multihash. */
static int from_cid(ld_peerid_t *id, const uint8_t *cid, size_t len) {
  ld_cursor_t c;
  ld_cursor_init(&c, cid, len);
  uint64_t version, codec;
  if (ld_cursor_uvarint(&c, &version) != 0 || ld_cursor_uvarint(&c, &codec) != 0)
    return LD_ERR_BAD_PEER_ID;
  if (version != CID_VERSION || codec != CODEC_LIBP2P_KEY)
    return LD_ERR_BAD_PEER_ID;
  return ld_peerid_from_bytes(id, ld_cursor_ptr(&c), ld_cursor_remaining(&c));
}

/* Multibase CID text: 'b'/'B' base32, 'z' base58btc, 'f'/'F' base16. */
static int parse_cid_text(ld_peerid_t *id, const char *text, size_t len) {
  uint8_t cid[LD_PEERID_MAX + 8];
  size_t n = 0;
  int rc;
  switch (text[0]) {
  case 'b':
  case 'B':
    rc = ld_base32_decode(text + 1, len - 1, cid, sizeof cid, &n);
    break;
  case 'z':
    rc = ld_base58_decode(text + 1, len - 1, cid, sizeof cid, &n);
    break;
  case 'f':
  case 'F':
    rc = len > 2 && text[1] == '0' && (text[2] == 'x' || text[2] == 'X')
             ? LD_ERR_BAD_ENCODING
             : ld_hex_decode(text + 1, len - 1, cid, sizeof cid, &n);
    break;
  default:
    return LD_ERR_BAD_PEER_ID;
  }
  if (rc != 0)
    return LD_ERR_BAD_PEER_ID;
  return from_cid(id, cid, n);
}

int ld_peerid_parse(ld_peerid_t *id, const char *text) {
  if (id == NULL || text == NULL)
    return LD_ERR_INVALID_ARG;
  size_t len = strnlen(text, LD_PEERID_PARSE_MAX + 1);
  if (len == 0 || len > LD_PEERID_PARSE_MAX)
    return LD_ERR_BAD_PEER_ID;
  if (text[0] != '1' && !(len >= 2 && text[0] == 'Q' && text[1] == 'm'))
    return parse_cid_text(id, text, len);
  uint8_t mh[LD_PEERID_MAX];
  size_t n = 0;
  if (ld_base58_decode(text, len, mh, sizeof mh, &n) != 0)
    return LD_ERR_BAD_PEER_ID;
  return ld_peerid_from_bytes(id, mh, n);
}

int ld_peerid_to_text(const ld_peerid_t *id, char *out, size_t cap) {
  if (id == NULL || out == NULL || id->len > LD_PEERID_MAX)
    return LD_ERR_INVALID_ARG;
  int rc = ld_base58_encode(id->bytes, id->len, out, cap);
  return rc < 0 ? LD_ERR_LIMIT : rc;
}

int ld_peerid_to_cid_text(const ld_peerid_t *id, char *out, size_t cap) {
  if (id == NULL || out == NULL || id->len > LD_PEERID_MAX)
    return LD_ERR_INVALID_ARG;
  if (cap < 2)
    return LD_ERR_LIMIT;
  uint8_t cid[2 + LD_PEERID_MAX] = {CID_VERSION, CODEC_LIBP2P_KEY};
  memcpy(cid + 2, id->bytes, id->len);
  out[0] = 'b';
  int rc = ld_base32_encode(cid, 2 + id->len, out + 1, cap - 1);
  if (rc < 0) {
    out[0] = '\0';
    return LD_ERR_LIMIT;
  }
  return rc + 1;
}

int ld_peerid_pubkey(const ld_peerid_t *id, ld_pubkey_t *pub) {
  if (id == NULL || pub == NULL || id->len < 2 || id->len > LD_PEERID_MAX)
    return LD_ERR_INVALID_ARG;
  if (id->bytes[0] != MH_IDENTITY)
    return LD_ERR_NOT_FOUND;
  if ((size_t)id->bytes[1] != id->len - 2)
    return LD_ERR_BAD_PEER_ID;
  int rc = ld_pubkey_decode(pub, id->bytes + 2, id->len - 2);
  return rc == 0 ? 0 : LD_ERR_BAD_PEER_ID;
}

bool ld_peerid_matches(const ld_peerid_t *id, const ld_pubkey_t *pub) {
  ld_peerid_t derived;
  if (id == NULL || pub == NULL || ld_peerid_from_pubkey(&derived, pub) != 0)
    return false;
  return ld_peerid_equal(id, &derived);
}

bool ld_peerid_equal(const ld_peerid_t *a, const ld_peerid_t *b) {
  return a->len == b->len && a->len <= LD_PEERID_MAX && memcmp(a->bytes, b->bytes, a->len) == 0;
}
