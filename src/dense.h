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
 * runs anywhere); where the processor has AVX2, the models take a second
 * build of the same lanes, four doubles an instruction ("the wide build",
 * below). Measured on this machine (logistic regression, batch 100): see
 * model_logistic.c.
 *
 * The dot products' sums are reordered (four partial sums), so they differ
 * from a row-by-row scalar loop in the last bits; they are the same for every
 * run, on any x86-64 vector width, and nothing here depends on threads.
 */
#ifndef SGLD_DENSE_H
#define SGLD_DENSE_H

#include <stdlib.h>
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

/* A prefetch, and an empty asm statement that takes its address: GCC 12
   at -O2 deletes a loop whose only statements are __builtin_prefetch calls
   (it counts them as having no effect, and such a loop as dead), and it did
   delete every loop below, so until the empty asm was added the dense
   kernels prefetched nothing (checked in the object code). */
#ifdef __GNUC__
#define DENSE_PREFETCH(x)                                                            \
  do {                                                                               \
    __builtin_prefetch(x);                                                           \
    __asm__ __volatile__("" : : "r"(x));                                             \
  } while (0)
/* the same, into L2 but not L1 (locality 2: prefetcht1 on x86) */
#define DENSE_PREFETCH_L2(x)                                                         \
  do {                                                                               \
    __builtin_prefetch(x, 0, 2);                                                     \
    __asm__ __volatile__("" : : "r"(x));                                             \
  } while (0)
#else
#define DENSE_PREFETCH(x) ((void) 0)
#define DENSE_PREFETCH_L2(x) ((void) 0)
#endif

/* The loop of the dot products over a block's coordinates j = 0, 4, ...,
   p4 - 4 (the body, the last argument, takes 4 of them from j): DENSE_FLAT
   as it is; DENSE_BY_LINES a cache line at a time, asking for one line of
   each of the next block's B rows zn[0..B-1] per line of the current rows
   summed, so that the next block's rows come from memory while this block's
   arithmetic runs, at the pace it consumes them (dense_spread(), below, says
   when, with the measurements). Two functions, not one loop testing zn, so
   that the plain loop stays the one measured before. Prefetches change no
   value: the sums are the same bits either way. */
#define DENSE_FLAT(T, zn, B, ...)                                                    \
  (void) (zn);                                                                       \
  for (int j = 0; j < p4; j += 4) __VA_ARGS__
#define DENSE_LINE(T) ((int) (64 / sizeof(T)))   /* elements of T in a cache line */
#define DENSE_BY_LINES(T, zn, B, ...)                                                \
  int j0 = 0;                                                                        \
  for (; j0 + DENSE_LINE(T) <= p4; j0 += DENSE_LINE(T)) {                           \
    for (int b_ = 0; b_ < (B); b_++) DENSE_PREFETCH_L2((zn)[b_] + j0);               \
    for (int j = j0; j < j0 + DENSE_LINE(T); j += 4) __VA_ARGS__                     \
  }                                                                                  \
  for (int b_ = 0; b_ < (B); b_++) {                                                 \
    DENSE_PREFETCH_L2((zn)[b_] + j0);                                                \
    DENSE_PREFETCH_L2((zn)[b_] + p);                                                 \
  }                                                                                  \
  for (int j = j0; j < p4; j += 4) __VA_ARGS__

/* The kernels, for rows of doubles (suffix none) and of floats (suffix _f,
   storage = "float": half the bytes per row, each element widened to double
   as it is loaded, so only the data's own rounding differs). One template, so
   the two storages cannot drift apart.
   - dense_dot: z . w for one row: the first 4 floor(p / 4) coordinates in
     the four lanes, then the rest in order;
   - dense_dots4: out[k] = z[k] . w for the DENSE_BLOCK rows z[0..3], in the
     same lanes (so a row gives the same bits in a block or alone); zn is
     not used (dense_dots4p_f, after the template, is the same for rows of
     floats, asking for the next block's rows zn as it goes, and
     dense_next_rows_f gives the rows of the B items after the block of B
     from item k, the block's own where the batch ends first);
   - dense_axpy4: g += c[0] z[0] + ... + c[3] z[3]; dense_axpy: g += c z;
   - dense_prefetch_rows: every cache line of rows idx[from .. to) (see
     below). */
#if defined(__GNUC__)
#define DENSE_DOTS4_BODY(T, S, LOOP)                                                 \
  dense_v2 a0 = {0.0, 0.0}, a1 = a0, b0 = a0, b1 = a0, c0 = a0, c1 = a0, d0 = a0, d1 = a0; \
  LOOP(T, zn, DENSE_BLOCK, {                                                         \
    const dense_v2 wl = dense_load2(w + j), wh = dense_load2(w + j + 2);             \
    a0 += dense_load2##S(z0 + j) * wl; a1 += dense_load2##S(z0 + j + 2) * wh;        \
    b0 += dense_load2##S(z1 + j) * wl; b1 += dense_load2##S(z1 + j + 2) * wh;        \
    c0 += dense_load2##S(z2 + j) * wl; c1 += dense_load2##S(z2 + j + 2) * wh;        \
    d0 += dense_load2##S(z3 + j) * wl; d1 += dense_load2##S(z3 + j + 2) * wh;        \
  })                                                                                 \
  out[0] = dense_tail##S(DENSE_LANE_SUM(a0, a1), z0, w, p4, p);                      \
  out[1] = dense_tail##S(DENSE_LANE_SUM(b0, b1), z1, w, p4, p);                      \
  out[2] = dense_tail##S(DENSE_LANE_SUM(c0, c1), z2, w, p4, p);                      \
  out[3] = dense_tail##S(DENSE_LANE_SUM(d0, d1), z3, w, p4, p);
#else
#define DENSE_DOTS4_BODY(T, S, LOOP)                                                 \
  (void) z0; (void) z1; (void) z2; (void) z3; (void) p4; (void) zn;                 \
  for (int b = 0; b < DENSE_BLOCK; b++) out[b] = dense_dot##S(z[b], w, p);
#endif

/* the dot products of a block of 4 rows, as `name`, over the coordinates in `LOOP` */
#define DENSE_DOTS4_FN(T, S, name, LOOP)                                             \
static inline void name(const T *const *z, const T *const *zn, const double *w, int p, \
                        double *out) {                                               \
  const T *z0 = z[0], *z1 = z[1], *z2 = z[2], *z3 = z[3];                            \
  const int p4 = p - p % 4;                                                          \
  DENSE_DOTS4_BODY(T, S, LOOP)                                                       \
}

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
DENSE_DOTS4_FN(T, S, dense_dots4##S, DENSE_FLAT)                                     \
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

/* Rows of floats only (dense_spread(), below): their dot products that ask
   for the next block's rows as they go, and those rows. */
DENSE_DOTS4_FN(float, _f, dense_dots4p_f, DENSE_BY_LINES)
static inline const float *const *dense_next_rows_f(const float *rows, const R_xlen_t *idx,
                                                    int k, int B, int m, int stride,
                                                    const float *const *z, const float **zn) {
  for (int b = 0; b < B; b++) zn[b] = k + B + b < m ? rows + idx[k + B + b] * stride : z[b];
  return zn;
}

/* ------------------------------------------------------- the wide build --

   On x86-64 Linux with GCC the kernels also come in an AVX2 build, and the
   models pick it once, when they are built, where the processor has AVX2
   (dense_wide()): the same lanes, four doubles to an instruction instead of
   two. Not FMA: a fused multiply-add rounds once where the baseline rounds
   twice, so the draws would depend on the machine. Without FMA the wide
   build does the same operations in the same order and gives the same bits
   (tests/testthat/test-checksums.R: dense logistic and linear runs recorded
   with the baseline build; test-dense.R runs both builds on this machine).
   Where the SSE2 build writes a row's four lanes as two 2-double vectors,
   the wide one writes one 4-double vector (lane l in element l either way,
   summed ((l0 + l1) + (l2 + l3))); written as 4-double vectors in the
   baseline build, GCC 12 kept them in memory.

   The wide build also takes DENSE_WIDE_BLOCK = 8 rows a block: the dot
   products then keep 8 independent sums in flight (4 only wait on the adds'
   latency) and each pass over g serves 8 rows. The update of g by the 8
   rows, ((g + A) + B) with A and B the two groups of 4 as dense_axpy4 sums
   them, is the baseline's two dense_axpy4 calls in one pass, so the bits
   are the same; the rows' dot products do not depend on each other at all.
   A batch that is not a multiple of 8 ends with a group of 4, then single
   rows, as the baseline's does.

   Measured on this machine (EPYC, Zen 5; logistic regression, sgld(),
   thin = 1): see model_logistic.c. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define DENSE_WIDE_BUILD 1
#define DENSE_WIDE __attribute__((target("avx2")))
#define DENSE_WIDE_BLOCK 8
typedef double dense_v4 __attribute__((vector_size(4 * sizeof(double))));
typedef float dense_f4 __attribute__((vector_size(4 * sizeof(float))));
/* loads as statements, not functions returning 32-byte vectors (whose ABI
   changes with AVX, which GCC warns about) */
#define DENSE_LOAD4(v, x) memcpy(&(v), (x), sizeof(v))
#define DENSE_LOAD4_f(v, x)                                                          \
  do {                                                                               \
    dense_f4 f4_;                                                                    \
    memcpy(&f4_, (x), sizeof f4_);                                                   \
    (v) = __builtin_convertvector(f4_, dense_v4);                                    \
  } while (0)
#define DENSE_LANE4(a) (((a)[0] + (a)[1]) + ((a)[2] + (a)[3]))

/* 1 if the models should use the wide kernels: the processor has AVX2, and
   the environment variable SGLD_NO_AVX2 is unset, empty or "0" (set, it
   forces the baseline build: tests compare the two) */
static inline int dense_wide(void) {
  const char *off = getenv("SGLD_NO_AVX2");
  if (off && off[0] && !(off[0] == '0' && !off[1])) return 0;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") != 0;
}

/* one row's lanes: acc += z[j..j+3] * w[j..j+3] */
#define DENSE_ACC4(S, acc, z, wv, j)                                                 \
  do {                                                                               \
    dense_v4 x_;                                                                     \
    DENSE_LOAD4##S(x_, (z) + (j));                                                   \
    (acc) += x_ * (wv);                                                              \
  } while (0)

/* out[0..3] = the four rows' sums from their lanes, then the rest in order */
#define DENSE_FINISH4(S, out, a0, a1, a2, a3, z0, z1, z2, z3)                        \
  (out)[0] = dense_tail##S(DENSE_LANE4(a0), z0, w, p4, p);                           \
  (out)[1] = dense_tail##S(DENSE_LANE4(a1), z1, w, p4, p);                           \
  (out)[2] = dense_tail##S(DENSE_LANE4(a2), z2, w, p4, p);                           \
  (out)[3] = dense_tail##S(DENSE_LANE4(a3), z3, w, p4, p);

/* the dot products of a block of 8 rows, as `name`, over the coordinates in `LOOP` */
#define DENSE_WIDE_KERNELS_8(T, S, name, LOOP)                                       \
DENSE_WIDE static inline void name(const T *const *z, const T *const *zn, const double *w, \
                                   int p, double *out) {                             \
  const T *z0 = z[0], *z1 = z[1], *z2 = z[2], *z3 = z[3];                            \
  const T *z4 = z[4], *z5 = z[5], *z6 = z[6], *z7 = z[7];                            \
  const int p4 = p - p % 4;                                                          \
  dense_v4 a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0;                     \
  dense_v4 a4 = a0, a5 = a0, a6 = a0, a7 = a0;                                       \
  LOOP(T, zn, DENSE_WIDE_BLOCK, {                                                    \
    dense_v4 wv;                                                                     \
    DENSE_LOAD4(wv, w + j);                                                          \
    DENSE_ACC4(S, a0, z0, wv, j); DENSE_ACC4(S, a1, z1, wv, j);                      \
    DENSE_ACC4(S, a2, z2, wv, j); DENSE_ACC4(S, a3, z3, wv, j);                      \
    DENSE_ACC4(S, a4, z4, wv, j); DENSE_ACC4(S, a5, z5, wv, j);                      \
    DENSE_ACC4(S, a6, z6, wv, j); DENSE_ACC4(S, a7, z7, wv, j);                      \
  })                                                                                 \
  DENSE_FINISH4(S, out, a0, a1, a2, a3, z0, z1, z2, z3)                              \
  DENSE_FINISH4(S, out + 4, a4, a5, a6, a7, z4, z5, z6, z7)                          \
}

#define DENSE_WIDE_KERNELS(T, S)                                                     \
DENSE_WIDE static inline void dense_dots4w##S(const T *const *z, const T *const *zn, \
                                              const double *w, int p, double *out) { \
  const T *z0 = z[0], *z1 = z[1], *z2 = z[2], *z3 = z[3];                            \
  const int p4 = p - p % 4;                                                          \
  dense_v4 a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0, a2 = a0, a3 = a0;                     \
  DENSE_FLAT(T, zn, DENSE_BLOCK, {                                                   \
    dense_v4 wv;                                                                     \
    DENSE_LOAD4(wv, w + j);                                                          \
    DENSE_ACC4(S, a0, z0, wv, j); DENSE_ACC4(S, a1, z1, wv, j);                      \
    DENSE_ACC4(S, a2, z2, wv, j); DENSE_ACC4(S, a3, z3, wv, j);                      \
  })                                                                                 \
  DENSE_FINISH4(S, out, a0, a1, a2, a3, z0, z1, z2, z3)                              \
}                                                                                    \
DENSE_WIDE_KERNELS_8(T, S, dense_dots8w##S, DENSE_FLAT)                             \
DENSE_WIDE static inline void dense_axpy8w##S(double *g, const T *const *z, const double *c, \
                                              int p) {                               \
  const T *z0 = z[0], *z1 = z[1], *z2 = z[2], *z3 = z[3];                            \
  const T *z4 = z[4], *z5 = z[5], *z6 = z[6], *z7 = z[7];                            \
  const double c0 = c[0], c1 = c[1], c2 = c[2], c3 = c[3];                           \
  const double c4 = c[4], c5 = c[5], c6 = c[6], c7 = c[7];                           \
  DENSE_SIMD                                                                         \
  for (int j = 0; j < p; j++)                                                        \
    g[j] = (g[j] + ((c0 * (double) z0[j] + c1 * (double) z1[j]) +                    \
                    (c2 * (double) z2[j] + c3 * (double) z3[j]))) +                  \
           ((c4 * (double) z4[j] + c5 * (double) z5[j]) +                            \
            (c6 * (double) z6[j] + c7 * (double) z7[j]));                            \
}

DENSE_WIDE_KERNELS(double, )
DENSE_WIDE_KERNELS(float, _f)
DENSE_WIDE_KERNELS_8(float, _f, dense_dots8wp_f, DENSE_BY_LINES)
#else
static inline int dense_wide(void) {
  return 0;
}
#endif

/* Prefetching. A minibatch's rows sit at random places of a matrix that may
   be far larger than the cache, so each row is a cache miss (and, beyond the
   TLB's reach, a page walk); asking for rows some way ahead lets those misses
   overlap with the arithmetic on the current rows instead of queueing behind
   it. Every line of a row is asked for. dense_ahead() is how many rows
   ahead, chosen once when the model is built: short rows take little
   arithmetic each, so many are asked for; long rows none here (but see
   dense_spread(), after), as the
   processor's own prefetcher follows a row's lines once it has seen a few
   and whole rows asked for ahead only compete with it. Measured with
   sgld() (logistic regression, batch 100 unless said, thin = 1, rows
   drawn from the data in 2 MB pages above 64 MB, load 5-6 on 2 cores),
   microseconds per iteration without prefetching -> rows ahead: d = 20,
   n = 5 10^6 (168 B rows): 8.5 -> 4.1 (16), 3.8 (32), 3.8 (64); d = 5,
   n = 10^6, batch 1000: 119.5 -> 30.9 (32); d = 5, n = 2 10^7: 12.2 -> 3.7
   (32); d = 20, n = 10^5: 6.9 -> 3.5 (32); d = 100, n = 10^6 (808 B): 10.2
   -> 9.1 (8 to 64 alike); d = 300, n = 3 10^5 (2.4 kB): 25.9 -> 28-29 (any
   distance); d = 1000, n = 10^5: 72.9 -> 85-89; d = 2000, n = 10^3 (in L3):
   62.9 -> 68-71. Data within L2 (1 MB a core here) gain nothing and pay the
   instructions (the linear model on `handout`, 240 kB, batch 10: 11% more
   instructions per iteration by callgrind), so get none; d = 20, n = 10^4
   (1.7 MB): 2.8 -> 2.6. */
static inline int dense_ahead(int p, double n, size_t elt) {
  const size_t row = (size_t) (p + 1) * elt;
  if (row > 1024 || n * (double) row <= 1048576.0) return 0;
  return row > 256 ? 8 : 32;
}

/* 1 where a model's rows of floats are to be asked for as follows. Long
   rows of floats (over 1 kB, where dense_ahead() asks for none) beyond L2
   are asked for a block ahead instead, a line of each of the next rows per
   line summed (DENSE_BY_LINES): the requests go out at the pace the
   arithmetic consumes lines, where asking for whole rows ahead at once
   (above) measured slower.
   Measured with sgld() (logistic regression, batch 100, thin = 1, medians of
   5 runs, two rounds interleaved, clean builds, machine otherwise idle),
   microseconds per iteration without -> with: float rows, d = 1000,
   n = 10^5 (400 MB): 40.9 -> 37.0; d = 500, n = 2 10^5: 24.7 -> 20.6;
   d = 2000, n = 10^3 (8 MB, in L3): 45.6 -> 46.4. Rows of doubles lost:
   d = 1000, n = 10^5: 41.6 -> 46.6 (prefetching into L1 instead: 47.0; a
   request per two lines: 45.9); d = 2000, n = 10^3: 38.8 -> 46.0 (43.4,
   46.9), so they are left to the processor's prefetcher. Our reading:
   widening each float to a double gives a float row more arithmetic per
   byte, behind which the requests can hide. */
static inline int dense_spread(int p, double n) {
  const double row = (double) (p + 1) * sizeof(float);
  return row > 1024 && n * row > 1048576.0;
}

#endif
