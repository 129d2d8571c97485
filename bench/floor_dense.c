/*
 * A whole SGLD iteration of dense logistic regression written inline in C
 * (bench/speed.R's "C loop"), beside floor_gather.c's memory floor, which
 * times the rows' reads and nothing else.
 *
 * An iteration must also draw its batch, take a dot product, an exp() and
 * the gradient's multiply-adds per row, draw d normals, and update and keep
 * d parameters. This program does that in one loop: the package's generator
 * and minibatch rule (src/rng.c and src/minibatch.c, linked in: the same
 * batches at the same cost), rows of d covariates then y in {-1, +1}
 * (doubles, or floats with -f, the arithmetic in double), the gradient
 * sigma(-y eta) y x scaled by n/m plus the Laplace(0, 1) prior's -sign(w),
 * the update w + eta g + sqrt(2 eta) xi, and every draw kept in an iter x d
 * column-major matrix (the engine's layout), allocated afresh for each run
 * as each fit allocates its own. No function tables, no checks, no thread
 * meetings.
 *
 * Where it is easy to be faster than the engine, it is: the next batch is
 * drawn one iteration ahead, so the next batch's rows can be asked for while
 * this one's last rows are summed (the engine asks within a batch); the rows
 * go in blocks of 8 (the dot products, then 8 exp()s in one loop that the
 * compiler may vectorise, then the gradient's update while the rows are in
 * the cache); while a row is summed every line of the row A rows later is
 * asked for, at the fastest of the distances given (-a; 0 asks for none).
 * bench/speed.R builds it twice and reports both: with -O2, as the package
 * is compiled, and with -O3 -march=native -ffast-math (this processor's
 * AVX-512, and glibc's vector exp()), which the package forgoes so that its
 * draws are the same on every x86-64 machine.
 *
 * Measured here (speed.R at 2026-11-25 23:14, microseconds per iteration,
 * the engine's iterations, fit$sampling_time, after the arrow): at -O2 this
 * loop is slower than the engine on all four (d = 5, batch 100, float rows:
 * 1.20 -> 1.00; d = 1000, float rows: 67.1 -> 36.5; d = 2000, batch 100:
 * 101.5 -> 40.8); with the native flags it is faster at d = 5 (0.86 -> 1.00;
 * batch 1000: 9.9 -> 11.4) and on float rows at d = 1000 (32.4 -> 36.5), and
 * still slower at d = 2000 (50.9 -> 40.8), where the engine's kernels are
 * tuned further (src/dense.h: four rows' dot products sharing each load of
 * w, prefetching chosen by row length and storage).
 *
 * Before timing, its gradient is checked against a plain row-by-row sum
 * (exit status 3 if they differ by over 1e-9 relative).
 *
 * usage: floor_dense N D M ITER REPS [-f] [-H] [-a A[,A...]]
 * prints, per repetition, nanoseconds per iteration (the fastest distance);
 * a checksum on stderr.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "../src/sgld.h"

#define BLOCK 8
#define LINE_BYTES 64

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Eight doubles as one vector (GNU C): the dot products in wide lanes
   whatever the flags (with -O2, SSE2 pairs; with -march=native, one AVX-512
   register), where a plain sum would stay scalar without -ffast-math. Float
   rows are widened, the arithmetic staying in double. */
typedef double v8d __attribute__((vector_size(8 * sizeof(double))));
typedef float v8f __attribute__((vector_size(8 * sizeof(float))));
static inline v8d load8(const double *x) {
  v8d v;
  memcpy(&v, x, sizeof v);
  return v;
}
static inline v8d load8f(const float *x) {
  v8f v;
  memcpy(&v, x, sizeof v);
  return __builtin_convertvector(v, v8d);
}

/* The gradient's likelihood part over one batch: g = sum_k c_k z_k with
   c_k = y_k sigma(-y_k z_k' w). `next` names the rows to ask for while
   these are summed (the rest of this batch, then the next batch). T is
   the element type of the rows. */
#define DEFINE_BATCH_GRAD(NAME, T, LOAD)                                                 \
  static void NAME(const T *restrict data, size_t stride, const R_xlen_t *idx,       \
                   const R_xlen_t *next, int m, size_t ahead, int d,                 \
                   const double *restrict w, double *restrict g) {                   \
    const size_t per_line = LINE_BYTES / sizeof(T);                                  \
    const T *z[BLOCK];                                                               \
    double u[BLOCK], c[BLOCK];                                                       \
    memset(g, 0, (size_t) d * sizeof(double));                                       \
    for (int k0 = 0; k0 < m; k0 += BLOCK) {                                          \
      const int b = m - k0 < BLOCK ? m - k0 : BLOCK;                                 \
      for (int k = 0; k < b; k++) {                                                  \
        z[k] = data + (size_t) idx[k0 + k] * stride;                                 \
        const size_t a = (size_t) (k0 + k) + ahead;                                  \
        const T *pre = data + (size_t) (a < (size_t) m ? idx[a] : next[a - m]) * stride; \
        v8d s0 = {0}, s1 = {0};                  /* two 8-double partial sums */     \
        size_t j = 0;                                                                \
        for (; j + 16 <= (size_t) d; j += 16) {                                      \
          if (ahead) {                                                               \
            __builtin_prefetch(pre + j);                                             \
            if (per_line == 8) __builtin_prefetch(pre + j + 8);                      \
          }                                                                          \
          s0 += LOAD(z[k] + j) * load8(w + j);                                       \
          s1 += LOAD(z[k] + j + 8) * load8(w + j + 8);                               \
        }                                                                            \
        if (ahead) {                                                                 \
          for (size_t q = j; q < stride; q += per_line) __builtin_prefetch(pre + q); \
          __builtin_prefetch(pre + stride - 1);                                      \
        }                                                                            \
        s0 += s1;                                                                    \
        double eta = 0.0;                                                            \
        for (int l = 0; l < 8; l++) eta += s0[l];                                    \
        for (; j < (size_t) d; j++) eta += z[k][j] * w[j];                           \
        u[k] = eta * z[k][d];                    /* y eta */                         \
      }                                                                              \
      for (int k = 0; k < b; k++) {              /* y sigma(-y eta), no overflow */  \
        const double e = exp(-fabs(u[k]));                                           \
        c[k] = (u[k] > 0 ? e : 1.0) / (1.0 + e) * z[k][d];                           \
      }                                                                              \
      if (b == BLOCK) {                          /* g loaded and stored once */     \
        for (int j = 0; j < d; j++)                                                  \
          g[j] += c[0] * z[0][j] + c[1] * z[1][j] + c[2] * z[2][j] + c[3] * z[3][j] + \
                  c[4] * z[4][j] + c[5] * z[5][j] + c[6] * z[6][j] + c[7] * z[7][j]; \
      } else {                                                                       \
        for (int k = 0; k < b; k++)                                                  \
          for (int j = 0; j < d; j++) g[j] += c[k] * z[k][j];                        \
      }                                                                              \
    }                                                                                \
  }
DEFINE_BATCH_GRAD(batch_grad_double, double, load8)
DEFINE_BATCH_GRAD(batch_grad_float, float, load8f)

/* the next batch into `to` (minibatch_draw() may answer with its own array) */
static void draw_batch(sgld_minibatch *mb, sgld_rng *r, R_xlen_t *to, int m) {
  const R_xlen_t *b = minibatch_draw(mb, r, to);
  if (b != to) memcpy(to, b, (size_t) m * sizeof(R_xlen_t));
}

/* The loop's gradient against a plain row-by-row sum, at a point where
   y eta takes both signs, before anything is timed: a loop that computed
   something else would time the wrong work. Returns the largest relative
   difference. */
static double check_gradient(const void *data, int single, int d, int m) {
  const size_t stride = (size_t) d + 1;
  R_xlen_t *idx = malloc(2 * (size_t) m * sizeof(R_xlen_t));
  double *w = malloc((size_t) d * sizeof(double)), *g = malloc((size_t) d * sizeof(double)),
         *ref = calloc((size_t) d, sizeof(double));
  if (!idx || !w || !g || !ref) exit(1);
  for (int k = 0; k < 2 * m; k++) idx[k] = (R_xlen_t) (k % m) * 2;     /* rows 0, 2, 4, ... */
  for (int j = 0; j < d; j++) w[j] = (j % 2 ? 1.0 : -1.0) * (0.5 + 0.5 * sin(j)) / sqrt((double) d);
  if (single) batch_grad_float(data, stride, idx, idx + m, m, 1, d, w, g);
  else batch_grad_double(data, stride, idx, idx + m, m, 1, d, w, g);
  for (int k = 0; k < m; k++) {
    const size_t at = (size_t) idx[k] * stride;
    double z[d + 1];
    for (size_t j = 0; j < stride; j++)
      z[j] = single ? ((const float *) data)[at + j] : ((const double *) data)[at + j];
    double eta = 0.0;
    for (int j = 0; j < d; j++) eta += z[j] * w[j];
    const double c = z[d] / (1.0 + exp(z[d] * eta));      /* y sigma(-y eta) */
    for (int j = 0; j < d; j++) ref[j] += c * z[j];
  }
  double worst = 0.0;
  for (int j = 0; j < d; j++) {
    const double diff = fabs(g[j] - ref[j]) / fmax(1.0, fabs(ref[j]));
    if (diff > worst) worst = diff;
  }
  free(idx); free(w); free(g); free(ref);
  return worst;
}

/* one run of `iter` iterations from w = 0; returns the seconds taken */
static double run(const void *data, int single, size_t n, int d, int m, int iter,
                  size_t ahead, double *checksum) {
  const size_t stride = (size_t) d + 1;
  if (ahead > (size_t) m) ahead = (size_t) m;   /* at most the next batch's rows */
  const double eta = 1e-2 / (double) n, sd = sqrt(2.0 * eta), scale = (double) n / m;
  sgld_rng r = {{0x9e3779b97f4a7c15u, 0xbf58476d1ce4e5b9u, 0x94d049bb133111ebu, 1u}};
  sgld_minibatch mb;
  void *mb_memory = malloc(minibatch_bytes((R_xlen_t) n, m, 0) + 1);
  R_xlen_t *idx = malloc(2 * (size_t) m * sizeof(R_xlen_t));
  double *w = calloc((size_t) d, sizeof(double)), *g = malloc((size_t) d * sizeof(double));
  if (!mb_memory || !idx || !w || !g) exit(1);
  minibatch_init(&mb, (R_xlen_t) n, m, 0, mb_memory);

  const double t0 = now();
  double *draws = malloc((size_t) d * (size_t) iter * sizeof(double));
  if (!draws) exit(1);
  R_xlen_t *cur = idx, *nxt = idx + m;
  draw_batch(&mb, &r, cur, m);
  for (int t = 0; t < iter; t++) {
    draw_batch(&mb, &r, nxt, m);
    if (single) batch_grad_float(data, stride, cur, nxt, m, ahead, d, w, g);
    else batch_grad_double(data, stride, cur, nxt, m, ahead, d, w, g);
    for (int j = 0; j < d; j++) {
      const double gj = scale * g[j] - (double) ((w[j] > 0) - (w[j] < 0));
      w[j] += eta * gj + sd * rng_norm(&r);
    }
    for (int j = 0; j < d; j++) draws[t + (size_t) j * iter] = w[j];
    R_xlen_t *swap = cur; cur = nxt; nxt = swap;
  }
  const double secs = now() - t0;
  for (int j = 0; j < d; j++) *checksum += draws[(size_t) iter - 1 + (size_t) j * iter];
  free(draws); free(mb_memory); free(idx); free(w); free(g);
  return secs;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: floor_dense N D M ITER REPS [-f] [-H] [-a A[,A...]]\n");
    return 2;
  }
  const size_t n = strtoull(argv[1], NULL, 10);
  const int d = atoi(argv[2]), m = atoi(argv[3]), iter = atoi(argv[4]), reps = atoi(argv[5]);
  int single = 0, huge = 0, n_ahead = 1;
  size_t aheads[16] = {1};
  for (int a = 6; a < argc; a++) {
    if (!strcmp(argv[a], "-f")) single = 1;
    if (!strcmp(argv[a], "-H")) huge = 1;
    if (!strcmp(argv[a], "-a") && a + 1 < argc) {
      char *p = argv[++a];
      for (n_ahead = 0; n_ahead < 16 && *p; n_ahead++) {
        aheads[n_ahead] = strtoull(p, &p, 10);
        if (*p == ',') p++;
      }
    }
  }
  if (d < 1 || m < 1 || 2 * (size_t) m > n || iter < 1) {
    fprintf(stderr, "floor_dense: need D >= 1, 1 <= M <= N/2, ITER >= 1\n");
    return 2;
  }
  rng_init_tables();
  const size_t stride = (size_t) d + 1, elt = single ? sizeof(float) : sizeof(double);
  const size_t bytes = n * stride * elt;
  void *data = NULL;
  if (posix_memalign(&data, 2u << 20, bytes)) return 1;
#ifdef MADV_HUGEPAGE
  if (huge) madvise(data, bytes, MADV_HUGEPAGE);
#endif
  /* an intercept, covariates uniform on (-1.7, 1.7) (variance near 1), y = +-1 */
  sgld_rng fill = {{1u, 2u, 3u, 4u}};
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < stride; j++) {
      const double v = j == 0 ? 1.0 : j == (size_t) d ? (rng_next(&fill) >> 63 ? 1.0 : -1.0)
                                   : 3.4 * ((double) (rng_next(&fill) >> 11) * 0x1p-53 - 0.5);
      if (single) ((float *) data)[i * stride + j] = (float) v;
      else ((double *) data)[i * stride + j] = v;
    }
  const double off = check_gradient(data, single, d, m);
  if (!(off < 1e-9)) {
    fprintf(stderr, "floor_dense: the gradient is off by %g (relative)\n", off);
    return 3;
  }
  double checksum = 0.0;
  for (int rep = -1; rep < reps; rep++) {       /* rep = -1: untimed warm-up */
    double best = 0.0;
    for (int q = 0; q < n_ahead; q++) {
      const double s = run(data, single, n, d, m, iter, aheads[q], &checksum);
      if (q == 0 || s < best) best = s;
    }
    if (rep >= 0) printf("%.1f\n", 1e9 * best / iter);
    fflush(stdout);
  }
  fprintf(stderr, "checksum %.17g\n", checksum);
  return 0;
}
