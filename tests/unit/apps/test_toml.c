#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "logosdelivery/toml.h"

static int parse(const char *text, ld_toml_t *doc, char *err, size_t errlen) {
  return ld_toml_parse(text, strlen(text), doc, err, errlen);
}

static void reads_an_nwaku_config_file(void **state) {
  (void)state;
  const char *text = "# nwaku config\n"
                     "relay = true\n"
                     "cluster-id = 16\n"
                     "  shard = [ 32, 64 ]   # two shards\n"
                     "\n"
                     "staticnode = [\n"
                     "  \"/ip4/1.2.3.4/tcp/60000/p2p/16Uiu2HAm\", # first\n"
                     "  '/ip4/5.6.7.8/tcp/60000/p2p/16Uiu2HAm',\n"
                     "]\n"
                     "nodekey = \"abc\"\r\n"
                     "rest-port = +8_645\n"
                     "\"quoted-key\" = false\n"
                     "neg = -9223372036854775808\n"
                     "hex = 0xff\n"
                     "oct = 0o17\n"
                     "bin = 0b101\n"
                     "empty = []\n"
                     "last = 'no newline'";
  ld_toml_t doc;
  char err[LD_TOML_ERROR_MAX];
  assert_int_equal(parse(text, &doc, err, sizeof err), 0);
  assert_int_equal(doc.n_entries, 13);
  const ld_toml_entry_t *e = ld_toml_get(&doc, "relay");
  assert_int_equal(e->value.type, LD_TOML_BOOL);
  assert_true(e->value.boolean);
  assert_int_equal(e->line, 2);
  e = ld_toml_get(&doc, "cluster-id");
  assert_int_equal(e->value.type, LD_TOML_INTEGER);
  assert_int_equal(e->value.integer, 16);
  e = ld_toml_get(&doc, "shard");
  assert_int_equal(e->value.type, LD_TOML_ARRAY);
  assert_int_equal(e->value.n_items, 2);
  assert_int_equal(e->value.items[1].integer, 64);
  e = ld_toml_get(&doc, "staticnode");
  assert_int_equal(e->line, 6);
  assert_int_equal(e->value.n_items, 2);
  assert_string_equal(e->value.items[1].string, "/ip4/5.6.7.8/tcp/60000/p2p/16Uiu2HAm");
  assert_string_equal(ld_toml_get(&doc, "nodekey")->value.string, "abc");
  assert_int_equal(ld_toml_get(&doc, "nodekey")->line, 10);
  assert_int_equal(ld_toml_get(&doc, "rest-port")->value.integer, 8645);
  assert_false(ld_toml_get(&doc, "quoted-key")->value.boolean);
  assert_int_equal(ld_toml_get(&doc, "neg")->value.integer, INT64_MIN);
  assert_int_equal(ld_toml_get(&doc, "hex")->value.integer, 255);
  assert_int_equal(ld_toml_get(&doc, "oct")->value.integer, 15);
  assert_int_equal(ld_toml_get(&doc, "bin")->value.integer, 5);
  assert_int_equal(ld_toml_get(&doc, "empty")->value.n_items, 0);
  assert_string_equal(ld_toml_get(&doc, "last")->value.string, "no newline");
  assert_null(ld_toml_get(&doc, "missing"));
  ld_toml_clear(&doc);
  assert_int_equal(doc.n_entries, 0);
}

static void decodes_string_escapes(void **state) {
  (void)state;
  const char *text = "a = \"q\\\" b\\\\ t\\t n\\n u\\u00e9 U\\U0001F600 # not a comment\"\n"
                     "b = 'C:\\path\\n'\n"
                     "c = \"héllo\"\n";
  ld_toml_t doc;
  char err[LD_TOML_ERROR_MAX];
  assert_int_equal(parse(text, &doc, err, sizeof err), 0);
  assert_string_equal(ld_toml_get(&doc, "a")->value.string,
                      "q\" b\\ t\t n\n u\xc3\xa9 U\xf0\x9f\x98\x80 # not a comment");
  assert_string_equal(ld_toml_get(&doc, "b")->value.string, "C:\\path\\n");
  assert_string_equal(ld_toml_get(&doc, "c")->value.string, "h\xc3\xa9llo");
  ld_toml_clear(&doc);
}

typedef struct {
  const char *text;
  int rc;
  const char *needle; /* expected in the error, with the line */
} bad_t;

static const bad_t bad_docs[] = {
    {"[section]\nx = 1\n", LD_ERR_MALFORMED, "line 1: tables are not supported"},
    {"a = 1\n[[arr]]\n", LD_ERR_MALFORMED, "line 2: tables"},
    {"a.b = 1\n", LD_ERR_MALFORMED, "line 1: dotted keys"},
    {"a = 1.5\n", LD_ERR_MALFORMED, "line 1: floating-point"},
    {"a = 1e3\n", LD_ERR_MALFORMED, "floating-point"},
    {"a = inf\n", LD_ERR_MALFORMED, "floating-point"},
    {"a = 1979-05-27\n", LD_ERR_MALFORMED, "dates"},
    {"a = \"\"\"x\"\"\"\n", LD_ERR_MALFORMED, "multi-line strings"},
    {"a = { b = 1 }\n", LD_ERR_MALFORMED, "inline tables"},
    {"a = [[1]]\n", LD_ERR_MALFORMED, "nested arrays"},
    {"a = 1\na = 2\n", LD_ERR_MALFORMED, "line 2: duplicate key 'a'"},
    {"a = \"open\n", LD_ERR_MALFORMED, "line 1: unterminated string"},
    {"a = \"bad \\q\"\n", LD_ERR_MALFORMED, "unknown escape"},
    {"a = \"\\u12\"\n", LD_ERR_MALFORMED, "hex digits"},
    {"a = \"\\uD800\"\n", LD_ERR_MALFORMED, "not an allowed character"},
    {"a = \"\\u0000\"\n", LD_ERR_MALFORMED, "not an allowed character"},
    {"a = \"tab\x01\"\n", LD_ERR_MALFORMED, "control character"},
    {"a = 1 2\n", LD_ERR_MALFORMED, "after the value"},
    {"a = \n", LD_ERR_MALFORMED, "missing value"},
    {"a 1\n", LD_ERR_MALFORMED, "expected '='"},
    {"= 1\n", LD_ERR_MALFORMED, "expected a key"},
    {"a = yes\n", LD_ERR_MALFORMED, "invalid value"},
    {"a = truex\n", LD_ERR_MALFORMED, "invalid value"},
    {"a = 01\n", LD_ERR_MALFORMED, "leading zeros"},
    {"a = 1__0\n", LD_ERR_MALFORMED, "'_'"},
    {"a = 10_\n", LD_ERR_MALFORMED, "incomplete number"},
    {"a = 9223372036854775808\n", LD_ERR_MALFORMED, "64-bit range"},
    {"a = -9223372036854775809\n", LD_ERR_MALFORMED, "64-bit range"},
    {"a = 0x\n", LD_ERR_MALFORMED, "incomplete number"},
    {"a = 0b102\n", LD_ERR_MALFORMED, "invalid character '2'"},
    {"a = [1, 2\n", LD_ERR_MALFORMED, "unterminated array"},
    {"a = [1 2]\n", LD_ERR_MALFORMED, "expected ',' or ']'"},
    {"a = [,]\n", LD_ERR_MALFORMED, "invalid value"},
    {"x = 1\n\n# c\ny = \"\xff\"\n", LD_ERR_MALFORMED, "not valid UTF-8"},
    {"# comment \x7f\n", LD_ERR_MALFORMED, "line 1: control character in a comment"},
    {"a = 1\r\nb = 2\rc = 3\n", LD_ERR_MALFORMED, "line 2"},
};

static void refuses_everything_else_with_the_line(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof bad_docs / sizeof bad_docs[0]; i++) {
    ld_toml_t doc;
    char err[LD_TOML_ERROR_MAX];
    int rc = parse(bad_docs[i].text, &doc, err, sizeof err);
    if (rc != bad_docs[i].rc || strstr(err, bad_docs[i].needle) == NULL)
      fail_msg("case %zu (%s): rc %d, error '%s'", i, bad_docs[i].text, rc, err);
    assert_int_equal(doc.n_entries, 0);
  }
}

static void nul_bytes_and_caps_are_refused(void **state) {
  (void)state;
  ld_toml_t doc;
  char err[LD_TOML_ERROR_MAX];
  assert_int_equal(ld_toml_parse("a = 1\0", 6, &doc, err, sizeof err), LD_ERR_MALFORMED);
  assert_non_null(strstr(err, "NUL"));

  size_t big = LD_TOML_MAX_STRING + 16;
  char *text = malloc(big + 16);
  memcpy(text, "a = \"", 5);
  memset(text + 5, 'x', big);
  memcpy(text + 5 + big, "\"\n", 3);
  assert_int_equal(parse(text, &doc, err, sizeof err), LD_ERR_TOO_LARGE);
  assert_non_null(strstr(err, "string longer"));
  free(text);

  char key[LD_TOML_MAX_KEY + 8];
  memset(key, 'k', sizeof key);
  key[sizeof key - 1] = '\0';
  char line[LD_TOML_MAX_KEY + 32];
  snprintf(line, sizeof line, "%s = 1\n", key);
  assert_int_equal(parse(line, &doc, err, sizeof err), LD_ERR_TOO_LARGE);

  size_t n = LD_TOML_MAX_ITEMS + 1;
  text = malloc(n * 3 + 16);
  size_t k = (size_t)sprintf(text, "a = [");
  for (size_t i = 0; i < n; i++)
    k += (size_t)sprintf(text + k, "1,");
  sprintf(text + k, "]\n");
  assert_int_equal(parse(text, &doc, err, sizeof err), LD_ERR_TOO_LARGE);
  assert_non_null(strstr(err, "array longer"));
  free(text);

  text = malloc((LD_TOML_MAX_ENTRIES + 1) * 16);
  k = 0;
  for (size_t i = 0; i <= LD_TOML_MAX_ENTRIES; i++)
    k += (size_t)sprintf(text + k, "k%zu = %zu\n", i, i);
  assert_int_equal(parse(text, &doc, err, sizeof err), LD_ERR_TOO_LARGE);
  assert_non_null(strstr(err, "more than"));
  free(text);

  assert_int_equal(ld_toml_parse("", LD_TOML_MAX_INPUT + 1, &doc, err, sizeof err),
                   LD_ERR_TOO_LARGE);
}

static void accepts_a_byte_order_mark_and_empty_input(void **state) {
  (void)state;
  ld_toml_t doc;
  assert_int_equal(parse("\xEF\xBB\xBF"
                         "a = 1\n",
                         &doc, NULL, 0),
                   0);
  assert_int_equal(doc.n_entries, 1);
  ld_toml_clear(&doc);
  assert_int_equal(parse("", &doc, NULL, 0), 0);
  assert_int_equal(doc.n_entries, 0);
  assert_int_equal(parse("\n\n   # only comments\n\t\n", &doc, NULL, 0), 0);
  assert_int_equal(doc.n_entries, 0);
  assert_string_equal(ld_toml_type_name(LD_TOML_ARRAY), "array");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reads_an_nwaku_config_file),
      cmocka_unit_test(decodes_string_escapes),
      cmocka_unit_test(refuses_everything_else_with_the_line),
      cmocka_unit_test(nul_bytes_and_caps_are_refused),
      cmocka_unit_test(accepts_a_byte_order_mark_and_empty_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
