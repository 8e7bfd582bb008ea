/* Nodes on one libuv loop for the integration tests: run the loop until a condition holds or a
 * deadline passes, build a loopback configuration, start a node from it and stop it again.
 * Failures are cmocka assertions. Everything runs on the caller's loop, in one thread. */
#ifndef LD_TESTS_NODE_HARNESS_H
#define LD_TESTS_NODE_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/clock.h"
#include "node/broker.h"
#include "node/config.h"
#include "node/node.h"

/* Runs `loop` once (UV_RUN_ONCE: blocks until at least one event). */
void nh_pump(uv_loop_t *loop);

/* Runs `loop` for `ms` milliseconds of wall time; a timer wakes it when nothing else happens. */
void nh_run_for(uv_loop_t *loop, uint64_t ms);

/* Runs `loop` until `cond` holds or `ms` milliseconds have passed, then asserts `cond`. `cond` is
 * evaluated again after every turn of the loop. */
#define NH_WAIT_FOR(loop, cond, ms)                                                                \
  do {                                                                                             \
    uint64_t nh_deadline_ = ld_now_ms() + (ms);                                                    \
    while (!(cond) && ld_now_ms() < nh_deadline_)                                                  \
      nh_pump(loop);                                                                               \
    assert_true(cond);                                                                             \
  } while (0)

/* A new default configuration (heap; nh_node_start takes it) listening on 127.0.0.1 port 0, with
 * shard "0" and no colocation limit. The caller adjusts the rest before starting. */
ld_node_config_t *nh_config(void);

/* Writes the text of the first listen address of `node` into out[0..cap). */
void nh_addr_text(ld_node_t *node, char *out, size_t cap);

/* Adds the first listen address of `to` to `cfg` as a static node. */
void nh_add_static(ld_node_config_t *cfg, ld_node_t *to);

/* Finalizes `cfg`, frees it, creates the node on `loop` and starts it. Never NULL. A node with
 * RLN-relay credentials (a member that publishes with proofs) is returned once its proving
 * context is prepared for its membership (node_rln_publish.c: at start the context's first
 * prepare costs a whole proof, seconds under the sanitizers, which a publish would wait for),
 * within NH_WARM_WAIT_MS. */
#define NH_WARM_WAIT_MS 300000
ld_node_t *nh_start(uv_loop_t *loop, ld_node_config_t *cfg);

/* nh_start, with `fn`(ud) subscribed to the node's broker events of `kind` before the start. */
ld_node_t *nh_start_subscribed(uv_loop_t *loop, ld_node_config_t *cfg, int kind,
                               ld_broker_listener_fn fn, void *ud);

/* Asserts that `node` announces exactly one listen address and writes its text into
 * out[0..cap). */
void nh_only_addr_text(ld_node_t *node, char *out, size_t cap);

/* Stops (and so frees) `node`, running `loop` until it is done, at most `ms` milliseconds. */
void nh_stop(uv_loop_t *loop, ld_node_t *node, uint64_t ms);

#endif
