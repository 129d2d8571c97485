/*
 * Minibatch indices.
 *
 * With replacement, m independent uniform draws. Without replacement (the
 * default), the m items of a batch are distinct and each batch is a uniform
 * m-subset drawn afresh; two exact methods, chosen by the batch's share of n:
 *  - small batches (m <= n/2): draw uniformly and redraw items already in the
 *    batch; cheap because repeats are rare. Up to MB_SCAN_MAX items the batch
 *    so far is scanned; beyond, the items drawn are marked in a byte per item
 *    that is cleared after each batch (bytes rather than bits: neighbouring
 *    items then never share a memory word, so marking one never stalls the
 *    check of the next), or, where n bytes would not stay in the cache, kept
 *    in a small hash set of the batch (MB_HASH_MIN_N, below). Whichever way
 *    a repeat is found, the same draws are redrawn, so the batches are the
 *    same;
 *  - large batches: a partial Fisher-Yates shuffle of the identity permutation,
 *    undone after the batch is copied out, so no state survives from one batch
 *    to the next (a continued run then draws exactly the batches the long run
 *    would have drawn);
 *  - the full data (m = n) in a fixed order, which makes gradient descent exact.
 */
#include <string.h>
#include "sgld.h"

enum { MB_REPLACE, MB_BITMAP, MB_HASH, MB_SHUFFLE, MB_ALL };
#define MB_SCAN_MAX 16
/* The byte per item is read and written at random places of an n-byte
   array; from this n on, a hash set of the batch's items (a few kB, in L1)
   is used instead. Measured (logistic regression, d = 20, batch 100, 2 MB
   pages, load 5 on 2 cores): at n = 10^7 the marks cost 1.6-1.8 us of a
   7 us iteration (against replace = TRUE, which has none); at 1 MB the
   marks still fit in L2 (1 MB per core here). */
#define MB_HASH_MIN_N ((R_xlen_t) 1 << 20)

/* slots of the hash set: a power of two, at least 4 m (a quarter full) */
static size_t hash_slots(int m) {
  size_t s = 64;
  while (s < 4 * (size_t) m) s *= 2;
  return s;
}

static int minibatch_mode(R_xlen_t n, int m, int replace) {
  if (replace) return MB_REPLACE;
  if (m == n) return MB_ALL;
  if ((R_xlen_t) m * 2 > n) return MB_SHUFFLE;
  return n >= MB_HASH_MIN_N && m > MB_SCAN_MAX ? MB_HASH : MB_BITMAP;
}

size_t minibatch_bytes(R_xlen_t n, int m, int replace) {
  switch (minibatch_mode(n, m, replace)) {
  case MB_BITMAP: return (size_t) n;
  case MB_HASH: return hash_slots(m) * sizeof(uint64_t);
  case MB_SHUFFLE: return ((size_t) n + (size_t) m) * sizeof(R_xlen_t);
  case MB_ALL: return (size_t) n * sizeof(R_xlen_t);
  default: return 0;
  }
}

void minibatch_init(sgld_minibatch *mb, R_xlen_t n, int m, int replace, void *memory) {
  mb->n = n;
  mb->m = m;
  mb->mode = minibatch_mode(n, m, replace);
  mb->perm = NULL;
  mb->seen = NULL;
  mb->set = NULL;
  if (mb->mode == MB_BITMAP) {
    mb->seen = memory;
    memset(mb->seen, 0, minibatch_bytes(n, m, replace));
  } else if (mb->mode == MB_HASH) {
    mb->set = memory;
    memset(mb->set, 0, minibatch_bytes(n, m, replace));
  } else if (mb->mode != MB_REPLACE) {
    mb->perm = memory;
    for (R_xlen_t i = 0; i < n; i++) mb->perm[i] = i;
  }
}

const R_xlen_t *minibatch_draw(sgld_minibatch *mb, sgld_rng *r, R_xlen_t *idx) {
  const uint64_t n = (uint64_t) mb->n;
  const int m = mb->m;
  switch (mb->mode) {
  case MB_REPLACE:
    for (int k = 0; k < m; k++) idx[k] = (R_xlen_t) rng_below(r, n);
    return idx;
  case MB_BITMAP: {
    if (m <= MB_SCAN_MAX) {
      /* tiny batches: compare each draw with the few before it, no memory
         traffic; the generator is copied for the same reason as below (a
         store to idx, a signed 64-bit integer, may alias its state) */
      sgld_rng local = *r;
      for (int k = 0; k < m; k++) {
        R_xlen_t i;
        int dup;
        do {
          i = (R_xlen_t) rng_below(&local, n);
          dup = 0;
          for (int l = 0; l < k; l++) dup |= idx[l] == i;
        } while (dup);
        idx[k] = i;
      }
      *r = local;
      return idx;
    }
    unsigned char *seen = mb->seen;
    /* a private copy of the generator: a store through a char pointer may alias
       anything, and would otherwise force the state out to memory every draw */
    sgld_rng local = *r;
    for (int k = 0; k < m; k++) {
      uint64_t i;
      do i = rng_below(&local, n); while (seen[i]);
      seen[i] = 1;
      idx[k] = (R_xlen_t) i;
    }
    for (int k = 0; k < m; k++) seen[idx[k]] = 0;
    *r = local;
    return idx;
  }
  case MB_HASH: {
    /* open addressing: item i + 1 in a slot (0 = empty), from the slot its
       multiplicative hash names, moving on to the next while taken */
    uint64_t *set = mb->set;
    const uint64_t mask = hash_slots(m) - 1;
    sgld_rng local = *r;
    for (int k = 0; k < m; k++) {
      uint64_t i, h;
      for (;;) {
        i = rng_below(&local, n);
        h = ((i * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
        while (set[h] && set[h] != i + 1) h = (h + 1) & mask;
        if (!set[h]) break;                    /* not in the batch yet */
      }
      set[h] = i + 1;
      idx[k] = (R_xlen_t) i;
    }
    for (int k = 0; k < m; k++) {           /* empty the set again */
      uint64_t h = (((uint64_t) idx[k] * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & mask;
      while (set[h] != (uint64_t) idx[k] + 1) h = (h + 1) & mask;
      set[h] = 0;
    }
    *r = local;
    return idx;
  }
  case MB_SHUFFLE: {
    R_xlen_t *perm = mb->perm, *swaps = mb->perm + mb->n;
    for (int k = 0; k < m; k++) {
      R_xlen_t j = k + (R_xlen_t) rng_below(r, n - (uint64_t) k);
      swaps[k] = j;
      R_xlen_t tmp = perm[k];
      perm[k] = perm[j];
      perm[j] = tmp;
    }
    memcpy(idx, perm, (size_t) m * sizeof(R_xlen_t));
    for (int k = m - 1; k >= 0; k--) {     /* back to the identity */
      R_xlen_t j = swaps[k], tmp = perm[k];
      perm[k] = perm[j];
      perm[j] = tmp;
    }
    return idx;
  }
  default:
    return mb->perm;
  }
}
