/* A growable FIFO byte ring buffer with a hard maximum capacity.
 *
 * Caller storage: ld_ring_init before use, ld_ring_clear to release the memory. Storage grows
 * by doubling up to `max` bytes and is allocated lazily. Not thread-safe. */
#ifndef LD_BASE_RING_H
#define LD_BASE_RING_H

#include <stddef.h>
#include <stdint.h>

typedef struct ld_ring {
  uint8_t *data;
  size_t cap;  /* allocated bytes */
  size_t head; /* index of the first readable byte */
  size_t len;  /* readable bytes */
  size_t max;  /* cap never exceeds this */
} ld_ring_t;

/* A contiguous readable region: data[0..len). */
typedef struct ld_ring_span {
  const uint8_t *data;
  size_t len;
} ld_ring_span_t;

/* Initialises an empty ring that will hold at most `max` bytes. Never allocates. */
void ld_ring_init(ld_ring_t *r, size_t max);

/* Frees the memory; the ring is empty and reusable with the same max. */
void ld_ring_clear(ld_ring_t *r);

/* Appends `data[0..len)`, all or nothing. Returns 0, LD_ERR_LIMIT (len + ld_ring_len > max) or
 * LD_ERR_NOMEM; on error the ring is unchanged. */
int ld_ring_write(ld_ring_t *r, const void *data, size_t len);

/* Moves up to `len` bytes to `out` and returns how many were moved. */
size_t ld_ring_read(ld_ring_t *r, void *out, size_t len);

/* Copies up to `len` bytes to `out` without consuming them; returns how many were copied. */
size_t ld_ring_peek(const ld_ring_t *r, void *out, size_t len);

/* Drops up to `n` readable bytes (e.g. after a partial writev); returns how many were dropped. */
size_t ld_ring_consume(ld_ring_t *r, size_t n);

static inline size_t ld_ring_len(const ld_ring_t *r) {
  return r->len;
}

/* Free room left before the maximum. */
static inline size_t ld_ring_space(const ld_ring_t *r) {
  return r->max - r->len;
}

/* Fills spans[0..2) with the readable bytes in FIFO order and returns how many spans are
 * non-empty (0, 1 or 2). The pointers stay valid until the next write, consume, read or clear. */
int ld_ring_spans(const ld_ring_t *r, ld_ring_span_t spans[2]);

#endif
