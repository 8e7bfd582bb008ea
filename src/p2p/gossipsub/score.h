/* Gossipsub v1.1 peer scoring.
 *
 *   score = min(cap, sum_t w_t (w1 P1 + w2 P2 + w3 P3 + w3b P3b + w4 P4)) + w5 P5 + w6 P6 + w7 P7
 *
 * P1 time in mesh (quantum, cap), P2 first message deliveries (decay, cap), P3 mesh delivery
 * deficit squared once active, P3b sticky deficit at prune, P4 invalid messages squared, P5
 * application score, P6 IP colocation surplus squared, P7 behaviour penalty excess squared.
 * Counters decay every decay_interval and snap to 0 below decay_to_zero. The state of a peer that
 * disconnects is retained for retain_score, so a reconnect cannot wash a bad score.
 *
 * The router feeds events only for topics it scores (its subscribed topics). Peers are the
 * router's 64-bit handles. Not thread-safe. */
#ifndef LD_P2P_GOSSIPSUB_SCORE_H
#define LD_P2P_GOSSIPSUB_SCORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "p2p/gossipsub/router.h"

#define LD_GS_SCORE_MAX_TOPICS 64      /* topics with score state per peer */
#define LD_GS_SCORE_MAX_IP_LEN 64      /* longer IP strings are not counted for P6 */
#define LD_GS_SCORE_MAX_RETAINED 65536 /* disconnected peers remembered */

typedef struct ld_gs_score ld_gs_score_t;

/* `p` is borrowed and must outlive the score object (the router owns both). NULL on OOM. */
ld_gs_score_t *ld_gs_score_new(const ld_gs_params_t *p);
void ld_gs_score_free(ld_gs_score_t *s);

/* A peer connects (ip may be NULL): restores a retained state or starts a fresh one.
 * LD_ERR_EXISTS when already connected, LD_ERR_NOMEM. */
int ld_gs_score_connect(ld_gs_score_t *s, uint64_t peer, const char *ip, uint64_t now_ms);
/* The peer disconnected: leaves every mesh (P3b applies) and is retained for retain_score. */
void ld_gs_score_disconnect(ld_gs_score_t *s, uint64_t peer, uint64_t now_ms);

/* Mesh membership (P1, P3, P3b). */
void ld_gs_score_graft(ld_gs_score_t *s, uint64_t peer, const char *topic, uint64_t now_ms);
void ld_gs_score_prune(ld_gs_score_t *s, uint64_t peer, const char *topic, uint64_t now_ms);

/* Deliveries: the first delivery of a valid message (P2, and P3 if in mesh); a duplicate that
 * arrived within the mesh delivery window (P3 if in mesh); an invalid message (P4). */
void ld_gs_score_first_delivery(ld_gs_score_t *s, uint64_t peer, const char *topic);
void ld_gs_score_mesh_delivery(ld_gs_score_t *s, uint64_t peer, const char *topic);
void ld_gs_score_invalid(ld_gs_score_t *s, uint64_t peer, const char *topic);

/* Behaviour penalty P7 += count (connected or retained peers). */
void ld_gs_score_penalize(ld_gs_score_t *s, uint64_t peer, double count);
/* P5. LD_ERR_NOT_FOUND for unknown peers. */
int ld_gs_score_set_app(ld_gs_score_t *s, uint64_t peer, double value);

/* The current score (0 for unknown peers). */
double ld_gs_score_get(const ld_gs_score_t *s, uint64_t peer, uint64_t now_ms);

/* Runs the decay for every elapsed decay_interval and forgets retained peers whose time is up.
 * Call at least once per heartbeat. */
void ld_gs_score_tick(ld_gs_score_t *s, uint64_t now_ms);

/* Number of peers with state (connected + retained). */
size_t ld_gs_score_count(const ld_gs_score_t *s);

#endif
