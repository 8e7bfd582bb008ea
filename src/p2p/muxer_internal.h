/* Helpers shared by the muxer engines (yamux.c, mplex.c). Private to src/p2p. */
#ifndef LD_P2P_MUXER_INTERNAL_H
#define LD_P2P_MUXER_INTERNAL_H

#include "base/buf.h"
#include "base/error.h"
#include "p2p/muxer.h"

/* Moves every byte of `pending` to the end of `out` and empties `pending`. When `out` is empty
 * the two buffers swap their memory instead of copying. Returns 0 or LD_ERR_NOMEM (both buffers
 * unchanged). */
int ld_muxer_move_output(ld_buf_t *pending, ld_buf_t *out);

/* Callbacks used when an engine is created without any. */
extern const ld_muxer_callbacks_t ld_muxer_no_callbacks;

/* A callback's result as the engine reports it: negative codes pass through, a positive value
 * (outside the contract) becomes LD_ERR_INTERNAL. */
static inline int ld_muxer_cb_result(int rc) {
  return rc > 0 ? LD_ERR_INTERNAL : rc;
}

/* Calls an optional callback: a missing one is a no-op that returns 0. */
#define LD_MUXER_CALL(cb, user_data, name, ...)                                                    \
  ((cb)->name != NULL ? ld_muxer_cb_result((cb)->name((user_data), __VA_ARGS__)) : 0)

#endif
