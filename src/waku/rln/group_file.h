/* RLN-relay's static group and identity files, our simple forms (nwaku has neither: its group
 * comes from the chain and its identity from an encrypted keystore):
 *
 *   group:    a JSON array of the members' rate commitments in membership-index order, each a
 *             "0x…" string of at most 64 hex digits, the field element big-endian;
 *   identity: a JSON object {"identitySecret": "0x…"}, the same encoding.
 *
 * A field element that is not canonical (>= r) is refused. Pure functions; any thread. */
#ifndef LD_WAKU_RLN_GROUP_FILE_H
#define LD_WAKU_RLN_GROUP_FILE_H

#include <jansson.h>
#include <stddef.h>

#include "zk/field.h"

/* "0x" then 1 to 64 hex digits of a canonical field element. LD_ERR_BAD_ENCODING. */
int ld_rln_field_from_hex(const char *text, ld_fr_t *out);

/* The members of a group array: *leaves (malloc'd, the caller frees) and *n (1..max_members).
 * LD_ERR_MALFORMED (with the reason, naming a bad member's index, in err), LD_ERR_NOMEM. */
int ld_rln_group_from_json(const json_t *root, size_t max_members, ld_fr_t **leaves, size_t *n,
                           char *err, size_t errlen);

/* The identity secret of an identity object. LD_ERR_MALFORMED. */
int ld_rln_identity_from_json(const json_t *root, ld_fr_t *secret);

#endif
