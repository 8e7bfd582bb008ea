/* Requests to a REST server under test that assert as they go (cmocka): the answer, its status,
 * its body or its JSON. Each runs on the test's loop (http_request_on_loop). */
#ifndef LD_TESTS_REST_CALL_H
#define LD_TESTS_REST_CALL_H

#include <jansson.h>
#include <stdint.h>
#include <uv.h>

#include "http_client.h"

#define REST_JSON_HDR "Content-Type: application/json\r\n"

/* Sends `method path` with the header lines `headers` (may be NULL) and `body` (a C string, may be
 * NULL) to the server on `port`; asserts that it answered. Free with http_response_free. */
http_response_t rest_call(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                          const char *headers, const char *body);

/* rest_call with REST_JSON_HDR when there is a body. */
http_response_t rest_call_json(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                               const char *body);

/* Asserts the status and, when `text` is not NULL, the exact body; prints the answer when either
 * differs. */
void rest_expect(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                 const char *headers, const char *body, int status, const char *text);

/* The answer's JSON (rest_call_json), after asserting the status and the media type
 * application/json; prints the answer when the status differs. Free with json_decref. */
json_t *rest_json_status(uv_loop_t *loop, uint16_t port, const char *method, const char *path,
                         const char *body, int status);

/* The string member `key` of `obj`, asserted present. */
const char *rest_str(const json_t *obj, const char *key);

#endif
