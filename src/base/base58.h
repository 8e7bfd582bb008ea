/* Base58btc text encoding (Bitcoin alphabet), the multibase 'z' form used for peer IDs.
 *
 * Each leading zero byte maps to a leading '1' and back. The conversion is quadratic in the
 * length, so text longer than LD_BASE58_MAX_INPUT is refused. Pure functions: no allocation,
 * no global state, safe from any thread. */
#ifndef LD_BASE_BASE58_H
#define LD_BASE_BASE58_H

#include <stddef.h>
#include <stdint.h>

/* Longest text the decoder accepts, and longest input (in bytes) the encoder accepts. */
#define LD_BASE58_MAX_INPUT 1024

/* Upper bound on the text length (without the NUL) for `len` input bytes. */
#define LD_BASE58_ENCODED_MAX(len) ((len)*138 / 100 + 1)

/* Writes the base58btc text of `in[0..len)` and a NUL to `out` (room for `cap` chars).
 * Returns the text length, LD_ERR_LIMIT when `cap` is too small, or LD_ERR_TOO_LARGE when len
 * exceeds LD_BASE58_MAX_INPUT. */
int ld_base58_encode(const uint8_t *in, size_t len, char *out, size_t cap);

/* Decodes `text[0..textlen)` into `out` (room for `cap` bytes) and stores the byte count in
 * *outlen. Returns 0, or LD_ERR_BAD_ENCODING (a char outside the alphabet), LD_ERR_LIMIT (cap
 * too small), LD_ERR_TOO_LARGE (textlen > LD_BASE58_MAX_INPUT). Empty text decodes to zero
 * bytes. */
int ld_base58_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen);

#endif
