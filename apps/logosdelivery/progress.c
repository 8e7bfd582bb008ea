#include "logosdelivery/progress.h"

#include <unistd.h>

void ld_progress_init(ld_progress_t *p, FILE *out, bool tty, const char *what, const char *items) {
  *p = (ld_progress_t){.out = out, .tty = tty, .what = what, .items = items};
}

bool ld_progress_is_tty(FILE *out) {
  return isatty(fileno(out)) == 1;
}

static double rate(const ld_progress_t *p, uint64_t now_ms) {
  uint64_t ms = now_ms > p->start_ms ? now_ms - p->start_ms : 0;
  return ms > 0 ? (double)p->total * 1000.0 / (double)ms : 0.0;
}

static void start_clock(ld_progress_t *p, uint64_t now_ms) {
  if (p->pages == 0 && p->start_ms == 0)
    p->start_ms = now_ms;
}

void ld_progress_page(ld_progress_t *p, uint64_t items, uint64_t now_ms) {
  start_clock(p, now_ms);
  p->pages++;
  p->total += items;
  if (!p->tty) {
    fprintf(p->out, "%s: page %llu: %llu %s (%llu in all, %.0f %s/s)\n", p->what,
            (unsigned long long)p->pages, (unsigned long long)items, p->items,
            (unsigned long long)p->total, rate(p, now_ms), p->items);
    fflush(p->out);
    return;
  }
  if (p->drawn_ms != 0 && now_ms - p->drawn_ms < LD_PROGRESS_REDRAW_MS)
    return;
  fprintf(p->out, "\r\033[K%s: %llu pages, %llu %s, %.0f %s/s", p->what,
          (unsigned long long)p->pages, (unsigned long long)p->total, p->items, rate(p, now_ms),
          p->items);
  fflush(p->out);
  p->drawn = true;
  p->drawn_ms = now_ms;
}

void ld_progress_clear(ld_progress_t *p) {
  if (!p->drawn)
    return;
  fprintf(p->out, "\r\033[K");
  fflush(p->out);
  p->drawn = false;
}

void ld_progress_done(ld_progress_t *p, uint64_t now_ms) {
  start_clock(p, now_ms);
  if (p->drawn)
    fprintf(p->out, "\r\033[K");
  uint64_t ms = now_ms > p->start_ms ? now_ms - p->start_ms : 0;
  fprintf(p->out, "%s: %llu pages, %llu %s in %.1f s (%.0f %s/s)\n", p->what,
          (unsigned long long)p->pages, (unsigned long long)p->total, p->items, (double)ms / 1000.0,
          rate(p, now_ms), p->items);
  fflush(p->out);
  p->drawn = false;
}
