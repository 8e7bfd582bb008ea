/* Unsigned varints in the two dialects libp2p uses.
 *
 * Multiformats unsigned-varint (length prefixes, multiaddr codes, multihash headers): at most
 * 9 bytes (63 bits) and minimally encoded. Protobuf varints: at most 10 bytes (64 bits), and
 * non-minimal forms are accepted. */
#ifndef LD_BASE_VARINT_H
#define LD_BASE_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define LD_UVARINT_MAX_LEN 9
#define LD_PBVARINT_MAX_LEN 10

/* Writes `v` to `out` (room for LD_PBVARINT_MAX_LEN bytes) and returns the number of bytes
 * written. Values above 2^63-1 produce 10 bytes, valid only as a protobuf varint. */
size_t ld_varint_encode(uint64_t v, uint8_t *out);

/* Number of bytes ld_varint_encode writes for `v`. */
size_t ld_varint_len(uint64_t v);

/* Decodes a multiformats unsigned varint from `in[0..len)`. On success stores the value and the
 * number of bytes used and returns 0. Errors: LD_ERR_TRUNCATED (need more bytes),
 * LD_ERR_VARINT_NONMINIMAL, LD_ERR_VARINT_TOO_LONG. */
int ld_uvarint_decode(const uint8_t *in, size_t len, uint64_t *value, size_t *used);

/* Decodes a protobuf varint (up to 10 bytes, non-minimal accepted). Errors: LD_ERR_TRUNCATED,
 * LD_ERR_VARINT_TOO_LONG (more than 10 bytes or more than 64 bits). */
int ld_pbvarint_decode(const uint8_t *in, size_t len, uint64_t *value, size_t *used);

#endif
