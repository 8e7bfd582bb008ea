/* Replays a libFuzzer corpus without libFuzzer: the empty input first (libFuzzer always starts
 * with it), then every file named on the command line, or found in a directory named on the
 * command line, is passed once to LLVMFuzzerTestOneInput. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return -1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  size_t got = n > 0 ? fread(buf, 1, (size_t)n, f) : 0;
  fclose(f);
  LLVMFuzzerTestOneInput(buf, got);
  free(buf);
  return 0;
}

static int replay_path(const char *path, int *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "no such corpus: %s\n", path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    (*count)++;
    return replay_file(path);
  }
  DIR *dir = opendir(path);
  if (dir == NULL)
    return -1;
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(dir)) != NULL && rc == 0) {
    if (e->d_name[0] == '.')
      continue;
    char child[4096];
    snprintf(child, sizeof child, "%s/%s", path, e->d_name);
    rc = replay_path(child, count);
  }
  closedir(dir);
  return rc;
}

/* As libFuzzer does: a valid pointer to no bytes. */
static void replay_empty(void) {
  uint8_t *none = calloc(1, 1);
  LLVMFuzzerTestOneInput(none, 0);
  free(none);
}

int main(int argc, char **argv) {
  int count = 0;
  replay_empty();
  for (int i = 1; i < argc; i++)
    if (replay_path(argv[i], &count) != 0)
      return 1;
  if (count == 0) {
    fprintf(stderr, "empty corpus\n");
    return 1;
  }
  printf("replayed the empty input and %d inputs\n", count);
  return 0;
}
