/*
 * A model's large data in 2 MB pages (transparent huge pages), where the
 * system allows.
 *
 * A minibatch reads rows at random places of the data. With 4 kB pages each
 * row of a data set far larger than the TLB's reach (4096 entries of 4 kB
 * here, 16 MB) is also a TLB miss, a walk of page tables that no longer fit
 * in the cache themselves; with 2 MB pages the TLB covers gigabytes.
 *
 * Linux in its "madvise" mode (this machine's, and the default of many
 * distributions) gives anonymous memory 2 MB pages only in ranges advised
 * with MADV_HUGEPAGE, and only as they are first touched. So a dense
 * model's rows (and their float copy) are written here, by
 * sgld_stack_rows() and sgld_float_rows(), into memory advised before it is
 * touched: the 2 MB-aligned interior of each block of 64 MB or more. When a
 * model is built for a run, its rows are advised again (mmap.c:
 * model_rows(); the float copy in model_logistic.c), which changes nothing
 * for rows made here and lets the kernel's background thread (khugepaged)
 * move rows made otherwise (a model read from a file, a file-backed map)
 * into 2 MB pages over time. Where the call is unknown or refused (another
 * system, huge pages turned off, a memory map of a file on a kernel without
 * read-only file huge pages, as this one), nothing happens.
 *
 * Not done: collapsing rows already in 4 kB pages at the start of a run
 * (MADV_COLLAPSE, Linux 6.1). It took 1.0-2.3 s for 1.6 GB here, but above
 * all it copies pages shared with another process: chains run as forked
 * futures (parallel = "future" on a multicore plan) would each make a
 * private copy of the whole data set.
 *
 * Measured on this machine (2 vCPUs of an AMD EPYC, Linux 6.18 in a VM,
 * load 2.5-6 from other jobs, so the ratios mean more than the figures), at
 * n = 10^7, d = 20, batch 100 (bench/scaling.R's workload, 1.6 GB): the
 * memory floor of bench/floor_gather.c took 14.1-14.3 us per iteration in
 * 4 kB pages and 5.9 us in 2 MB pages; sgld() 15.0-16.3 us against 8.1-9.5
 * us before dense.h's prefetches worked, and 3.4-6.1 us against 3.0-4.6 us
 * (medians 3.4-4.8 against 3.0-3.1) after. The price is paid when the rows
 * are made: sgld_stack_rows() took 0.95-1.2 s in 4 kB pages and 5.3-5.5 s in
 * 2 MB pages the first time in the process (the kernel assembles free 2 MB
 * pages; the virtual machine backs fresh memory slowly), 0.3-0.5 s after;
 * R's rbind(t(X), y), which made them before, took 4.3-7.5 s.
 */
#if defined(__linux__)
#define _DEFAULT_SOURCE
#include <stdint.h>
#include <sys/mman.h>
#endif
#include <stddef.h>
#include <R.h>
#include <Rinternals.h>
#include "sgld.h"

/* smaller blocks stay as they are: within the TLB's reach (16 MB) the
   pages cost little, and 2 MB pages are slower to come by */
#define HUGE_MIN_BYTES ((size_t) 64 << 20)
#define HUGE_PAGE ((uintptr_t) 2 << 20)

#if defined(__linux__) && defined(MADV_HUGEPAGE)

void huge_pages(const void *data, size_t bytes) {
  if (!data || bytes < HUGE_MIN_BYTES) return;
  const uintptr_t lo = ((uintptr_t) data + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  const uintptr_t hi = ((uintptr_t) data + bytes) & ~(HUGE_PAGE - 1);
  if (hi <= lo) return;
  (void) madvise((void *) lo, hi - lo, MADV_HUGEPAGE);   /* refused: read as they are */
}

#else

void huge_pages(const void *data, size_t bytes) {
  (void) data;
  (void) bytes;
}

#endif

/* .Call: the rows of a dense model, (p + 1) x n doubles, column i being
   (x_i, y_i), from X (n x p doubles) and y (n doubles), as R's
   rbind(t(X), y) but written into a block advised first. By blocks of
   STACK_ROWS rows, so that each column's part is read contiguously and the
   block's rows are written while in the cache. */
#define STACK_ROWS 16
SEXP sgld_stack_rows(SEXP X, SEXP y) {
  if (TYPEOF(X) != REALSXP || !isMatrix(X) || TYPEOF(y) != REALSXP)
    error("internal: stack_rows needs a double matrix and a double vector");
  const R_xlen_t n = nrows(X), p = ncols(X);
  if (XLENGTH(y) != n) error("internal: stack_rows: y does not match X");
  const R_xlen_t stride = p + 1;
  SEXP z = PROTECT(allocMatrix(REALSXP, (int) stride, (int) n));
  double *out = REAL(z);
  const double *x = REAL(X), *yv = REAL(y);
  huge_pages(out, (size_t) stride * (size_t) n * sizeof(double));
  for (R_xlen_t i0 = 0; i0 < n; i0 += STACK_ROWS) {
    const R_xlen_t i1 = i0 + STACK_ROWS < n ? i0 + STACK_ROWS : n;
    for (R_xlen_t j = 0; j < p; j++) {
      const double *col = x + j * n;
      for (R_xlen_t i = i0; i < i1; i++) out[i * stride + j] = col[i];
    }
    for (R_xlen_t i = i0; i < i1; i++) out[i * stride + p] = yv[i];
  }
  UNPROTECT(1);
  return z;
}

/* .Call: z's single-precision copy, as the raw bytes C reads as floats
   (storage = "float"), each element rounded as a cast to float rounds it */
SEXP sgld_float_rows(SEXP z) {
  if (TYPEOF(z) != REALSXP) error("internal: float_rows needs a double vector");
  const R_xlen_t len = XLENGTH(z);
  SEXP out = PROTECT(allocVector(RAWSXP, len * (R_xlen_t) sizeof(float)));
  float *f = (float *) RAW(out);
  const double *v = REAL(z);
  huge_pages(f, (size_t) len * sizeof(float));
  for (R_xlen_t k = 0; k < len; k++) f[k] = (float) v[k];
  UNPROTECT(1);
  return out;
}
