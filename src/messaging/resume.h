/* Store at start-up only, with p2p reliability: the node's last-online time and the one resume
 * query at boot (reliability-and-api.md §7: a node that was away longer than the NRS window gets
 * the rest from a store node once, and never asks a store again while it runs).
 *
 * The last-online time (Unix ms) lives in `<dir>/last-online` as decimal text, written through a
 * temporary file and a rename (a crash leaves the old value or the new one); the Messaging API
 * writes it at most every LD_RESUME_TOUCH_MS while it runs and once when it closes. The resume
 * covers [max(last online, now − LD_RESUME_MAX_MS), now]; without a last-online time, the last
 * LD_RESUME_MAX_MS.
 *
 * Pure state plus two small file operations; one thread. */
#ifndef LD_MESSAGING_RESUME_H
#define LD_MESSAGING_RESUME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LD_RESUME_MAX_MS (6ull * 3600 * 1000)
#define LD_RESUME_TOUCH_MS 10000u
#define LD_RESUME_FILE "last-online"

typedef struct ld_resume {
  char path[1100];         /* <dir>/last-online; empty: nothing is kept */
  uint64_t last_online_ms; /* read at start; 0: unknown */
  uint64_t touched_ms;     /* wall time last written */
  bool done;               /* the resume query ran (or was given up) */
} ld_resume_t;

/* Reads the last-online time from `dir` (NULL or "": none kept). */
void ld_resume_init(ld_resume_t *r, const char *dir);

/* The start of the resume range at wall time now_ms. */
uint64_t ld_resume_since_ms(const ld_resume_t *r, uint64_t now_ms);

/* Records now_ms as the last-online time when LD_RESUME_TOUCH_MS passed since the last write (or
 * `force`). Returns 0, or the error of the write (LD_ERR_IO); nothing kept: 0. */
int ld_resume_touch(ld_resume_t *r, uint64_t now_ms, bool force);

/* The time in a file's text text[0..len): decimal digits, optionally one trailing newline, that
 * fit 64 bits; else 0. */
uint64_t ld_resume_parse(const char *text, size_t len);

/* The stored time in `path` (a file), or 0 when absent or unreadable. */
uint64_t ld_resume_read(const char *path);

#endif
