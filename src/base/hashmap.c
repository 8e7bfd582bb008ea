#include "base/hashmap.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

#define HASHMAP_MIN_BUCKETS 8

typedef struct entry {
  struct entry *next;
  uint64_t hash;
  void *value;
  size_t klen;
  uint8_t key[];
} entry_t;

struct ld_hashmap {
  entry_t **buckets;
  size_t nbuckets; /* a power of two */
  size_t size;
};

/* ---- SipHash ------------------------------------------------------------------------------ */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static inline void sip_round(uint64_t v[4]) {
  v[0] += v[1];
  v[1] = ROTL(v[1], 13);
  v[1] ^= v[0];
  v[0] = ROTL(v[0], 32);
  v[2] += v[3];
  v[3] = ROTL(v[3], 16);
  v[3] ^= v[2];
  v[0] += v[3];
  v[3] = ROTL(v[3], 21);
  v[3] ^= v[0];
  v[2] += v[1];
  v[1] = ROTL(v[1], 17);
  v[1] ^= v[2];
  v[2] = ROTL(v[2], 32);
}

static inline uint64_t load_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

static inline void sip_absorb(uint64_t v[4], uint64_t m, int crounds) {
  v[3] ^= m;
  for (int i = 0; i < crounds; i++)
    sip_round(v);
  v[0] ^= m;
}

static uint64_t siphash(const uint8_t key[16], const uint8_t *in, size_t len, int crounds,
                        int drounds) {
  uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
  uint64_t v[4] = {k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
                   k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
  size_t full = len - len % 8;
  for (size_t i = 0; i < full; i += 8)
    sip_absorb(v, load_le64(in + i), crounds);
  uint64_t last = (uint64_t)len << 56;
  for (size_t i = 0; i < len % 8; i++)
    last |= (uint64_t)in[full + i] << (8 * i);
  sip_absorb(v, last, crounds);
  v[2] ^= 0xff;
  for (int i = 0; i < drounds; i++)
    sip_round(v);
  return v[0] ^ v[1] ^ v[2] ^ v[3];
}

uint64_t ld_siphash13(const uint8_t key[16], const void *data, size_t len) {
  return siphash(key, data, len, 1, 3);
}

uint64_t ld_siphash24(const uint8_t key[16], const void *data, size_t len) {
  return siphash(key, data, len, 2, 4);
}

static uint8_t hash_key[16];
static pthread_once_t hash_key_once = PTHREAD_ONCE_INIT;

static int read_urandom(uint8_t *out, size_t len) {
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  size_t got = 0;
  while (got < len) {
    ssize_t n = read(fd, out + got, len - got);
    if (n <= 0 && !(n < 0 && errno == EINTR))
      break;
    if (n > 0)
      got += (size_t)n;
  }
  close(fd);
  return got == len ? 0 : -1;
}

static void hash_key_init(void) {
  ssize_t n;
  do {
    n = getrandom(hash_key, sizeof hash_key, 0);
  } while (n < 0 && errno == EINTR);
  if (n == (ssize_t)sizeof hash_key || read_urandom(hash_key, sizeof hash_key) == 0)
    return;
  /* Last resort: still unpredictable enough to defeat precomputed collisions. */
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t mix[2] = {(uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32),
                     (uint64_t)(uintptr_t)&ts ^ (uint64_t)getpid()};
  memcpy(hash_key, mix, sizeof hash_key);
}

uint64_t ld_hash_bytes(const void *data, size_t len) {
  pthread_once(&hash_key_once, hash_key_init);
  return ld_siphash13(hash_key, data, len);
}

/* ---- the map ------------------------------------------------------------------------------ */

ld_hashmap_t *ld_hashmap_new(size_t initial_capacity) {
  size_t n = HASHMAP_MIN_BUCKETS;
  while (n < initial_capacity && n <= SIZE_MAX / 2 / sizeof(entry_t *))
    n *= 2;
  ld_hashmap_t *m = calloc(1, sizeof *m);
  if (m == NULL)
    return NULL;
  m->buckets = calloc(n, sizeof *m->buckets);
  if (m->buckets == NULL) {
    free(m);
    return NULL;
  }
  m->nbuckets = n;
  return m;
}

void ld_hashmap_clear(ld_hashmap_t *m, void (*free_value)(void *)) {
  for (size_t i = 0; i < m->nbuckets; i++) {
    entry_t *e = m->buckets[i];
    while (e != NULL) {
      entry_t *next = e->next;
      if (free_value != NULL)
        free_value(e->value);
      free(e);
      e = next;
    }
    m->buckets[i] = NULL;
  }
  m->size = 0;
}

void ld_hashmap_free(ld_hashmap_t *m, void (*free_value)(void *)) {
  if (m == NULL)
    return;
  ld_hashmap_clear(m, free_value);
  free(m->buckets);
  free(m);
}

size_t ld_hashmap_size(const ld_hashmap_t *m) {
  return m->size;
}

static entry_t **find_slot(const ld_hashmap_t *m, uint64_t hash, const void *key, size_t klen) {
  entry_t **slot = &m->buckets[hash & (m->nbuckets - 1)];
  while (*slot != NULL) {
    entry_t *e = *slot;
    if (e->hash == hash && e->klen == klen && (klen == 0 || memcmp(e->key, key, klen) == 0))
      return slot;
    slot = &e->next;
  }
  return slot;
}

static void grow(ld_hashmap_t *m) {
  if (m->nbuckets > SIZE_MAX / 2 / sizeof(entry_t *))
    return;
  size_t n = m->nbuckets * 2;
  entry_t **nb = calloc(n, sizeof *nb);
  if (nb == NULL)
    return; /* keep working with longer chains */
  for (size_t i = 0; i < m->nbuckets; i++) {
    entry_t *e = m->buckets[i];
    while (e != NULL) {
      entry_t *next = e->next;
      entry_t **dst = &nb[e->hash & (n - 1)];
      e->next = *dst;
      *dst = e;
      e = next;
    }
  }
  free(m->buckets);
  m->buckets = nb;
  m->nbuckets = n;
}

int ld_hashmap_put(ld_hashmap_t *m, const void *key, size_t klen, void *value, void **old_value) {
  uint64_t hash = ld_hash_bytes(key, klen);
  entry_t **slot = find_slot(m, hash, key, klen);
  if (*slot != NULL) {
    if (old_value != NULL)
      *old_value = (*slot)->value;
    (*slot)->value = value;
    return 0;
  }
  if (klen > SIZE_MAX - sizeof(entry_t))
    return LD_ERR_NOMEM;
  entry_t *e = malloc(sizeof *e + klen);
  if (e == NULL)
    return LD_ERR_NOMEM;
  e->hash = hash;
  e->value = value;
  e->klen = klen;
  if (klen > 0)
    memcpy(e->key, key, klen);
  e->next = NULL;
  *slot = e;
  m->size++;
  if (m->size > m->nbuckets)
    grow(m);
  if (old_value != NULL)
    *old_value = NULL;
  return 0;
}

void *ld_hashmap_get(const ld_hashmap_t *m, const void *key, size_t klen) {
  entry_t *e = *find_slot(m, ld_hash_bytes(key, klen), key, klen);
  return e != NULL ? e->value : NULL;
}

bool ld_hashmap_contains(const ld_hashmap_t *m, const void *key, size_t klen) {
  return *find_slot(m, ld_hash_bytes(key, klen), key, klen) != NULL;
}

void *ld_hashmap_remove(ld_hashmap_t *m, const void *key, size_t klen) {
  entry_t **slot = find_slot(m, ld_hash_bytes(key, klen), key, klen);
  entry_t *e = *slot;
  if (e == NULL)
    return NULL;
  *slot = e->next;
  void *value = e->value;
  free(e);
  m->size--;
  return value;
}

bool ld_hashmap_next(const ld_hashmap_t *m, ld_hashmap_iter_t *it, const void **key, size_t *klen,
                     void **value) {
  entry_t *e = it->next;
  while (e == NULL && it->bucket < m->nbuckets)
    e = m->buckets[it->bucket++];
  if (e == NULL)
    return false;
  it->next = e->next;
  if (key != NULL)
    *key = e->key;
  if (klen != NULL)
    *klen = e->klen;
  if (value != NULL)
    *value = e->value;
  return true;
}

int ld_hashmap_put_u64(ld_hashmap_t *m, uint64_t key, void *value, void **old_value) {
  return ld_hashmap_put(m, &key, sizeof key, value, old_value);
}

void *ld_hashmap_get_u64(const ld_hashmap_t *m, uint64_t key) {
  return ld_hashmap_get(m, &key, sizeof key);
}

void *ld_hashmap_remove_u64(ld_hashmap_t *m, uint64_t key) {
  return ld_hashmap_remove(m, &key, sizeof key);
}
