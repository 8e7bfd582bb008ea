/* Base64 text encodings of RFC 4648: the standard alphabet with '=' padding (§4) and the
 * URL-safe alphabet without padding (§5, multibase 'u').
 *
 * Pure functions: no allocation, no global state, safe from any thread. */
#ifndef LD_BASE_BASE64_H
#define LD_BASE_BASE64_H

#include <stddef.h>
#include <stdint.h>

/* Text lengths (without the NUL) for `len` input bytes. */
#define LD_BASE64_ENCODED_LEN(len) (((len) + 2) / 3 * 4)
#define LD_BASE64URL_ENCODED_LEN(len) (((len)*4 + 2) / 3)

/* Writes the padded standard base64 text of `in[0..len)` and a NUL to `out` (room for `cap`
 * chars). Returns the text length or LD_ERR_LIMIT. */
int ld_base64_encode(const uint8_t *in, size_t len, char *out, size_t cap);

/* Decodes padded standard base64 into `out` (room for `cap` bytes) and stores the byte count in
 * *outlen. Returns 0, or LD_ERR_BAD_ENCODING (a char outside the alphabet, missing or misplaced
 * padding, a length not a multiple of 4, nonzero trailing bits), LD_ERR_LIMIT (cap too small). */
int ld_base64_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen);

/* Writes the unpadded URL-safe base64 text ('-' and '_') and a NUL. Returns the text length or
 * LD_ERR_LIMIT. */
int ld_base64url_encode(const uint8_t *in, size_t len, char *out, size_t cap);

/* Decodes URL-safe base64 with or without '=' padding (when present it must be correct).
 * Returns 0, LD_ERR_BAD_ENCODING or LD_ERR_LIMIT, as ld_base64_decode. */
int ld_base64url_decode(const char *text, size_t textlen, uint8_t *out, size_t cap, size_t *outlen);

#endif
