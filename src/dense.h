/*
 * Dense minibatch products, shared by the regression kernels
 * (model_logistic.c, model_linear.c): for a block of DENSE_BLOCK rows z_k of
 * the data (each p covariates, contiguous), the dot products z_k . w, then
 * the update g += sum_k c_k z_k.
 *
 * Why a block: each pass over the parameters then serves DENSE_BLOCK rows, so
 * w and g are loaded and stored once per block instead of once per row, and
 * the block's rows, just read for the dot products, are still in L1/L2 when
 * the update reads them again.
 * Why vectors: R compiles with -O2, where GCC 12 vectorises only loops that
 * need no reordering of a sum and no run-time aliasing check. The dot
 * products are written with explicit 2-double vectors and the updates carry
 * `omp simd` (g never overlaps the data), so both run two doubles per
 * instruction (SSE2, the x86-64 baseline; no -march flags, so the package
 * runs anywhere). Measured on this machine (logistic regression, batch 100):
 * see model_logistic.c.
 *
 * The dot products' sums are reordered (four partial sums), so they differ
 * from a row-by-row scalar loop in the last bits; they are the same for every
 * run, on any x86-64 vector width, and nothing here depends on threads.
 */
#ifndef SGLD_DENSE_H
#define SGLD_DENSE_H

#include <string.h>

#define DENSE_BLOCK 4
/* below this many covariates a plain loop is as fast (the vector set-up and
   the final horizontal sum cost more than they save) and the kernels keep
   their scalar loops, so small models give the same bits as before */
#define DENSE_MIN_P 8

/* The sums run in four interleaved partial sums (lane l takes coordinates
   l, l + 4, l + 8, ...), added in a fixed order at the end, whatever the
   vector unit: the draws do not depend on the compiler's choice of vector
   width, as they would with an `omp simd reduction`. The lanes are two
   2-double vectors (GNU C vector extensions, which GCC and clang both
   have): written as an array of four lanes, GCC 12 -O2 kept the partial sums
   in memory, a load and a store per multiply-add; as vectors they stay in
   registers (checked in the assembly). Other compilers get the same lanes as
   plain doubles. */
#if defined(__GNUC__)
typedef double dense_v2 __attribute__((vector_size(2 * sizeof(double))));
typedef float dense_f2 __attribute__((vector_size(2 * sizeof(float))));
static inline dense_v2 dense_load2(const double *x) {
  dense_v2 v;
  memcpy(&v, x, sizeof v);     /* unaligned load: rows start anywhere */
  return v;
}
/* two floats, widened: the arithmetic stays in double */
static inline dense_v2 dense_load2_f(const float *x) {
  dense_f2 v;
  memcpy(&v, x, sizeof v);
  return __builtin_convertvector(v, dense_v2);
}
#define DENSE_LANE_SUM(lo, hi) (((lo)[0] + (lo)[1]) + ((hi)[0] + (hi)[1]))
#endif

#ifdef _OPENMP
#define DENSE_SIMD _Pragma("omp simd")
#else
#define DENSE_SIMD
#endif

#ifdef __GNUC__
#define DENSE_PREFETCH(x) __builtin_prefetch(x)
#else
#define DENSE_PREFETCH(x) ((void) 0)
#endif

/* The kernels, for rows of doubles (suffix none) and of floats (suffix _f,
   storage = "float": half the bytes per row, each element widened to double
   as it is loaded, so only the data's own rounding differs). One template, so
   the two storages cannot drift apart.
   - dense_dot: z . w for one row: the first 4 floor(p / 4) coordinates in
     the four lanes, then the rest in order;
   - dense_dots4: out[k] = z[k] . w for the DENSE_BLOCK rows z[0..3], in the
     same lanes (so a row gives the same bits in a block or alone);
   - dense_axpy4: g += c[0] z[0] + ... + c[3] z[3]; dense_axpy: g += c z;
   - dense_prefetch_rows: every cache line of rows idx[from .. to) (see
     below). */
#if defined(__GNUC__)
#define DENSE_DOTS4_BODY(S)                                                          \
  dense_v2 a0 = {0.0, 0.0}, a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0, d0 = a0, d1 = a0; \
  for (int j = 0; j < p4; j += 4) {                                                  \
    const dense_v2 wl = dense_load2(w + j), wh = dense_load2(w + j + 2);             \
    a0 += dense_load2##S(z0 + j) * wl; a1 += dense_load2##S(z0 + j + 2) * wh;        \
    b0 += dense_load2##S(z1 + j) * wl; b1 += dense_load2##S(z1 + j + 2) * wh;        \
    c0 += dense_load2##S(z2 + j) * wl; c1 += dense_load2##S(z2 + j + 2) * wh;        \
    d0 += dense_load2##S(z3 + j) * wl; d1 += dense_load2##S(z3 + j + 2) * wh;        \
  }                                                                                  \
  out[0] = dense_tail##S(DENSE_LANE_SUM(a0, a1), z0, w, p4, p);                      \
  out[1] = dense_tail##S(DENSE_LANE_SUM(b0, b1), z1, w, p4, p);                      \
  out[2] = dense_tail##S(DENSE_LANE_SUM(c0, c1), z2, w, p4, p);                      \
  out[3] = dense_tail##S(DENSE_LANE_SUM(d0, d1), z3, w, p4, p);
#else
#define DENSE_DOTS4_BODY(S)                                                          \
  (void) z0; (void) z1; (void) z2; (void) z3; (void) p4;                             \
  for (int b = 0; b < DENSE_BLOCK; b++) out[b] = dense_dot##S(z[b], w, p);
#endif

#define DENSE_KERNELS(T, S)                                                          \
static inline double dense_tail##S(double s, const T *z, const double *w, int j, int p) { \
  for (; j < p; j++) s += (double) z[j] * w[j];                                      \
  return s;                                                                          \
}                                                                                    \
static inline double dense_dot##S(const T *z, const double *w, int p) {              \
  const int p4 = p - p % 4;                                                          \
  double s[4] = {0.0, 0.0, 0.0, 0.0};                                                \
  for (int j = 0; j < p4; j += 4)                                                    \
    for (int l = 0; l < 4; l++) s[l] += (double) z[j + l] * w[j + l];                \
  return dense_tail##S((s[0] + s[1]) + (s[2] + s[3]), z, w, p4, p);                  \
}                                                                                    \
static inline void dense_dots4##S(const T *const *z, const double *w, int p, double *out) { \
  const T *z0 = z[0], *z1 = z[1], *z2 = z[2], *z3 = z[3];                            \
  const int p4 = p - p % 4;                                                          \
  DENSE_DOTS4_BODY(S)                                                                \
}                                                                                    \
static inline void dense_axpy4##S(double *g, const T *const *z, const double *c, int p) { \
  const T *z0 = z[0], *z1 = z[1], *z2 = z[2], *z3 = z[3];                            \
  const double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];                           \
  DENSE_SIMD                                                                         \
  for (int j = 0; j < p; j++)                                                        \
    g[j] += (c0 * (double) z0[j] + c1 * (double) z1[j]) + (c2 * (double) z2[j] + c3 * (double) z3[j]); \
}                                                                                    \
static inline void dense_axpy##S(double *g, const T *z, double c, int p) {           \
  DENSE_SIMD                                                                         \
  for (int j = 0; j < p; j++) g[j] += c * (double) z[j];                             \
}                                                                                    \
static inline void dense_prefetch_row##S(const T *z, int len) {                      \
  for (int j = 0; j < len; j += (int) (64 / sizeof(T))) DENSE_PREFETCH(z + j);       \
  DENSE_PREFETCH(z + len - 1);                                                       \
}                                                                                    \
static inline void dense_prefetch_rows##S(const T *z, const R_xlen_t *idx, int from, int to, \
                                          int m, int stride) {                       \
  if (to > m) to = m;                                                                \
  for (int k = from; k < to; k++) dense_prefetch_row##S(z + idx[k] * stride, stride); \
}

DENSE_KERNELS(double, )
DENSE_KERNELS(float, _f)

/* Prefetching. A minibatch's rows sit at random places of a matrix that may
   be far larger than the cache, so each row is a cache miss (and, beyond the
   TLB's reach, a page walk); asking for rows some way ahead lets those misses
   overlap with the arithmetic on the current rows instead of queueing behind
   it. Every line of a row is asked for: long rows cross 4 KB pages, where the
   hardware prefetcher stops. Rows are asked for DENSE_AHEAD(p) rows ahead:
   short rows take little arithmetic, so the distance must be longer to cover
   a miss. Measured with bench/floor_gather.c (the reads alone): prefetching
   the next row halved the time at d = 2000 (rows in L3) and d = 1000 (rows
   in DRAM). */
#define DENSE_AHEAD(p) ((p) >= 256 ? DENSE_BLOCK : 4 * DENSE_BLOCK)

#endif
