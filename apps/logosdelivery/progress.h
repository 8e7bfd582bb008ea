/* Progress of a long sub-command (query --all; sync to come) on stderr, for a person at a
 * terminal and for a log alike:
 *   - on a terminal, one status line redrawn in place (at most every LD_PROGRESS_REDRAW_MS):
 *       query: 12 pages, 1180 messages, 950 messages/s
 *   - otherwise one plain line per page:
 *       query: page 12: 100 messages (1180 in all, 950 messages/s)
 * and in both cases a last line when the work ends:
 *       query: 12 pages, 1180 messages in 1.2 s (950 messages/s)
 * The program's own output (stdout) is never touched. Single thread. */
#ifndef LD_APP_PROGRESS_H
#define LD_APP_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define LD_PROGRESS_REDRAW_MS 100

typedef struct ld_progress {
  FILE *out;
  bool tty;
  const char *what;  /* "query" (borrowed) */
  const char *items; /* "messages" (borrowed) */
  uint64_t start_ms, drawn_ms;
  uint64_t pages, total;
  bool drawn; /* a status line is on the terminal */
} ld_progress_t;

/* Starts counting now; `tty` chooses the form (ld_progress_is_tty(out) for the real stream). */
void ld_progress_init(ld_progress_t *p, FILE *out, bool tty, const char *what, const char *items);

/* Whether `out` is a terminal. */
bool ld_progress_is_tty(FILE *out);

/* One more page of `items` items, at `now_ms` (ld_now_ms). */
void ld_progress_page(ld_progress_t *p, uint64_t items, uint64_t now_ms);

/* Clears the status line from the terminal (before other output goes to the same terminal); the
 * next page draws it again. */
void ld_progress_clear(ld_progress_t *p);

/* The last line (after clearing a status line). */
void ld_progress_done(ld_progress_t *p, uint64_t now_ms);

#endif
