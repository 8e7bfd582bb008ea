#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "logosdelivery/flags.h"

typedef struct {
  char key[LD_FLAG_STRING_MAX];
  int64_t port;
  bool relay;
  ld_strlist_t shards;
} opts_t;

static size_t table(opts_t *o, ld_flag_t *t) {
  ld_strlist_clear(&o->shards);
  memset(o, 0, sizeof *o);
  o->port = 60000;
  ld_flag_t f[] = {
      {"nodekey", LD_FLAG_STRING, o->key, 0, 0, "key"},
      {"tcp-port", LD_FLAG_INT, &o->port, 0, 65535, "port"},
      {"relay", LD_FLAG_BOOL, &o->relay, 0, 0, "relay"},
      {"shard", LD_FLAG_LIST, &o->shards, 0, 0, "shards"},
  };
  memcpy(t, f, sizeof f);
  return 4;
}

static void opts_init(opts_t *o) {
  memset(o, 0, sizeof *o);
}

static int parse(opts_t *o, ld_flags_result_t *res, int argc, char **argv) {
  ld_flag_t t[4];
  size_t n = table(o, t);
  memset(res, 0, sizeof *res);
  int rc = ld_flags_parse(t, n, argc, argv, res);
  return rc != 0 ? rc : ld_flags_apply_env(t, n, "WAKUNODE2_", res);
}

static void accepts_the_three_nwaku_forms(void **state) {
  (void)state;
  opts_t o;
  ld_flags_result_t res;
  opts_init(&o);
  char *argv[] = {"--nodekey=abc", "--tcp-port", "0", "--relay", "--shard:1", "--shard=7", "x"};
  assert_int_equal(parse(&o, &res, 7, argv), 0);
  assert_string_equal(o.key, "abc");
  assert_int_equal(o.port, 0);
  assert_true(o.relay);
  assert_int_equal(o.shards.count, 2);
  assert_string_equal(o.shards.items[1], "7");
  assert_int_equal(res.n_positional, 1);
  assert_string_equal(res.positional[0], "x");
  ld_strlist_clear(&o.shards);
}

static void environment_fills_what_the_command_line_did_not(void **state) {
  (void)state;
  setenv("WAKUNODE2_TCP_PORT", "61000", 1);
  setenv("WAKUNODE2_NODEKEY", "fromenv", 1);
  setenv("WAKUNODE2_SHARD", "2,3", 1);
  opts_t o;
  ld_flags_result_t res;
  opts_init(&o);
  char *argv[] = {"--nodekey=fromcli", "--relay=false"};
  assert_int_equal(parse(&o, &res, 2, argv), 0);
  assert_string_equal(o.key, "fromcli");
  assert_int_equal(o.port, 61000);
  assert_false(o.relay);
  assert_int_equal(o.shards.count, 2);
  assert_string_equal(o.shards.items[0], "2");
  unsetenv("WAKUNODE2_TCP_PORT");
  unsetenv("WAKUNODE2_NODEKEY");
  unsetenv("WAKUNODE2_SHARD");
  ld_strlist_clear(&o.shards);
}

static void bad_input_is_named(void **state) {
  (void)state;
  opts_t o;
  ld_flags_result_t res;
  opts_init(&o);
  char *unknown[] = {"--no-such-flag=1"};
  assert_int_equal(parse(&o, &res, 1, unknown), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(res.error, "no-such-flag"));
  char *range[] = {"--tcp-port=70000"};
  assert_int_equal(parse(&o, &res, 1, range), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(res.error, "tcp-port"));
  char *nan[] = {"--tcp-port=12ab"};
  assert_int_equal(parse(&o, &res, 1, nan), LD_ERR_INVALID_ARG);
  char *missing[] = {"--nodekey"};
  assert_int_equal(parse(&o, &res, 1, missing), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(res.error, "missing value"));
  char *badbool[] = {"--relay=maybe"};
  assert_int_equal(parse(&o, &res, 1, badbool), LD_ERR_INVALID_ARG);
  ld_strlist_clear(&o.shards);
}

static void environment_lists_may_be_json_arrays(void **state) {
  (void)state;
  opts_t o;
  ld_flags_result_t res;
  opts_init(&o);
  setenv("WAKUNODE2_SHARD", "[1, \"2\", 3]", 1);
  assert_int_equal(parse(&o, &res, 0, NULL), 0);
  assert_int_equal(o.shards.count, 3);
  assert_string_equal(o.shards.items[0], "1");
  assert_string_equal(o.shards.items[1], "2");
  setenv("WAKUNODE2_SHARD", "[1, true]", 1);
  assert_int_equal(parse(&o, &res, 0, NULL), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(res.error, "WAKUNODE2_SHARD"));
  setenv("WAKUNODE2_SHARD", "[1,", 1);
  assert_int_equal(parse(&o, &res, 0, NULL), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(res.error, "not a JSON array"));
  unsetenv("WAKUNODE2_SHARD");
  setenv("WAKUNODE2_TCP_PORT", "x", 1);
  assert_int_equal(parse(&o, &res, 0, NULL), LD_ERR_INVALID_ARG);
  assert_non_null(strstr(res.error, "tcp-port"));
  unsetenv("WAKUNODE2_TCP_PORT");
  ld_strlist_clear(&o.shards);
}

static int parse_toml(opts_t *o, ld_flags_result_t *res, int argc, char **argv, const char *text) {
  ld_flag_t t[4];
  size_t n = table(o, t);
  memset(res, 0, sizeof *res);
  ld_toml_t doc;
  char err[LD_TOML_ERROR_MAX];
  assert_int_equal(ld_toml_parse(text, strlen(text), &doc, err, sizeof err), 0);
  int rc = ld_flags_parse(t, n, argc, argv, res);
  if (rc == 0)
    rc = ld_flags_apply_toml(t, n, &doc, NULL, res);
  ld_toml_clear(&doc);
  return rc;
}

static void config_file_fills_what_is_left(void **state) {
  (void)state;
  opts_t o;
  ld_flags_result_t res;
  opts_init(&o);
  char *argv[] = {"--tcp-port=1"};
  const char *text = "nodekey = 'k'\ntcp-port = 2\nrelay = true\nshard = [4, '5']\n";
  assert_int_equal(parse_toml(&o, &res, 1, argv, text), 0);
  assert_string_equal(o.key, "k");
  assert_int_equal(o.port, 1);
  assert_true(o.relay);
  assert_int_equal(o.shards.count, 2);
  assert_string_equal(o.shards.items[1], "5");
  assert_int_equal(parse_toml(&o, &res, 0, NULL, "shard = 6\n"), 0);
  assert_int_equal(o.shards.count, 1);
  assert_string_equal(o.shards.items[0], "6");

  struct {
    const char *text, *needle;
  } bad[] = {
      {"\nunknown = 1\n", "line 2: unknown: unknown option"},
      {"tcp-port = '1'\n", "line 1: tcp-port: expected an integer, got a string"},
      {"relay = 1\n", "expected a boolean, got an integer"},
      {"nodekey = ['a']\n", "expected a string, got an array"},
      {"shard = [true]\n", "expected strings or integers, got a boolean"},
      {"tcp-port = 70000\n", "line 1: tcp-port: value 70000 out of range"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(parse_toml(&o, &res, 0, NULL, bad[i].text), LD_ERR_INVALID_ARG);
    if (strstr(res.error, bad[i].needle) == NULL)
      fail_msg("'%s' lacks '%s'", res.error, bad[i].needle);
  }
  ld_strlist_clear(&o.shards);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(accepts_the_three_nwaku_forms),
      cmocka_unit_test(environment_fills_what_the_command_line_did_not),
      cmocka_unit_test(bad_input_is_named),
      cmocka_unit_test(environment_lists_may_be_json_arrays),
      cmocka_unit_test(config_file_fills_what_is_left),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
