/* Requests to a REST server under test that assert as they go. */
#include "rest_call.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

http_response_t rest_call(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                          const char *headers, const char *body) {
  http_response_t r;
  int rc =
      http_request_on_loop(loop, port, method, path, headers, body, body ? strlen(body) : 0, &r);
  assert_int_equal(rc, 0);
  return r;
}

http_response_t rest_call_json(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                               const char *body) {
  return rest_call(loop, port, method, path, body ? REST_JSON_HDR : NULL, body);
}

void rest_expect(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                 const char *headers, const char *body, int status, const char *text) {
  http_response_t r = rest_call(loop, port, method, path, headers, body);
  if (r.status != status || (text != NULL && strcmp(r.body, text) != 0))
    print_error("%s %s -> %d %s\n", method, path, r.status, r.body);
  assert_int_equal(r.status, status);
  if (text != NULL)
    assert_string_equal(r.body, text);
  http_response_free(&r);
}

json_t *rest_json_status(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                         const char *body, int status) {
  http_response_t r = rest_call_json(loop, port, method, path, body);
  if (r.status != status)
    print_error("%s %s -> %d %s\n", method, path, r.status, r.body);
  assert_int_equal(r.status, status);
  char ct[64];
  assert_string_equal(http_header(&r, "Content-Type", ct, sizeof ct), "application/json");
  json_error_t err;
  json_t *j = json_loads(r.body, 0, &err);
  assert_non_null(j);
  http_response_free(&r);
  return j;
}

const char *rest_str(const json_t *obj, const char *key) {
  const char *s = json_string_value(json_object_get(obj, key));
  assert_non_null(s);
  return s;
}
