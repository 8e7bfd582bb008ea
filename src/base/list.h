/* Intrusive doubly linked lists: circular, with a sentinel head.
 *
 * A list is an ld_link_t head set up by ld_list_init; an element embeds an ld_link_t and is found
 * back from it with LD_CONTAINER_OF. A link that is all zero (calloc) is unlinked. No allocation,
 * no global state; a list is used from one thread at a time. */
#ifndef LD_BASE_LIST_H
#define LD_BASE_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct ld_link {
  struct ld_link *prev, *next;
} ld_link_t;

#define LD_CONTAINER_OF(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* Makes `head` an empty list. */
static inline void ld_list_init(ld_link_t *head) {
  head->prev = head->next = head;
}
static inline bool ld_list_empty(const ld_link_t *head) {
  return head->next == head;
}
static inline bool ld_link_linked(const ld_link_t *l) {
  return l->next != NULL;
}
/* Links the unlinked `l` in just before `head`: last in the list `head`. */
static inline void ld_list_push(ld_link_t *head, ld_link_t *l) {
  l->prev = head->prev;
  l->next = head;
  head->prev->next = l;
  head->prev = l;
}
/* Links the unlinked `l` first in the list `head`. */
static inline void ld_list_push_front(ld_link_t *head, ld_link_t *l) {
  ld_list_push(head->next, l);
}
/* Unlinks `l` when it is linked; a no-op otherwise. */
static inline void ld_link_remove(ld_link_t *l) {
  if (l->next == NULL)
    return;
  l->prev->next = l->next;
  l->next->prev = l->prev;
  l->prev = l->next = NULL;
}
/* Makes the linked `l` the first of the list `head` (the most recent, in an LRU). */
static inline void ld_list_move_front(ld_link_t *head, ld_link_t *l) {
  ld_link_remove(l);
  ld_list_push_front(head, l);
}
/* The first and the last link of the list `head`, NULL when it is empty. */
static inline ld_link_t *ld_list_first(const ld_link_t *head) {
  return ld_list_empty(head) ? NULL : head->next;
}
static inline ld_link_t *ld_list_last(const ld_link_t *head) {
  return ld_list_empty(head) ? NULL : head->prev;
}

#endif
