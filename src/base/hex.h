/* Base16 (hex) text encoding, RFC 4648 §8, as used in logs, config files and test vectors.
 *
 * Pure functions: no allocation, no global state, safe from any thread. */
#ifndef LD_BASE_HEX_H
#define LD_BASE_HEX_H

#include <stddef.h>
#include <stdint.h>

/* Writes the 2*len lowercase hex digits of `in[0..len)` followed by a NUL to `out`, which must
 * have room for 2*len + 1 chars. Returns 2*len. */
size_t ld_hex_encode(const uint8_t *in, size_t len, char *out);

/* Decodes `text[0..textlen)` (an optional "0x"/"0X" prefix, then hex digits of either case) into
 * `out` (room for `cap` bytes) and stores the byte count in *outlen. Returns 0, or
 * LD_ERR_BAD_ENCODING (odd digit count or a non-hex char), LD_ERR_LIMIT (cap too small).
 * Nothing is guaranteed about `out` on failure. */
int ld_hex_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen);

/* Returns the value (0..15) of the hex digit `c` of either case, or -1 when `c` is not one (any
 * other char, including a negative plain char or EOF). */
int ld_hex_digit_value(int c);

#endif
