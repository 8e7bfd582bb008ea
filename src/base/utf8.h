/* UTF-8 validation, one character at a time. */
#ifndef LD_BASE_UTF8_H
#define LD_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length (1–4) of the valid UTF-8 character at s[0..n), or 0 when the bytes there are not one:
 * a stray continuation byte, a truncated sequence, an overlong form, a surrogate (U+D800–DFFF)
 * or a code point above U+10FFFF. `n` must be > 0. Pure function; any thread. */
size_t ld_utf8_char_len(const uint8_t *s, size_t n);

#endif
