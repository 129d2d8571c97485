/*
 * Minibatch reads from a file-backed matrix in its two layouts, for
 * bench/large-data.R: the big.matrix's backing file (column-major, n x k:
 * row i's values are n * 8 bytes apart) against the model's rows file
 * ((p + 1) x n: row i's values together). Each iteration reads `batch` random
 * rows of p covariates and the response (column k - 1 of the backing file,
 * value p of a row of the rows file) and sums x_i' w, as a gradient would.
 *
 *   layout <backing file> <rows file> <n> <k> <batch> <iterations> <cold: 0/1> [offset]
 * (offset: the bytes of the rows file's header, before its rows)
 *
 * With cold = 1 each file's pages are dropped from the page cache first
 * (posix_fadvise DONTNEED, which needs no privileges for clean pages).
 * Prints: layout, microseconds per iteration.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static const double *map(const char *path, size_t *bytes, int cold) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) { perror(path); exit(1); }
  struct stat st;
  fstat(fd, &st);
  *bytes = (size_t) st.st_size;
  if (cold) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  void *p = mmap(NULL, *bytes, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) { perror("mmap"); exit(1); }
  return p;
}

static uint64_t state = 88172645463325252u;
static uint64_t next(void) {   /* xorshift64 */
  state ^= state << 13; state ^= state >> 7; state ^= state << 17;
  return state;
}

int main(int argc, char **argv) {
  if (argc != 8 && argc != 9) {
    fprintf(stderr, "usage: layout backing rows n k batch iter cold [offset]\n");
    return 2;
  }
  const long offset = argc == 9 ? atol(argv[8]) : 0;
  const long n = atol(argv[3]), k = atol(argv[4]), batch = atol(argv[5]), iter = atol(argv[6]);
  const int cold = atoi(argv[7]);
  const long p = k - 1;
  double w[256], sink = 0;
  for (long j = 0; j < p && j < 256; j++) w[j] = 1.0 / (j + 1);
  size_t b1, b2;
  const double *cm = map(argv[1], &b1, cold);
  const double *rm = (const double *) ((const char *) map(argv[2], &b2, cold) + offset);

  double t0 = now();
  for (long t = 0; t < iter; t++)
    for (long b = 0; b < batch; b++) {
      long i = (long) (next() % (uint64_t) n);
      double eta = 0;
      for (long j = 0; j < p; j++) eta += cm[j * n + i] * w[j];
      sink += eta * cm[p * n + i];
    }
  double t_cm = now() - t0;

  t0 = now();
  for (long t = 0; t < iter; t++)
    for (long b = 0; b < batch; b++) {
      long i = (long) (next() % (uint64_t) n);
      const double *z = rm + i * (p + 1);
      double eta = 0;
      for (long j = 0; j < p; j++) eta += z[j] * w[j];
      sink += eta * z[p];
    }
  double t_rm = now() - t0;
  printf("column-major %.2f\nrows %.2f\n", 1e6 * t_cm / iter, 1e6 * t_rm / iter);
  fprintf(stderr, "(checksum %g)\n", sink);
  munmap((void *) cm, b1);
  munmap((void *) rm, b2);
  return 0;
}
