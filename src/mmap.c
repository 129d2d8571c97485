/*
 * Data that live in a file: a model built on a file-backed matrix (bigmemory's
 * big.matrix, whose backing file is the matrix column-major with no header)
 * reads its rows from a read-only memory map instead of R memory.
 *
 * The models read one observation's covariates and response together (d x n,
 * DESIGN.md section 3), while the backing file holds each column apart: row
 * i's 20 covariates sit n * 8 bytes from each other, on 20 different pages.
 * So the model is given a copy in its own layout, (p + 1) x n doubles
 * (covariates then response), written once next to the backing file by
 * sgld_file_rows() and mapped by model_rows(). Measured (bench/large-data.R
 * and bench/layout.c, n = 2.5e7, d = 20, 4.2 GB, 2 cores): 100 random rows
 * with their x_i' w took 67 us from the copy against 204 us from the
 * column-major file once cached (3.0x), and 23 ms against 28 ms from a cold
 * cache; the copy took 21 s (one pass) and as much disk as the data. With it,
 * SGLD from the file ran at 0.82x the time per iteration of the same data in
 * R memory, and the process's anonymous memory peaked at 116 MB.
 *
 * The mapping is held by an external pointer in the model's `file`
 * environment, with a finalizer that unmaps it; a model saved and loaded
 * again (or sent to another process) has a NULL pointer there, and is mapped
 * again on first use from the path it stores.
 *
 * POSIX only: on Windows, where there is no mmap, both entry points stop with
 * an error that says so.
 */
#ifndef _WIN32
#define _POSIX_C_SOURCE 200809L
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <R.h>
#include <Rinternals.h>
#include "sgld.h"

static SEXP optional_elt(SEXP list, const char *name) {
  SEXP names = getAttrib(list, R_NamesSymbol);
  if (TYPEOF(list) != VECSXP || names == R_NilValue) return R_NilValue;
  for (R_xlen_t i = 0; i < XLENGTH(list); i++)
    if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
  return R_NilValue;
}

#ifdef _WIN32

const double *model_rows(SEXP spec, R_xlen_t len) {
  if (optional_elt(spec, "file") == R_NilValue) return list_doubles(spec, "z", len);
  error("models on file-backed matrices need memory maps (mmap), which this build of "
        "sgld does not have on Windows; use the data as an in-memory matrix");
  return NULL;
}

SEXP sgld_file_rows(SEXP args) {
  (void) args;
  error("models on file-backed matrices need memory maps (mmap), which this build of "
        "sgld does not have on Windows; use the data as an in-memory matrix");
  return R_NilValue;
}

#else

/* the whole of a file, mapped read-only; *bytes gets its size */
static void *map_file(const char *path, size_t *bytes, const char *what) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) error("cannot open %s '%s': %s", what, path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    error("cannot read the size of %s '%s': %s", what, path, strerror(e));
  }
  *bytes = (size_t) st.st_size;
  if (*bytes == 0) {
    close(fd);
    error("%s '%s' is empty", what, path);
  }
  void *p = mmap(NULL, *bytes, PROT_READ, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);   /* the mapping keeps the file open */
  if (p == MAP_FAILED) error("cannot map %s '%s' into memory: %s", what, path, strerror(e));
  return p;
}

static void unmap(SEXP ptr) {
  void *p = R_ExternalPtrAddr(ptr);
  if (!p) return;
  munmap(p, (size_t) asReal(R_ExternalPtrTag(ptr)));
  R_ClearExternalPtr(ptr);
}

/* The model's rows, (p + 1) x n doubles: from R memory (`z`), or from the
   mapping of its file, made now if the model has none yet (new, or loaded). */
static const double *find_rows(SEXP spec, R_xlen_t len) {
  SEXP file = optional_elt(spec, "file");
  if (file == R_NilValue) return list_doubles(spec, "z", len);
  if (!isEnvironment(file)) error("internal: a model's 'file' must be an environment");
  SEXP path = findVarInFrame(file, install("path"));
  if (TYPEOF(path) != STRSXP || XLENGTH(path) != 1)
    error("internal: a model's file must have a path");
  SEXP ptr = findVarInFrame(file, install("ptr"));
  if (TYPEOF(ptr) == EXTPTRSXP && R_ExternalPtrAddr(ptr)) {
    if ((double) len * sizeof(double) != asReal(R_ExternalPtrTag(ptr)))
      error("internal: the mapped file does not hold the model's rows");
    return (const double *) R_ExternalPtrAddr(ptr);
  }
  size_t bytes;
  const char *p = CHAR(STRING_ELT(path, 0));
  void *addr = map_file(p, &bytes, "the model's data file");
  if (bytes != (size_t) len * sizeof(double)) {
    munmap(addr, bytes);
    error("the model's data file '%s' has %.0f bytes where the model expects %.0f: it "
          "was truncated or replaced; build the model again from its file-backed matrix",
          p, (double) bytes, (double) len * sizeof(double));
  }
  SEXP tag = PROTECT(ScalarReal((double) bytes));
  ptr = PROTECT(R_MakeExternalPtr(addr, tag, R_NilValue));
  R_RegisterCFinalizerEx(ptr, unmap, TRUE);
  defineVar(install("ptr"), ptr, file);
  UNPROTECT(2);
  return (const double *) addr;
}

/* the rows, asked for in 2 MB pages where they are large (pages.c) */
const double *model_rows(SEXP spec, R_xlen_t len) {
  const double *z = find_rows(spec, len);
  huge_pages(z, (size_t) len * sizeof(double));
  return z;
}

/* ------------------------------------------------- the row copy -- */

enum { RESPONSE_AS_IS = 0, RESPONSE_BINARY = 1 };

/* Writes the rows file `dest` from the backing file `src` (n x ncol,
   column-major, doubles or floats): per observation the columns `cols`
   (0-based), then the response, from column `ycol` of the file or, when
   ycol < 0, from `y`. A binary response (0/1 or -1/+1) is written as -1/+1.
   Returns the response's mean and variance and which binary values it has,
   or an error naming the first non-finite value. Reads the backing file in
   blocks of rows, each column's part of a block contiguous. */
SEXP sgld_file_rows(SEXP args) {
  const char *src = CHAR(asChar(list_elt(args, "source")));
  const char *dest = CHAR(asChar(list_elt(args, "dest")));
  const int is_float = list_int(args, "float");
  const double n_ = list_real(args, "n");
  if (!(n_ >= 1 && n_ <= 4503599627370496.0 && n_ == floor(n_)))
    error("internal: 'n' must be a whole number from 1 to 2^52");
  const R_xlen_t n = (R_xlen_t) n_;
  const int ncol = list_int(args, "ncol");
  if (ncol < 1) error("internal: 'ncol' must be positive");
  const int ycol = list_int(args, "ycol");
  const int response = list_int(args, "binary") ? RESPONSE_BINARY : RESPONSE_AS_IS;
  SEXP cols_ = list_elt(args, "cols");
  if (TYPEOF(cols_) != INTSXP || XLENGTH(cols_) < 1) error("internal: 'cols' must be integers");
  const int p = (int) XLENGTH(cols_);
  const int *cols = INTEGER(cols_);
  for (int j = 0; j < p; j++)
    if (cols[j] < 0 || cols[j] >= ncol) error("internal: 'cols' out of range");
  if (ycol >= ncol) error("internal: 'ycol' out of range");
  const double *y = ycol < 0 ? list_doubles(args, "y", n) : NULL;
  const size_t width = is_float ? sizeof(float) : sizeof(double);

  size_t bytes;
  const unsigned char *base = map_file(src, &bytes, "the backing file");
  if ((double) bytes != (double) n * ncol * width) {
    munmap((void *) base, bytes);
    error("the backing file '%s' has %.0f bytes, but a %lld x %d matrix of %s needs %.0f: "
          "it is truncated, or the descriptor does not describe it", src, (double) bytes,
          (long long) n, ncol, is_float ? "floats" : "doubles", (double) n * ncol * width);
  }
  posix_madvise((void *) base, bytes, POSIX_MADV_SEQUENTIAL);
  /* written under another name and renamed into place: a process that maps
     an earlier rows file keeps its (unlinked) copy intact, where rewriting
     the file in place would shorten it under the mapping (SIGBUS) */
  const size_t len_dest = strlen(dest) + 32;
  char *partial = R_alloc(len_dest, 1);
  snprintf(partial, len_dest, "%s.partial-%ld", dest, (long) getpid());
  FILE *out = fopen(partial, "wb");
  if (!out) {
    munmap((void *) base, bytes);
    error("cannot write the rows file '%s' (next to the backing file): %s", partial,
          strerror(errno));
  }
  const R_xlen_t B = 16384;   /* rows per block: (p + 1) x B doubles of buffer */
  double *buf = (double *) R_alloc((size_t) B * (p + 1), sizeof(double));
  double sum = 0, sum2 = 0, shift = 0;
  int seen_zero = 0, seen_minus = 0, seen_one = 0;
  const char *failure = NULL;
  R_xlen_t bad_row = 0;
  int bad_col = 0;
  double bad_value = 0;
  for (R_xlen_t i0 = 0; i0 < n && !failure; i0 += B) {
    const R_xlen_t nb = n - i0 < B ? n - i0 : B;
    for (int j = 0; j <= p && !failure; j++) {
      const int c = j < p ? cols[j] : ycol;
      for (R_xlen_t k = 0; k < nb; k++) {
        const R_xlen_t i = i0 + k;
        double v;
        if (c < 0) v = y[i];
        else if (is_float) v = ((const float *) base)[(R_xlen_t) c * n + i];
        else v = ((const double *) base)[(R_xlen_t) c * n + i];
        if (!R_FINITE(v)) {
          failure = "non-finite";
          bad_row = i; bad_col = c; bad_value = v;
          break;
        }
        if (j == p) {
          if (response == RESPONSE_BINARY) {
            if (v == 0) { seen_zero = 1; v = -1; }
            else if (v == -1) seen_minus = 1;
            else if (v == 1) seen_one = 1;
            else {
              failure = "binary";
              bad_row = i; bad_value = v;
              break;
            }
          }
          if (i == 0) shift = v;   /* shifted sums, for an accurate variance */
          sum += v - shift;
          sum2 += (v - shift) * (v - shift);
        }
        buf[k * (p + 1) + j] = v;
      }
    }
    if (!failure && fwrite(buf, sizeof(double), (size_t) nb * (p + 1), out) != (size_t) nb * (p + 1))
      failure = "write";
  }
  munmap((void *) base, bytes);
  if (fclose(out) != 0 && !failure) failure = "write";
  if (!failure && rename(partial, dest) != 0) failure = "write";
  if (failure) {
    int e = errno;
    char shown[32];   /* the value as R prints it */
    if (ISNA(bad_value)) snprintf(shown, sizeof shown, "NA");
    else if (ISNAN(bad_value)) snprintf(shown, sizeof shown, "NaN");
    else if (!R_FINITE(bad_value)) snprintf(shown, sizeof shown, bad_value > 0 ? "Inf" : "-Inf");
    else snprintf(shown, sizeof shown, "%g", bad_value);
    remove(partial);
    if (strcmp(failure, "write") == 0)
      error("cannot write the rows file '%s' (is the disk full?): %s", dest, strerror(e));
    if (strcmp(failure, "binary") == 0)
      error("the response must be 0/1 or -1/+1; it has %s in row %lld", shown,
            (long long) bad_row + 1);
    if (bad_col < 0)
      error("`y` must be finite; it has %s at position %lld", shown, (long long) bad_row + 1);
    error("`x` must be finite; it has %s in row %lld, column %d", shown,
          (long long) bad_row + 1, bad_col + 1);
  }
  const double mean = sum / (double) n;
  SEXP res = PROTECT(allocVector(REALSXP, 5));
  REAL(res)[0] = shift + mean;
  REAL(res)[1] = n > 1 ? (sum2 - sum * mean) / (double) (n - 1) : 0;
  REAL(res)[2] = seen_zero;
  REAL(res)[3] = seen_minus;
  REAL(res)[4] = seen_one;
  UNPROTECT(1);
  return res;
}

#endif
