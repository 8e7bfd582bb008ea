/* Child processes for the integration tests that run the program: spawn it with arguments on a
 * libuv loop, collect its standard output and error, wait for its exit. Assertions (cmocka) on
 * failure. Everything runs on the caller's loop, in one thread. */
#ifndef LD_TESTS_CHILD_HARNESS_H
#define LD_TESTS_CHILD_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#define CH_OUTPUT_MAX 16384 /* bytes kept of each output, NUL included */
#define CH_MAX_ARGS 30

typedef struct ch_child {
  uv_loop_t *loop;
  uv_process_t proc;
  uv_pipe_t out, err;
  char stdout_buf[CH_OUTPUT_MAX], stderr_buf[CH_OUTPUT_MAX]; /* NUL-terminated */
  size_t out_len, err_len;
  bool exited;
  int64_t status;
  int closed; /* handles closed (3 when the process and both pipes are done) */
} ch_child_t;

/* For main() of a test of the program: ignores SIGPIPE as the program does (a closed peer is a
 * write error) and tells whether $LD_BIN names the program; when it does not, prints that the
 * tests are skipped. */
bool ch_program_ready(void);

/* Starts `bin` with the NULL-terminated `args` (at most CH_MAX_ARGS) on `loop`, reading both
 * outputs. Returns a heap child (free it after ch_finish). */
ch_child_t *ch_spawn(uv_loop_t *loop, const char *bin, const char *const *args);

/* Runs the loop until the child exited and both outputs ended (at most `timeout_ms`, then the
 * test fails); returns the exit status. */
int64_t ch_finish(ch_child_t *c, uint64_t timeout_ms);

/* ch_finish, and the test fails with the child's standard error unless the status is 0. */
void ch_expect_success(ch_child_t *c, uint64_t timeout_ms);

#endif
