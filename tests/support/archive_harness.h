/* Helpers for the archive tests: counting and closing an archive, with the waiting left to the
 * caller's `wait`, which runs the caller's loop until *done is true (and fails the test when it
 * does not become true in time). Failures are cmocka assertions. */
#ifndef LD_TESTS_ARCHIVE_HARNESS_H
#define LD_TESTS_ARCHIVE_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "waku/archive/archive.h"

typedef void (*ah_wait_fn)(const bool *done);

/* The number of messages in `a` (ld_archive_count); asserts that the count succeeds. */
uint64_t ah_count(ld_archive_t *a, ah_wait_fn wait);

/* Closes `a` (ld_archive_close) and waits until it is closed; `a` is gone afterwards. */
void ah_close(ld_archive_t *a, ah_wait_fn wait);

#endif
