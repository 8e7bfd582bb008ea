/* The circom witness graph: loading (protobuf-c for the messages, the framing by hand) and
 * evaluation. */
#include "zk/witness_graph.h"

#include <stdlib.h>
#include <string.h>

#include "base/cursor.h"
#include "base/error.h"
#include "witness_graph.pb-c.h"

#define GRAPH_MAGIC "wtns.graph.001"
#define GRAPH_MAGIC_LEN 14
#define GRAPH_MAX_NODES (1u << 24)
#define GRAPH_MAX_INPUT_NAMES 64

enum node_op {
  OP_INPUT,
  OP_CONST,
  OP_NEG,
  OP_ID,
  OP_MUL,
  OP_DIV,
  OP_ADD,
  OP_SUB,
  OP_EQ,
  OP_NEQ,
  OP_LAND,
  OP_LOR,
  OP_SHR,
  OP_BAND,
  OP_TERN,
};

typedef struct graph_node {
  uint32_t op;
  uint32_t a, b, c; /* operands (earlier nodes); the input index or constant index */
} graph_node_t;

typedef struct graph_input {
  char *name;
  size_t offset, len;
} graph_input_t;

struct ld_witness_graph {
  graph_node_t *nodes;
  size_t num_nodes;
  ld_fr_t *constants;
  size_t num_constants;
  uint32_t *wires; /* node of each wire */
  size_t num_wires;
  graph_input_t inputs[GRAPH_MAX_INPUT_NAMES];
  size_t num_input_names;
  size_t num_inputs;
};

typedef Ld__Zk__WitnessGraph__Node pb_node_t;

static int duo_op(uint32_t *op, int pb_op) {
  switch (pb_op) {
  case LD__ZK__WITNESS_GRAPH__DUO_OP__MUL:
    *op = OP_MUL;
    return 0;
  case LD__ZK__WITNESS_GRAPH__DUO_OP__DIV:
    *op = OP_DIV;
    return 0;
  case LD__ZK__WITNESS_GRAPH__DUO_OP__ADD:
    *op = OP_ADD;
    return 0;
  case LD__ZK__WITNESS_GRAPH__DUO_OP__SUB:
    *op = OP_SUB;
    return 0;
  case LD__ZK__WITNESS_GRAPH__DUO_OP__EQ:
    *op = OP_EQ;
    return 0;
  case LD__ZK__WITNESS_GRAPH__DUO_OP__NEQ:
    *op = OP_NEQ;
    return 0;
  case LD__ZK__WITNESS_GRAPH__DUO_OP__LAND:
    *op = OP_LAND;
    return 0;
  case LD__ZK__WITNESS_GRAPH__DUO_OP__LOR:
    *op = OP_LOR;
    return 0;
  case LD__ZK__WITNESS_GRAPH__DUO_OP__SHR:
    *op = OP_SHR;
    return 0;
  case LD__ZK__WITNESS_GRAPH__DUO_OP__BAND:
    *op = OP_BAND;
    return 0;
  default:
    return LD_ERR_UNSUPPORTED;
  }
}

/* Converts one parsed node; `index` is its position (operands must come before it). */
static int convert_node(ld_witness_graph_t *g, const pb_node_t *pb, size_t index) {
  graph_node_t *n = &g->nodes[index];
  memset(n, 0, sizeof *n);
  switch (pb->node_case) {
  case LD__ZK__WITNESS_GRAPH__NODE__NODE_INPUT:
    n->op = OP_INPUT;
    n->a = pb->input->idx;
    if ((size_t)n->a + 1 > g->num_inputs) {
      g->num_inputs = (size_t)n->a + 1;
    }
    return 0;
  case LD__ZK__WITNESS_GRAPH__NODE__NODE_CONSTANT: {
    const Ld__Zk__WitnessGraph__BigUInt *v = pb->constant->value;
    uint8_t le[32] = {0};
    if (v != NULL) {
      if (v->value_le.len > sizeof le) {
        return LD_ERR_MALFORMED;
      }
      if (v->value_le.len > 0) {
        memcpy(le, v->value_le.data, v->value_le.len);
      }
    }
    n->op = OP_CONST;
    n->a = (uint32_t)g->num_constants;
    ld_fr_from_bytes_reduce(&g->constants[g->num_constants++], le);
    return 0;
  }
  case LD__ZK__WITNESS_GRAPH__NODE__NODE_UNO_OP:
    if (pb->uno_op->op == LD__ZK__WITNESS_GRAPH__UNO_OP__NEG) {
      n->op = OP_NEG;
    } else if (pb->uno_op->op == LD__ZK__WITNESS_GRAPH__UNO_OP__ID) {
      n->op = OP_ID;
    } else {
      return LD_ERR_UNSUPPORTED;
    }
    n->a = pb->uno_op->a_idx;
    return n->a < index ? 0 : LD_ERR_MALFORMED;
  case LD__ZK__WITNESS_GRAPH__NODE__NODE_DUO_OP: {
    int rc = duo_op(&n->op, pb->duo_op->op);
    if (rc != 0) {
      return rc;
    }
    n->a = pb->duo_op->a_idx;
    n->b = pb->duo_op->b_idx;
    return n->a < index && n->b < index ? 0 : LD_ERR_MALFORMED;
  }
  case LD__ZK__WITNESS_GRAPH__NODE__NODE_TRES_OP:
    if (pb->tres_op->op != LD__ZK__WITNESS_GRAPH__TRES_OP__TERN_COND) {
      return LD_ERR_UNSUPPORTED;
    }
    n->op = OP_TERN;
    n->a = pb->tres_op->a_idx;
    n->b = pb->tres_op->b_idx;
    n->c = pb->tres_op->c_idx;
    return n->a < index && n->b < index && n->c < index ? 0 : LD_ERR_MALFORMED;
  default:
    return LD_ERR_MALFORMED;
  }
}

/* Reads one length-delimited message body. */
static int read_delimited(ld_cursor_t *c, const uint8_t **body, size_t *len) {
  uint64_t n;
  if (ld_cursor_pbvarint(c, &n) != 0 || n > ld_cursor_remaining(c)) {
    return LD_ERR_MALFORMED;
  }
  *len = (size_t)n;
  return ld_cursor_bytes(c, *len, body) == 0 ? 0 : LD_ERR_MALFORMED;
}

static uint64_t le64(const uint8_t b[8]) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) {
    v = (v << 8) | b[i];
  }
  return v;
}

static int read_nodes(ld_witness_graph_t *g, ld_cursor_t *c) {
  for (size_t i = 0; i < g->num_nodes; i++) {
    const uint8_t *body;
    size_t len;
    if (read_delimited(c, &body, &len) != 0) {
      return LD_ERR_MALFORMED;
    }
    pb_node_t *pb = ld__zk__witness_graph__node__unpack(NULL, len, body);
    if (pb == NULL) {
      return LD_ERR_MALFORMED;
    }
    int rc = convert_node(g, pb, i);
    ld__zk__witness_graph__node__free_unpacked(pb, NULL);
    if (rc != 0) {
      return rc;
    }
  }
  return 0;
}

static int read_metadata(ld_witness_graph_t *g, const Ld__Zk__WitnessGraph__GraphMetadata *md) {
  if (md->n_witness_signals == 0 || md->n_inputs > GRAPH_MAX_INPUT_NAMES) {
    return LD_ERR_MALFORMED;
  }
  g->wires = malloc(md->n_witness_signals * sizeof *g->wires);
  if (g->wires == NULL) {
    return LD_ERR_NOMEM;
  }
  g->num_wires = md->n_witness_signals;
  for (size_t i = 0; i < g->num_wires; i++) {
    if (md->witness_signals[i] >= g->num_nodes) {
      return LD_ERR_MALFORMED;
    }
    g->wires[i] = md->witness_signals[i];
  }
  for (size_t i = 0; i < md->n_inputs; i++) {
    const Ld__Zk__WitnessGraph__GraphMetadata__InputsEntry *e = md->inputs[i];
    if (e->value == NULL || (uint64_t)e->value->offset + e->value->len > g->num_inputs) {
      return LD_ERR_MALFORMED;
    }
    graph_input_t *in = &g->inputs[g->num_input_names];
    in->name = strdup(e->key);
    if (in->name == NULL) {
      return LD_ERR_NOMEM;
    }
    in->offset = e->value->offset;
    in->len = e->value->len;
    g->num_input_names++;
  }
  return 0;
}

static int parse(ld_witness_graph_t *g, const uint8_t *data, size_t len) {
  ld_cursor_t c;
  ld_cursor_init(&c, data, len);
  const uint8_t *magic;
  uint8_t count[8];
  if (ld_cursor_bytes(&c, GRAPH_MAGIC_LEN, &magic) != 0 ||
      memcmp(magic, GRAPH_MAGIC, GRAPH_MAGIC_LEN) != 0 || ld_cursor_copy(&c, count, 8) != 0) {
    return LD_ERR_MALFORMED;
  }
  uint64_t n = le64(count);
  if (n == 0 || n > ld_cursor_remaining(&c)) { /* each node takes at least one byte */
    return LD_ERR_MALFORMED;
  }
  if (n > GRAPH_MAX_NODES) {
    return LD_ERR_TOO_LARGE;
  }
  g->num_nodes = (size_t)n;
  g->nodes = malloc(g->num_nodes * sizeof *g->nodes);
  g->constants = malloc(g->num_nodes * sizeof *g->constants);
  if (g->nodes == NULL || g->constants == NULL) {
    return LD_ERR_NOMEM;
  }
  int rc = read_nodes(g, &c);
  if (rc != 0) {
    return rc;
  }
  if (g->num_inputs == 0) {
    g->num_inputs = 1; /* slot 0, the constant 1, even when no node reads it */
  }
  size_t metadata_offset = len - ld_cursor_remaining(&c);
  const uint8_t *body;
  size_t body_len;
  uint8_t trailer[8];
  if (read_delimited(&c, &body, &body_len) != 0 || ld_cursor_copy(&c, trailer, 8) != 0 ||
      !ld_cursor_empty(&c) || le64(trailer) != metadata_offset) {
    return LD_ERR_MALFORMED;
  }
  Ld__Zk__WitnessGraph__GraphMetadata *md =
      ld__zk__witness_graph__graph_metadata__unpack(NULL, body_len, body);
  if (md == NULL) {
    return LD_ERR_MALFORMED;
  }
  rc = read_metadata(g, md);
  ld__zk__witness_graph__graph_metadata__free_unpacked(md, NULL);
  return rc;
}

int ld_witness_graph_load(ld_witness_graph_t **out, const uint8_t *data, size_t len) {
  *out = NULL;
  ld_witness_graph_t *g = calloc(1, sizeof *g);
  if (g == NULL) {
    return LD_ERR_NOMEM;
  }
  int rc = parse(g, data, len);
  if (rc != 0) {
    ld_witness_graph_free(g);
    return rc;
  }
  *out = g;
  return 0;
}

void ld_witness_graph_free(ld_witness_graph_t *g) {
  if (g == NULL) {
    return;
  }
  for (size_t i = 0; i < g->num_input_names; i++) {
    free(g->inputs[i].name);
  }
  free(g->nodes);
  free(g->constants);
  free(g->wires);
  free(g);
}

size_t ld_witness_graph_num_wires(const ld_witness_graph_t *g) {
  return g->num_wires;
}

size_t ld_witness_graph_num_inputs(const ld_witness_graph_t *g) {
  return g->num_inputs;
}

int ld_witness_graph_input(const ld_witness_graph_t *g, const char *name, size_t *offset,
                           size_t *len) {
  for (size_t i = 0; i < g->num_input_names; i++) {
    if (strcmp(g->inputs[i].name, name) == 0) {
      *offset = g->inputs[i].offset;
      *len = g->inputs[i].len;
      return 0;
    }
  }
  return LD_ERR_NOT_FOUND;
}

/* ---- evaluation -------------------------------------------------------------------------------
 */

static void fr_from_canonical(ld_fr_t *r, const uint64_t v[4]) {
  uint8_t b[32];
  for (int i = 0; i < 32; i++) {
    b[i] = (uint8_t)(v[i / 8] >> (8 * (i % 8)));
  }
  ld_fr_from_bytes_reduce(r, b);
}

static void fr_bool(ld_fr_t *r, int v) {
  ld_fr_from_u64(r, v ? 1 : 0);
}

/* circom's >>: a >> b for b < 254, 0 beyond. */
static void fr_shr(ld_fr_t *r, const ld_fr_t *a, const ld_fr_t *b) {
  uint64_t x[4], s[4];
  ld_fr_to_limbs(x, a);
  ld_fr_to_limbs(s, b);
  if (s[1] != 0 || s[2] != 0 || s[3] != 0 || s[0] >= 254) {
    ld_fr_set_zero(r);
    return;
  }
  unsigned words = (unsigned)(s[0] / 64), bits = (unsigned)(s[0] % 64);
  uint64_t y[4] = {0};
  for (unsigned i = 0; i + words < 4; i++) {
    uint64_t lo = x[i + words] >> bits;
    uint64_t hi = (bits != 0 && i + words + 1 < 4) ? x[i + words + 1] << (64 - bits) : 0;
    y[i] = lo | hi;
  }
  fr_from_canonical(r, y);
}

static void fr_band(ld_fr_t *r, const ld_fr_t *a, const ld_fr_t *b) {
  uint64_t x[4], y[4];
  ld_fr_to_limbs(x, a);
  ld_fr_to_limbs(y, b);
  for (int i = 0; i < 4; i++) {
    x[i] &= y[i];
  }
  fr_from_canonical(r, x);
}

static void eval_node(const ld_witness_graph_t *g, const graph_node_t *n, ld_fr_t *v,
                      const ld_fr_t *inputs, ld_fr_t *out) {
  const ld_fr_t *a = &v[n->a], *b = &v[n->b];
  switch (n->op) {
  case OP_INPUT:
    *out = inputs[n->a];
    break;
  case OP_CONST:
    *out = g->constants[n->a];
    break;
  case OP_NEG:
    ld_fr_neg(out, a);
    break;
  case OP_ID:
    *out = *a;
    break;
  case OP_MUL:
    ld_fr_mul(out, a, b);
    break;
  case OP_DIV: {
    ld_fr_t inv; /* 1/0 = 0: division by zero gives 0 */
    ld_fr_inv(&inv, b);
    ld_fr_mul(out, a, &inv);
    break;
  }
  case OP_ADD:
    ld_fr_add(out, a, b);
    break;
  case OP_SUB:
    ld_fr_sub(out, a, b);
    break;
  case OP_EQ:
    fr_bool(out, ld_fr_equal(a, b));
    break;
  case OP_NEQ:
    fr_bool(out, !ld_fr_equal(a, b));
    break;
  case OP_LAND:
    fr_bool(out, !ld_fr_is_zero(a) && !ld_fr_is_zero(b));
    break;
  case OP_LOR:
    fr_bool(out, !ld_fr_is_zero(a) || !ld_fr_is_zero(b));
    break;
  case OP_SHR:
    fr_shr(out, a, b);
    break;
  case OP_BAND:
    fr_band(out, a, b);
    break;
  case OP_TERN:
    *out = ld_fr_is_zero(a) ? v[n->c] : *b;
    break;
  default:
    ld_fr_set_zero(out);
    break;
  }
}

int ld_witness_graph_eval(const ld_witness_graph_t *g, const ld_fr_t *inputs, ld_fr_t *wires) {
  ld_fr_t *v = malloc(g->num_nodes * sizeof *v);
  ld_fr_t *in = malloc(g->num_inputs * sizeof *in);
  if (v == NULL || in == NULL) {
    free(v);
    free(in);
    return LD_ERR_NOMEM;
  }
  memcpy(in, inputs, g->num_inputs * sizeof *in);
  ld_fr_set_one(&in[0]);
  for (size_t i = 0; i < g->num_nodes; i++) {
    eval_node(g, &g->nodes[i], v, in, &v[i]);
  }
  for (size_t i = 0; i < g->num_wires; i++) {
    wires[i] = v[g->wires[i]];
  }
  explicit_bzero(v, g->num_nodes * sizeof *v);
  explicit_bzero(in, g->num_inputs * sizeof *in);
  free(v);
  free(in);
  return 0;
}

/* Whether node n depends on a varying node or input (its operands come earlier). */
static uint8_t node_varies(const graph_node_t *n, const uint8_t *varies,
                           const uint8_t *input_varies, size_t num_inputs) {
  switch (n->op) {
  case OP_INPUT:
    return n->a < num_inputs && input_varies[n->a] != 0;
  case OP_CONST:
    return 0;
  case OP_NEG:
  case OP_ID:
    return varies[n->a];
  case OP_TERN:
    return varies[n->a] | varies[n->b] | varies[n->c];
  default:
    return varies[n->a] | varies[n->b];
  }
}

int ld_witness_graph_dependents(const ld_witness_graph_t *g, const uint8_t *input_varies,
                                uint8_t *wire_varies) {
  uint8_t *varies = malloc(g->num_nodes > 0 ? g->num_nodes : 1);
  if (varies == NULL) {
    return LD_ERR_NOMEM;
  }
  for (size_t i = 0; i < g->num_nodes; i++) {
    varies[i] = node_varies(&g->nodes[i], varies, input_varies, g->num_inputs);
  }
  for (size_t i = 0; i < g->num_wires; i++) {
    wire_varies[i] = varies[g->wires[i]];
  }
  free(varies);
  return 0;
}
