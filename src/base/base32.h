/* Base32 text encoding with the RFC 4648 §6 alphabet, written lowercase and without padding:
 * the multibase 'b' form used for CIDs and ENR-style identifiers.
 *
 * Pure functions: no allocation, no global state, safe from any thread. */
#ifndef LD_BASE_BASE32_H
#define LD_BASE_BASE32_H

#include <stddef.h>
#include <stdint.h>

/* Text length (without the NUL) for `len` input bytes. */
#define LD_BASE32_ENCODED_LEN(len) (((len)*8 + 4) / 5)

/* Writes the unpadded lowercase base32 text of `in[0..len)` and a NUL to `out` (room for `cap`
 * chars). Returns the text length or LD_ERR_LIMIT. */
int ld_base32_encode(const uint8_t *in, size_t len, char *out, size_t cap);

/* Decodes unpadded base32 text of either case into `out` (room for `cap` bytes) and stores the
 * byte count in *outlen. Returns 0, or LD_ERR_BAD_ENCODING (a char outside the alphabet, '='
 * padding, an impossible length, or nonzero trailing bits), LD_ERR_LIMIT (cap too small). */
int ld_base32_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen);

#endif
