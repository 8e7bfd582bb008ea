/* The last-online time and the resume range (see resume.h). */
#include "messaging/resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

uint64_t ld_resume_parse(const char *text, size_t len) {
  uint64_t v = 0;
  size_t i = 0;
  for (; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
    unsigned d = (unsigned)(text[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return 0;
    v = v * 10 + d;
  }
  if (i == 0 || i > 20 || (i < len && !(text[i] == '\n' && i + 1 == len)))
    return 0;
  return v;
}

uint64_t ld_resume_read(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL)
    return 0;
  char text[32];
  size_t n = fread(text, 1, sizeof text, f);
  fclose(f);
  return n < sizeof text ? ld_resume_parse(text, n) : 0;
}

void ld_resume_init(ld_resume_t *r, const char *dir) {
  memset(r, 0, sizeof *r);
  if (dir == NULL || dir[0] == '\0')
    return;
  int n = snprintf(r->path, sizeof r->path, "%s/%s", dir, LD_RESUME_FILE);
  if (n < 0 || (size_t)n >= sizeof r->path) {
    r->path[0] = '\0';
    return;
  }
  r->last_online_ms = ld_resume_read(r->path);
}

uint64_t ld_resume_since_ms(const ld_resume_t *r, uint64_t now_ms) {
  uint64_t floor = now_ms > LD_RESUME_MAX_MS ? now_ms - LD_RESUME_MAX_MS : 0;
  return r->last_online_ms > floor && r->last_online_ms <= now_ms ? r->last_online_ms : floor;
}

int ld_resume_touch(ld_resume_t *r, uint64_t now_ms, bool force) {
  if (r->path[0] == '\0' || (!force && now_ms - r->touched_ms < LD_RESUME_TOUCH_MS))
    return 0;
  char tmp[sizeof r->path + 8];
  snprintf(tmp, sizeof tmp, "%s.tmp", r->path);
  FILE *f = fopen(tmp, "w");
  if (f == NULL)
    return LD_ERR_IO;
  int ok = fprintf(f, "%llu\n", (unsigned long long)now_ms) > 0;
  ok &= fclose(f) == 0;
  if (!ok || rename(tmp, r->path) != 0) {
    remove(tmp);
    return LD_ERR_IO;
  }
  r->touched_ms = now_ms;
  return 0;
}
