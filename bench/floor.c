/*
 * The floor: SGLD on the handout's linear model with nothing but the
 * arithmetic. Same generator, same minibatch rule (distinct items, drawn by
 * scanning), same gradient and update as the package's engine, but with the
 * model, rule and schedule written inline: no function tables, no checks for
 * divergence or interrupts, no clipping. Draws are kept every iteration, like
 * the `thin 1` line of sgld-throughput.R. Built and run by bench/floor.sh.
 *
 * usage: floor DATAFILE ITER BATCH   (DATAFILE: n rows of "x y")
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

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: floor DATAFILE ITER BATCH\n"); return 2; }
  long iter = atol(argv[2]);
  int m = atoi(argv[3]);
  FILE *f = fopen(argv[1], "r");
  if (!f) { perror(argv[1]); return 2; }
  long n = 0, cap = 1024;
  double *z = malloc(3 * cap * sizeof(double));
  double x, y;
  while (fscanf(f, "%lf %lf", &x, &y) == 2) {
    if (n == cap) { cap *= 2; z = realloc(z, 3 * cap * sizeof(double)); }
    z[3 * n] = 1.0; z[3 * n + 1] = x; z[3 * n + 2] = y;
    n++;
  }
  fclose(f);

  rng_init_tables();
  sgld_rng r = {{0x9e3779b97f4a7c15u, 0xbf58476d1ce4e5b9u, 0x94d049bb133111ebu, 1u}};
  double *draws = malloc(3 * (size_t) iter * sizeof(double));
  long *idx = malloc(m * sizeof(long));
  unsigned char *seen = calloc(n, 1);
  const double eta = 1e-7, tau = 1.0, a = 1.0, b = 1.0, v_inv = 0.01, scale = (double) n / m;
  const double sd = sqrt(2 * eta * tau);
  double w[3] = {0.0, 0.0, 0.0};

  double t0 = now();
  for (long t = 0; t < iter; t++) {
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
      for (int k = 0; k < m; k++) {
        long i;
        do i = (long) rng_below(&r, (uint64_t) n); while (seen[i]);
        seen[i] = 1;
        idx[k] = i;
      }
      for (int k = 0; k < m; k++) seen[idx[k]] = 0;
    }
    double s0 = 0, s1 = 0, ssr = 0;
    for (int k = 0; k < m; k++) {
      const double *zi = z + 3 * idx[k];
      double res = zi[2] - zi[0] * w[0] - zi[1] * w[1];
      s0 += res * zi[0]; s1 += res * zi[1]; ssr += res * res;
    }
    double prec = exp(-w[2]);
    double q = v_inv * (w[0] * w[0] + w[1] * w[1]);
    double g0 = scale * prec * s0 - prec * v_inv * w[0];
    double g1 = scale * prec * s1 - prec * v_inv * w[1];
    double g2 = scale * (-0.5 * m + 0.5 * prec * ssr) - 1.0 + 0.5 * prec * q - (a + 1) + b * prec + 1;
    w[0] += eta * g0 + sd * rng_norm(&r);
    w[1] += eta * g1 + sd * rng_norm(&r);
    w[2] += eta * g2 + sd * rng_norm(&r);
    draws[t] = w[0]; draws[iter + t] = w[1]; draws[2 * iter + t] = w[2];
  }
  double el = now() - t0;
  printf("%.4f %g\n", el, draws[iter - 1] + draws[2 * iter - 1]);
  return 0;
}
