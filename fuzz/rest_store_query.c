/* Fuzz target: the GET /store/v3/messages query parser. The input is up to ten lines, one per
 * parameter in the order of ld_rest_store_params_t (peerAddr, includeData, pubsubTopic,
 * contentTopics, startTime, endTime, hashes, cursor, ascending, pageSize); a missing line is an
 * absent parameter. A parsed query must respect its documented bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rest/json.h"
#include "rest/store_query.h"

#define N_FIELDS 10

static void check(const ld_rest_store_query_t *q) {
  if (q->page_size < 1 || q->page_size > LD_REST_STORE_MAX_PAGE_SIZE)
    abort();
  if (q->n_content_topics > LD_REST_STORE_MAX_CONTENT_TOPICS ||
      q->n_hashes > LD_REST_STORE_MAX_HASHES)
    abort();
  if ((q->has_start_time && q->start_time <= 0) || (q->has_end_time && q->end_time <= 0))
    abort();
  for (size_t i = 0; i < q->n_content_topics; i++)
    if (q->content_topics[i][0] == '\0' || strchr(q->content_topics[i], ',') != NULL)
      abort();
  if ((q->peer_addr == NULL) != (q->peer_id == NULL))
    abort();
  if (q->pubsub_topic != NULL && q->pubsub_topic[0] == '\0')
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (text == NULL)
    return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  const char *fields[N_FIELDS] = {0};
  char *p = text;
  for (size_t i = 0; i < N_FIELDS && p != NULL; i++) {
    fields[i] = p;
    p = strchr(p, '\n');
    if (p != NULL)
      *p++ = '\0';
  }
  ld_rest_store_params_t params = {fields[0], fields[1], fields[2], fields[3], fields[4],
                                   fields[5], fields[6], fields[7], fields[8], fields[9]};
  ld_rest_store_request_t r;
  char err[LD_REST_ERR_MAX];
  if (ld_rest_store_query_parse(&params, &r, err, sizeof err) == 0) {
    check(&r.query);
    ld_rest_store_request_clear(&r);
  } else if (memchr(err, '\0', sizeof err) == NULL) {
    abort(); /* the reason is always a terminated string */
  }
  free(text);
  return 0;
}
