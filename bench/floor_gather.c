/*
 * The memory floor of one SGLD iteration on dense data (bench/speed.R).
 *
 * An iteration must read its m minibatch rows, each (d + 1) doubles, from
 * random places of an n-row matrix; nothing else it does needs memory beyond
 * the cache. This program times exactly that traffic on this machine: the
 * same matrix (n x (d + 1) doubles, or floats with -f), m rows drawn at random
 * per iteration (indices drawn beforehand, so no generator is timed), each
 * row read whole and summed, the rows of an iteration independent of each
 * other (so the core overlaps their misses: latency x rows / memory-level
 * parallelism for rows of a line or two, bandwidth for long rows), and
 * while a row is summed every line of the row A rows later is prefetched
 * (-a A, default 1), spread over the sum (long rows cross 4 KB pages, where
 * the hardware prefetcher stops; short rows need many rows in flight to
 * cover a miss). Given several distances (-a 1,4,16,64), each repetition
 * runs them all and prints the fastest, so that the floor is the least time
 * the memory allows (bench/speed.R). Whatever level of
 * the hierarchy holds the matrix (L2, L3 or DRAM) is the level it measures.
 * With -H the matrix is given to madvise(MADV_HUGEPAGE) first (as the
 * package does for large data, src/pages.c). With -t T the rows of each
 * iteration are shared by T threads, a parallel region per iteration (as one
 * chain on several threads shares its batch, src/gradient.c): the floor of
 * that traffic when the cores read together.
 *
 * usage: floor_gather N D M ITER REPS [-f] [-H] [-a A[,A...]] [-t T]
 * prints, per repetition, nanoseconds per iteration.
 * Built by bench/speed.R with gcc -O2 (the package's optimisation level),
 * and again with -fopenmp for -t.
 */
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>

static uint64_t state = 0x9e3779b97f4a7c15u;
static uint64_t next(void) {          /* splitmix64 */
  uint64_t z = (state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* A row's sum in eight independent lanes (four 2-double vectors), so the
   adds never wait for each other and only the memory can limit the loop
   (with one or two scalar sums the add latency did: 2000-double rows in L3
   took longer than the package's whole iteration). */
typedef double v2d __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));

/* the lines of a row the summing loop did not prefetch (all of a row
   shorter than one step), and its last line (rows start anywhere) */
#define PREFETCH_REST(next, j, len, step)                                      \
  do {                                                                         \
    for (size_t q_ = (j); q_ < (len); q_ += (step)) __builtin_prefetch((next) + q_); \
    __builtin_prefetch((next) + (len) - 1);                                    \
  } while (0)

static double sum_doubles(const double *z, const double *next, size_t len) {
  v2d a = {0, 0}, b = a, c = a, d = a, x;
  size_t j = 0;
  for (; j + 8 <= len; j += 8) {
    __builtin_prefetch(next + j);
    memcpy(&x, z + j, 16); a += x;
    memcpy(&x, z + j + 2, 16); b += x;
    memcpy(&x, z + j + 4, 16); c += x;
    memcpy(&x, z + j + 6, 16); d += x;
  }
  PREFETCH_REST(next, j, len, 8);
  double s = (a[0] + a[1]) + (b[0] + b[1]) + (c[0] + c[1]) + (d[0] + d[1]);
  for (; j < len; j++) s += z[j];
  return s;
}

/* sixteen floats a step: one prefetch per 64-byte line, as for doubles */
static double sum_floats(const float *z, const float *next, size_t len) {
  v4f a = {0, 0, 0, 0}, b = a, x;
  size_t j = 0;
  for (; j + 16 <= len; j += 16) {
    __builtin_prefetch(next + j);
    memcpy(&x, z + j + 8, 16); a += x;
    memcpy(&x, z + j + 12, 16); b += x;
    memcpy(&x, z + j, 16); a += x;
    memcpy(&x, z + j + 4, 16); b += x;
  }
  PREFETCH_REST(next, j, len, 16);
  a += b;
  double s = (double) a[0] + a[1] + a[2] + a[3];
  for (; j < len; j++) s += z[j];
  return s;
}

/* the sum of the k-th drawn row, prefetching the row `ahead` draws later */
static inline double sum_row(const void *data, const size_t *idx, size_t k, size_t ahead,
                             size_t nidx, size_t stride, int single) {
  const size_t row = idx[k] * stride, next = idx[(k + ahead) % nidx] * stride;
  if (single) return sum_floats((const float *) data + row, (const float *) data + next, stride);
  return sum_doubles((const double *) data + row, (const double *) data + next, stride);
}

/* the m rows from the k-th drawn on, shared by `threads` threads. main()'s
   one-thread loop keeps its own copy of sum_row()'s body: calling sum_row()
   there measured slower (d = 5: 285 ns an iteration against 258). */
static double sum_rows_shared(const void *data, const size_t *idx, size_t k, int m,
                              size_t ahead, size_t nidx, size_t stride, int single,
                              int threads) {
  double sum = 0.0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+:sum)
#else
  (void) threads;
#endif
  for (int b = 0; b < m; b++) sum += sum_row(data, idx, k + b, ahead, nidx, stride, single);
  return sum;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: floor_gather N D M ITER REPS [-f] [-H] [-a A[,A...]] [-t T]\n");
    return 2;
  }
  const size_t n = strtoull(argv[1], NULL, 10), stride = strtoull(argv[2], NULL, 10) + 1;
  const int m = atoi(argv[3]), iter = atoi(argv[4]), reps = atoi(argv[5]);
  int single = 0, huge = 0, n_ahead = 1, threads = 1;
  size_t aheads[16] = {1};
  for (int a = 6; a < argc; a++) {
    if (!strcmp(argv[a], "-f")) single = 1;
    if (!strcmp(argv[a], "-H")) huge = 1;
    if (!strcmp(argv[a], "-t") && a + 1 < argc) threads = atoi(argv[++a]);
    if (!strcmp(argv[a], "-a") && a + 1 < argc) {
      char *p = argv[++a];
      for (n_ahead = 0; n_ahead < 16 && *p; n_ahead++) {
        aheads[n_ahead] = strtoull(p, &p, 10);
        if (*p == ',') p++;
      }
    }
  }
  const size_t elt = single ? sizeof(float) : sizeof(double), bytes = n * stride * elt;
  void *data = NULL;
  if (posix_memalign(&data, 2u << 20, bytes)) return 1;
#ifdef MADV_HUGEPAGE
  if (huge) madvise(data, bytes, MADV_HUGEPAGE);
#endif
  if (single) for (size_t i = 0; i < n * stride; i++) ((float *) data)[i] = (float) (i % 7);
  else for (size_t i = 0; i < n * stride; i++) ((double *) data)[i] = (double) (i % 7);
  /* indices for every iteration: at most 64 MB, reused cyclically beyond */
  size_t nidx = (size_t) m * iter;
  if (nidx > ((size_t) 8 << 20)) nidx = (size_t) 8 << 20;
  nidx -= nidx % (size_t) m;
  size_t *idx = malloc(nidx * sizeof(size_t));
  if (!idx) return 1;
  for (size_t k = 0; k < nidx; k++) idx[k] = next() % n;
  double sink = 0.0;
  for (int r = -1; r < reps; r++) {            /* r = -1: untimed warm-up */
    double best = 0.0;
    for (int q = 0; q < n_ahead; q++) {
      const size_t ahead = aheads[q];
      const double t0 = now();
      size_t k = 0;
      for (int t = 0; t < iter; t++) {
        if (threads > 1) {
          sink += sum_rows_shared(data, idx, k, m, ahead, nidx, stride, single, threads);
          k += m;
        } else {
          for (int b = 0; b < m; b++, k++) {
            const size_t row = idx[k] * stride, next = idx[(k + ahead) % nidx] * stride;
            if (single) sink += sum_floats((const float *) data + row, (const float *) data + next, stride);
            else sink += sum_doubles((const double *) data + row, (const double *) data + next, stride);
          }
        }
        if (k == nidx) k = 0;
      }
      const double ns = 1e9 * (now() - t0) / iter;
      if (q == 0 || ns < best) best = ns;
    }
    if (r >= 0) printf("%.1f\n", best);
    fflush(stdout);
  }
  if (sink == 42.0) fprintf(stderr, "%g\n", sink);    /* keep the sums live */
  return 0;
}
