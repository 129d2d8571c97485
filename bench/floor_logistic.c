/*
 * The floor for the logistic model: SGLD on Adult (or any design stored the
 * way the package stores a mostly-zero one) with nothing but the arithmetic.
 * Same generator (src/rng.c, xoshiro256++ and the ziggurat), same minibatch
 * rule (distinct items: scanning for m <= 16, a byte per item above), same
 * sparse storage (per observation: start offsets as doubles, 0-based int
 * columns, values omitted when every non-zero is 1, y in {-1, +1}), same
 * gradient (sigma(-y eta) y x, scaled by n/m, plus the Laplace prior's
 * subgradient -sign(w)/s, 0 at 0) and update as src/model_logistic.c and the
 * engine, but written inline: no function tables, no checks for divergence or
 * interrupts, no clipping. The batch's rows are prefetched as the engine does
 * (every row's offsets, then every row's columns and y, before any is used):
 * rows sit at random places in data larger than the fast caches, so most of
 * the time is waiting for memory, and a floor without the prefetches would be
 * slower than the engine. Every draw is kept, in the engine's layout (an
 * iter x d column-major matrix). Built and run by bench/floor_logistic.sh.
 *
 * usage: floor_logistic DATAFILE ITER BATCH [LR]
 * DATAFILE (native-endian binary, written by bench/floor_logistic.sh):
 *   3 doubles n, p, nnz; then 1 double: 1 if binary (no values), else 0;
 *   start[n + 1] doubles; col[nnz] 32-bit ints; val[nnz] doubles unless
 *   binary; y[n] doubles.
 * Prints the elapsed seconds of the loop and a checksum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "../src/sgld.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void *read_block(FILE *f, size_t count, size_t size, const char *what) {
  void *p = malloc(count * size + 1);
  if (!p || fread(p, size, count, f) != count) {
    fprintf(stderr, "floor_logistic: cannot read %s\n", what);
    exit(2);
  }
  return p;
}

int main(int argc, char **argv) {
  if (argc < 4 || argc > 5) {
    fprintf(stderr, "usage: floor_logistic DATAFILE ITER BATCH [LR]\n");
    return 2;
  }
  const long iter = atol(argv[2]);
  const int m = atoi(argv[3]);
  const double eta = argc == 5 ? atof(argv[4]) : 1e-5;
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 2; }
  double *head = read_block(f, 4, sizeof(double), "header");
  const long n = (long) head[0], nnz = (long) head[2];
  const int p = (int) head[1], binary = head[3] != 0;
  const double *start = read_block(f, n + 1, sizeof(double), "start");
  const int *col = read_block(f, nnz, sizeof(int), "col");
  const double *val = binary ? NULL : read_block(f, nnz, sizeof(double), "val");
  const double *yv = read_block(f, n, sizeof(double), "y");
  fclose(f);
  if (m < 1 || 2L * m > n) { fprintf(stderr, "floor_logistic: need 1 <= BATCH <= n/2\n"); return 2; }

  rng_init_tables();
  sgld_rng r = {{0x9e3779b97f4a7c15u, 0xbf58476d1ce4e5b9u, 0x94d049bb133111ebu, 1u}};
  const int d = p;
  double *draws = malloc((size_t) d * (size_t) iter * sizeof(double));
  long *idx = malloc(m * sizeof(long));
  unsigned char *seen = calloc(n, 1);
  double *w = calloc(d, sizeof(double)), *g = malloc(d * sizeof(double));
  const double tau = 1.0, s_inv = 1.0 /* Laplace scale 1, location 0 */;
  const double scale = (double) n / m, sd = sqrt(2 * eta * tau);

  double t0 = now();
  for (long t = 0; t < iter; t++) {
    /* the minibatch: m distinct items */
    if (m <= 16) {
      for (int k = 0; k < m; k++) {
        long i;
        int dup;
        do {
          i = (long) rng_below(&r, (uint64_t) n);
          dup = 0;
          for (int l = 0; l < k; l++) dup |= idx[l] == i;
        } while (dup);
        idx[k] = i;
      }
    } else {
      sgld_rng local = r;
      for (int k = 0; k < m; k++) {
        long i;
        do i = (long) rng_below(&local, (uint64_t) n); while (seen[i]);
        seen[i] = 1;
        idx[k] = i;
      }
      for (int k = 0; k < m; k++) seen[idx[k]] = 0;
      r = local;
    }
    /* the likelihood gradient over the batch */
    for (int j = 0; j < d; j++) g[j] = 0.0;
    for (int k = 0; k < m; k++) __builtin_prefetch(start + idx[k]);
    for (int k = 0; k < m; k++) {
      const long lo = (long) start[idx[k]];
      __builtin_prefetch(col + lo);
      if (val) __builtin_prefetch(val + lo);
      __builtin_prefetch(yv + idx[k]);
    }
    for (int k = 0; k < m; k++) {
      const long i = idx[k], lo = (long) start[i], hi = (long) start[i + 1];
      double u = 0.0;
      if (val) for (long q = lo; q < hi; q++) u += val[q] * w[col[q]];
      else for (long q = lo; q < hi; q++) u += w[col[q]];
      const double y = yv[i], yu = y * u;
      /* y sigma(-y u), without overflow */
      double c;
      if (yu > 0) { double e = exp(-yu); c = y * e / (1.0 + e); }
      else c = y / (1.0 + exp(yu));
      if (val) for (long q = lo; q < hi; q++) g[col[q]] += c * val[q];
      else for (long q = lo; q < hi; q++) g[col[q]] += c;
    }
    /* scale, prior, update, keep */
    for (int j = 0; j < d; j++) {
      const double gj = scale * g[j] - (double) ((w[j] > 0) - (w[j] < 0)) * s_inv;
      w[j] += eta * gj + sd * rng_norm(&r);
      draws[t + (size_t) j * iter] = w[j];
    }
  }
  double el = now() - t0;
  double check = 0.0;
  for (int j = 0; j < d; j++) check += draws[(iter - 1) + (size_t) j * iter];
  printf("%.6f %g\n", el, check);
  return 0;
}
