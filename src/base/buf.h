/* A growable byte buffer used to build wire messages and to queue bytes.
 *
 * Caller storage: ld_buf_init before use, ld_buf_clear to release the memory. Appends either
 * succeed completely or fail with LD_ERR_NOMEM and leave the buffer unchanged. */
#ifndef LD_BASE_BUF_H
#define LD_BASE_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct ld_buf {
  uint8_t *data;
  size_t len;
  size_t cap;
} ld_buf_t;

void ld_buf_init(ld_buf_t *b);

/* Frees the memory and leaves the buffer empty and reusable. */
void ld_buf_clear(ld_buf_t *b);

/* Makes room for `extra` more bytes beyond len. */
int ld_buf_reserve(ld_buf_t *b, size_t extra);

int ld_buf_append(ld_buf_t *b, const void *data, size_t n);
int ld_buf_u8(ld_buf_t *b, uint8_t v);
int ld_buf_be16(ld_buf_t *b, uint16_t v);
int ld_buf_be32(ld_buf_t *b, uint32_t v);
int ld_buf_be64(ld_buf_t *b, uint64_t v);

/* Appends a varint (the multiformats form for values < 2^63). */
int ld_buf_varint(ld_buf_t *b, uint64_t v);

/* Appends `uvarint(n) ‖ data[0..n)`. */
int ld_buf_lp(ld_buf_t *b, const void *data, size_t n);

/* Drops the first `n` bytes (n ≤ len), keeping the rest in order. */
void ld_buf_consume(ld_buf_t *b, size_t n);

/* Sets len to 0, keeping the memory. */
static inline void ld_buf_reset(ld_buf_t *b) {
  b->len = 0;
}

#endif
