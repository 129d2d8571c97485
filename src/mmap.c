/*
 * Data that live in a file: a model built on a file-backed matrix (bigmemory's
 * big.matrix, whose backing file is the matrix column-major with no header)
 * reads its rows from a read-only memory map instead of R memory.
 *
 * The models read one observation's covariates and response together (d x n,
 * DESIGN.md section 3), while the backing file holds each column apart: row
 * i's 20 covariates sit n * 8 bytes from each other, on 20 different pages.
 * So the model is given a copy in its own layout, (p + 1) x n doubles
 * (covariates then response), written once by sgld_file_rows() and mapped by
 * model_rows(). Measured (bench/large-data.R and bench/layout.c, n = 2.5e7,
 * d = 20, 4.2 GB, 2 cores): 100 random rows with their x_i' w took 67 us
 * from the copy against 204 us from the column-major file once cached
 * (3.0x), and 23 ms against 28 ms from a cold cache; the copy took 21 s (one
 * pass) and as much disk as the data. With it, SGLD from the file ran at
 * 0.82x the time per iteration of the same data in R memory, and the
 * process's anonymous memory peaked at 116 MB.
 *
 * The copy is the package's own file, in a cache directory (R/file-backed.R),
 * never beside the user's data. Its name is a hash of everything it derives
 * from: the backing file's path, size and modification time, the columns
 * taken, the response and its coding. So models on the same content share
 * one copy, and models on different content (a logistic and a linear model
 * code the response differently) never read each other's. It starts with a
 * header (rows_header: the key, the source's identity, the response's
 * summaries and the covariates' Gram matrix X'X for the rank check), and its
 * modification time is set, when written, to a time recorded in the header:
 * any later write to it changes that time.
 *
 * Every time a model is built for a run (model_rows()), the copy and its
 * source are checked before any row is read: a missing copy, one of another
 * size, another header or a changed time, or a source whose size or time
 * changed since the model was built, is an R error saying which. A mapping
 * is kept between runs only while the file's identity (device, inode, size,
 * time) is unchanged; otherwise it is made again from a validated file. So
 * no run reads a mapping whose file has shrunk since it was checked (which
 * is a bus error). The copy is read-only (mode 0444) so that no process of
 * an ordinary user can shorten it while it is mapped, and a new copy is
 * written under another name and renamed into place: a process that maps an
 * earlier file keeps its (unlinked) pages intact.
 *
 * The mapping is held by an external pointer in the model's `file`
 * environment, with a finalizer that unmaps it; a model saved and loaded
 * again (or sent to another process) has a NULL pointer there, and is mapped
 * again, after the same checks, on first use.
 *
 * POSIX only: on Windows, where there is no mmap, both entry points stop with
 * an error that says so.
 */
#ifndef _WIN32
#if defined(__APPLE__)
#define _DARWIN_C_SOURCE
#else
#define _POSIX_C_SOURCE 200809L
#endif
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <dirent.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#endif
#define USE_FC_LEN_T
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <R.h>
#include <Rinternals.h>
#include <R_ext/BLAS.h>
#include "sgld.h"
#ifndef FCONE
#define FCONE
#endif

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

/* ------------------------------------------------- the copy's header -- */

#define ROWS_MAGIC "SGLDROWS"
#define ROWS_VERSION 1
#define ROWS_ALIGN 4096     /* the rows start on a page */

/* then p x p doubles (X'X of the covariates) and p doubles (each covariate's
   largest absolute value), then padding to ROWS_ALIGN, then the rows */
typedef struct rows_header {
  char magic[8];
  uint64_t version, header_bytes, n, p;
  uint64_t key;                 /* the hash the file is named by */
  uint64_t source_path_hash;    /* to find copies of an older state of a source */
  int64_t source_size, source_sec, source_nsec;
  int64_t written_sec;          /* the copy's own modification time (nanoseconds 0) */
  double stats[5];              /* the response: mean, variance, has 0, -1, 1 */
} rows_header;

/* what identifies a file's content: if any write or truncation happened,
   its size or modification time differ */
typedef struct file_id {
  int64_t size, sec, nsec;
  dev_t dev;
  ino_t ino;
} file_id;

static file_id id_of(const struct stat *st) {
  file_id id;
  id.size = (int64_t) st->st_size;
#if defined(__APPLE__)
  id.sec = (int64_t) st->st_mtimespec.tv_sec;
  id.nsec = (int64_t) st->st_mtimespec.tv_nsec;
#else
  id.sec = (int64_t) st->st_mtim.tv_sec;
  id.nsec = (int64_t) st->st_mtim.tv_nsec;
#endif
  id.dev = st->st_dev;
  id.ino = st->st_ino;
  return id;
}

static uint64_t header_bytes_for(int p) {
  const uint64_t raw = sizeof(rows_header) + ((uint64_t) p * (uint64_t) p + (uint64_t) p) * sizeof(double);
  return (raw + ROWS_ALIGN - 1) / ROWS_ALIGN * ROWS_ALIGN;
}

/* FNV-1a, 64 bits: names a copy by what it derives from */
static uint64_t fnv(uint64_t h, const void *data, size_t len) {
  const unsigned char *b = (const unsigned char *) data;
  for (size_t i = 0; i < len; i++) {
    h ^= b[i];
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}
#define FNV_START UINT64_C(0xcbf29ce484222325)

/* Checks the header of the copy open as `fd` (whose stat is `st`) against
   the key, n and p the model expects; fills *h. Returns NULL if it holds,
   else what is wrong. `foreign` is set when the file is not a copy at all. */
static const char *check_copy(int fd, const struct stat *st, uint64_t key, R_xlen_t n, int p,
                              rows_header *h, int *foreign) {
  static char why[256];
  *foreign = 0;
  const file_id id = id_of(st);
  if (id.size < (int64_t) sizeof *h || pread(fd, h, sizeof *h, 0) != (ssize_t) sizeof *h) {
    snprintf(why, sizeof why, "has %.0f bytes, too few for its header: it was truncated "
             "after it was written", (double) id.size);
    return why;
  }
  if (memcmp(h->magic, ROWS_MAGIC, 8) != 0) {
    *foreign = 1;
    return "is not a copy of rows written by sgld";
  }
  if (h->version != ROWS_VERSION) return "was written by another version of sgld";
  if (h->key != key || h->n != (uint64_t) n || h->p != (uint64_t) p ||
      h->header_bytes != header_bytes_for(p))
    return "holds other data than the model's (another source, other columns or another coding)";
  const double want = (double) h->header_bytes + (double) (p + 1) * (double) n * sizeof(double);
  if ((double) id.size != want) {
    snprintf(why, sizeof why, "has %.0f bytes where it was written with %.0f: it was %s after "
             "it was written", (double) id.size, want, (double) id.size < want ? "truncated" : "extended");
    return why;
  }
  if (id.sec != h->written_sec || id.nsec != 0) {
    snprintf(why, sizeof why, "was modified after it was written (its modification time is "
             "%.0f s from the one it was written with)", (double) (id.sec - h->written_sec));
    return why;
  }
  return NULL;
}

/* ------------------------------------------------------- the mapping -- */

/* what a mapping maps, kept beside it (the external pointer's protected
   value, with the mapping it replaced, which a model built earlier in the
   same call may still read) */
typedef struct mapping {
  size_t bytes, offset;
  file_id id;
} mapping;

static void unmap(SEXP ptr) {
  void *p = R_ExternalPtrAddr(ptr);
  SEXP prot = R_ExternalPtrProtected(ptr);
  if (!p || TYPEOF(prot) != VECSXP) return;
  const mapping *m = (const mapping *) RAW(VECTOR_ELT(prot, 0));
  munmap(p, m->bytes);
  R_ClearExternalPtr(ptr);
}

static int same_file(const file_id *a, const file_id *b) {
  return a->size == b->size && a->sec == b->sec && a->nsec == b->nsec && a->dev == b->dev &&
         a->ino == b->ino;
}

static SEXP env_value(SEXP env, const char *name) {
  return findVarInFrame(env, install(name));
}

/* The backing file the copy derives from, if it still exists, must be as it
   was when the model was built: the copy holds the data as they were then. */
static void check_source(SEXP file) {
  SEXP src = env_value(file, "source"), id = env_value(file, "source_id");
  if (TYPEOF(src) != STRSXP || XLENGTH(src) != 1 || TYPEOF(id) != REALSXP || XLENGTH(id) != 3)
    error("internal: a model's file must record its source and the source's identity");
  const char *path = CHAR(STRING_ELT(src, 0));
  struct stat st;
  if (stat(path, &st) != 0) return;   /* gone: the copy alone holds the model's data */
  const file_id now = id_of(&st);
  const double *was = REAL(id);
  if ((double) now.size != was[0])
    error("the file-backed matrix's backing file '%s' has %.0f bytes, but %.0f when the model "
          "was built: it changed, and the model's copy holds the data as they were; build the "
          "model again from the matrix", path, (double) now.size, was[0]);
  if ((double) now.sec != was[1] || (double) now.nsec != was[2])
    error("the file-backed matrix's backing file '%s' was modified after the model was built "
          "(its modification time moved by %.3f s): the model's copy holds the data as they "
          "were; build the model again from the matrix", path,
          ((double) now.sec - was[1]) + ((double) now.nsec - was[2]) * 1e-9);
}

/* The model's rows, (p + 1) x n doubles: from R memory (`z`), or from the
   mapping of its copy, checked now (see the top of this file). */
static const double *find_rows(SEXP spec, R_xlen_t len) {
  SEXP file = optional_elt(spec, "file");
  if (file == R_NilValue) return list_doubles(spec, "z", len);
  if (!isEnvironment(file)) error("internal: a model's 'file' must be an environment");
  SEXP path_ = env_value(file, "path"), key_ = env_value(file, "key");
  if (TYPEOF(path_) != STRSXP || XLENGTH(path_) != 1 || TYPEOF(key_) != STRSXP ||
      XLENGTH(key_) != 1)
    error("internal: a model's file must have a path and a key");
  const char *path = CHAR(STRING_ELT(path_, 0));
  const uint64_t key = strtoull(CHAR(STRING_ELT(key_, 0)), NULL, 16);
  const int p = list_int(spec, "p");
  const R_xlen_t n = (R_xlen_t) list_real(spec, "n");
  if (p < 1 || n < 1 || (double) (p + 1) * (double) n != (double) len)
    error("internal: the model's rows are not (p + 1) x n");
  check_source(file);

  struct stat st;
  if (stat(path, &st) != 0)
    error("the model's copy of its rows '%s' cannot be read (%s): it was removed (a cleaned "
          "cache?), or this process does not see that directory; build the model again from "
          "its file-backed matrix, which writes it again (for futures on other machines, set "
          "options(sgld.cache_dir) to a directory they share)", path, strerror(errno));
  const file_id id = id_of(&st);
  SEXP old = env_value(file, "ptr");
  if (TYPEOF(old) == EXTPTRSXP && R_ExternalPtrAddr(old)) {
    const mapping *m = (const mapping *) RAW(VECTOR_ELT(R_ExternalPtrProtected(old), 0));
    if (same_file(&m->id, &id))
      return (const double *) ((const char *) R_ExternalPtrAddr(old) + m->offset);
  }

  int fd = open(path, O_RDONLY);
  if (fd < 0)
    error("cannot open the model's copy of its rows '%s': %s", path, strerror(errno));
  rows_header h;
  int foreign;
  const char *bad = fstat(fd, &st) != 0 ? "cannot be read"
                    : check_copy(fd, &st, key, n, p, &h, &foreign);
  if (bad) {
    close(fd);
    error("the model's copy of its rows '%s' %s; build the model again from its file-backed "
          "matrix, which writes a new copy", path, bad);
  }
  mapping m = {(size_t) id_of(&st).size, (size_t) h.header_bytes, id_of(&st)};
  void *addr = mmap(NULL, m.bytes, PROT_READ, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);   /* the mapping keeps the file open */
  if (addr == MAP_FAILED)
    error("cannot map the model's copy of its rows '%s' into memory: %s", path, strerror(e));
  SEXP prot = PROTECT(allocVector(VECSXP, 2));
  SET_VECTOR_ELT(prot, 0, allocVector(RAWSXP, sizeof m));
  memcpy(RAW(VECTOR_ELT(prot, 0)), &m, sizeof m);
  SET_VECTOR_ELT(prot, 1, TYPEOF(old) == EXTPTRSXP ? old : R_NilValue);
  SEXP ptr = PROTECT(R_MakeExternalPtr(addr, R_NilValue, prot));
  R_RegisterCFinalizerEx(ptr, unmap, TRUE);
  defineVar(install("ptr"), ptr, file);
  UNPROTECT(2);
  return (const double *) ((const char *) addr + m.offset);
}

/* the rows, asked for in 2 MB pages where they are large (pages.c) */
const double *model_rows(SEXP spec, R_xlen_t len) {
  const double *z = find_rows(spec, len);
  huge_pages(z, (size_t) len * sizeof(double));
  return z;
}

/* ------------------------------------------------- the row copy -- */

enum { RESPONSE_AS_IS = 0, RESPONSE_BINARY = 1 };

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

static void check_interrupt_fn(void *unused) {
  (void) unused;
  R_CheckUserInterrupt();
}

/* the arguments of a copy, checked */
typedef struct copy_args {
  const char *src, *cache;
  int is_float, ncol, ycol, response, p;
  R_xlen_t n;
  const int *cols;
  const double *y;
} copy_args;

static copy_args read_copy_args(SEXP args) {
  copy_args a;
  SEXP src = list_elt(args, "source"), cache = list_elt(args, "cache");
  if (TYPEOF(src) != STRSXP || XLENGTH(src) != 1 || STRING_ELT(src, 0) == NA_STRING ||
      TYPEOF(cache) != STRSXP || XLENGTH(cache) != 1 || STRING_ELT(cache, 0) == NA_STRING)
    error("internal: 'source' and 'cache' must be paths");
  a.src = CHAR(STRING_ELT(src, 0));
  a.cache = CHAR(STRING_ELT(cache, 0));
  a.is_float = list_int(args, "float");
  const double n_ = list_real(args, "n");
  if (!(n_ >= 1 && n_ <= 4503599627370496.0 && n_ == floor(n_)))
    error("internal: 'n' must be a whole number from 1 to 2^52");
  a.n = (R_xlen_t) n_;
  a.ncol = list_int(args, "ncol");
  if (a.ncol < 1) error("internal: 'ncol' must be positive");
  a.ycol = list_int(args, "ycol");
  a.response = list_int(args, "binary") ? RESPONSE_BINARY : RESPONSE_AS_IS;
  SEXP cols = list_elt(args, "cols");
  if (TYPEOF(cols) != INTSXP || XLENGTH(cols) < 1) error("internal: 'cols' must be integers");
  a.p = (int) XLENGTH(cols);
  a.cols = INTEGER(cols);
  for (int j = 0; j < a.p; j++)
    if (a.cols[j] < 0 || a.cols[j] >= a.ncol) error("internal: 'cols' out of range");
  if (a.ycol >= a.ncol) error("internal: 'ycol' out of range");
  a.y = a.ycol < 0 ? list_doubles(args, "y", a.n) : NULL;
  return a;
}

/* the hash a copy is named by: its format, the source's path and identity,
   and what is taken from it and how */
static uint64_t copy_key(const copy_args *a, const file_id *src) {
  uint64_t h = FNV_START;
  const int64_t fields[] = {ROWS_VERSION, src->size, src->sec, src->nsec, a->is_float,
                            (int64_t) a->n, a->ncol, a->ycol, a->response, a->p};
  h = fnv(h, a->src, strlen(a->src) + 1);
  h = fnv(h, fields, sizeof fields);
  h = fnv(h, a->cols, (size_t) a->p * sizeof(int));
  if (a->y) h = fnv(h, a->y, (size_t) a->n * sizeof(double));
  return h;
}

/* Writes the copy to `partial` from the backing file, per observation the
   columns `cols`, then the response (column `ycol` of the file or `y`); a
   binary response (0/1 or -1/+1) as -1/+1. Fills the header h (but for its
   times), X'X in G and the largest |x| per covariate. Returns NULL, or what
   failed: an error naming the first bad value is raised by the caller. */
typedef struct copy_failure {
  const char *what;             /* "non-finite", "binary", "write", "interrupt" */
  R_xlen_t row;
  int col;
  double value;
  int err;
} copy_failure;

static void write_copy(const copy_args *a, const unsigned char *base, FILE *out, rows_header *h,
                       double *G, double *largest, copy_failure *f) {
  const int p = a->p;
  const R_xlen_t n = a->n;
  const R_xlen_t B = 16384;   /* rows per block: (p + 1) x B doubles of buffer */
  double *buf = (double *) R_alloc((size_t) B * (p + 1), sizeof(double));
  double sum = 0, sum2 = 0, shift = 0;
  int seen_zero = 0, seen_minus = 0, seen_one = 0;
  memset(G, 0, (size_t) p * p * sizeof(double));
  for (int j = 0; j < p; j++) largest[j] = 0;
  if (fseek(out, (long) h->header_bytes, SEEK_SET) != 0) {
    f->what = "write";
    f->err = errno;
    return;
  }
  for (R_xlen_t i0 = 0; i0 < n; i0 += B) {
    if (R_ToplevelExec(check_interrupt_fn, NULL) == FALSE) {
      f->what = "interrupt";
      return;
    }
    const R_xlen_t nb = n - i0 < B ? n - i0 : B;
    for (int j = 0; j <= p; j++) {
      const int c = j < p ? a->cols[j] : a->ycol;
      for (R_xlen_t k = 0; k < nb; k++) {
        const R_xlen_t i = i0 + k;
        double v;
        if (c < 0) v = a->y[i];
        else if (a->is_float) v = ((const float *) base)[(R_xlen_t) c * n + i];
        else v = ((const double *) base)[(R_xlen_t) c * n + i];
        if (!R_FINITE(v)) {
          f->what = "non-finite";
          f->row = i; f->col = c; f->value = v;
          return;
        }
        if (j == p) {
          if (a->response == RESPONSE_BINARY) {
            if (v == 0) { seen_zero = 1; v = -1; }
            else if (v == -1) seen_minus = 1;
            else if (v == 1) seen_one = 1;
            else {
              f->what = "binary";
              f->row = i; f->value = v;
              return;
            }
          }
          if (i == 0) shift = v;   /* shifted sums, for an accurate variance */
          sum += v - shift;
          sum2 += (v - shift) * (v - shift);
        } else if (fabs(v) > largest[j]) {
          largest[j] = fabs(v);
        }
        buf[k * (p + 1) + j] = v;
      }
    }
    /* X'X of the block's covariates: rows of (p + 1), the first p of each.
       p (p + 1) / 2 multiply-adds a row: with R's reference BLAS the copy of
       2e6 rows of 20 covariates took 1.3-1.6 s with it, 0.8-1.3 s without
       (3 runs each, load average 6 on 2 cores); the in-memory face pays
       the same for crossprod(X), and a copy is made once per content */
    const int nb_ = (int) nb, lda = p + 1;
    const double one = 1.0;
    F77_CALL(dsyrk)("U", "N", &p, &nb_, &one, buf, &lda, &one, G, &p FCONE FCONE);
    if (fwrite(buf, sizeof(double), (size_t) nb * (p + 1), out) != (size_t) nb * (p + 1)) {
      f->what = "write";
      f->err = errno;
      return;
    }
  }
  for (int j = 0; j < p; j++)
    for (int k = 0; k < j; k++) G[j + (size_t) k * p] = G[k + (size_t) j * p];
  const double mean = sum / (double) n;
  h->stats[0] = shift + mean;
  h->stats[1] = n > 1 ? (sum2 - sum * mean) / (double) (n - 1) : 0;
  h->stats[2] = seen_zero;
  h->stats[3] = seen_minus;
  h->stats[4] = seen_one;
}

/* Copies of an earlier state of the same source: no model can use them any
   more (a model checks its source before each run), so they are removed. */
static void remove_stale(const char *cache, const char *keep, uint64_t path_hash,
                         const file_id *src) {
  DIR *dir = opendir(cache);
  if (!dir) return;
  const size_t len = strlen(cache) + 64;
  char *other = R_alloc(len, 1);
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    const size_t l = strlen(e->d_name);
    if (l != 26 || strncmp(e->d_name, "sgld-", 5) != 0 || strcmp(e->d_name + 21, ".rows") != 0)
      continue;
    snprintf(other, len, "%s/%s", cache, e->d_name);
    if (strcmp(other, keep) == 0) continue;
    int fd = open(other, O_RDONLY);
    if (fd < 0) continue;
    rows_header h;
    const int read = pread(fd, &h, sizeof h, 0) == (ssize_t) sizeof h;
    close(fd);
    if (read && memcmp(h.magic, ROWS_MAGIC, 8) == 0 && h.version == ROWS_VERSION &&
        h.source_path_hash == path_hash &&
        (h.source_size != src->size || h.source_sec != src->sec || h.source_nsec != src->nsec))
      unlink(other);
  }
  closedir(dir);
}

static SEXP copy_result(const char *dest, uint64_t key, const rows_header *h, const double *G,
                        const double *largest, const file_id *src, int reused) {
  const int p = (int) h->p;
  const char *names[] = {"path", "key", "stats", "gram", "largest", "source_id", "reused",
                         "offset", ""};
  SEXP res = PROTECT(mkNamed(VECSXP, names));
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long) key);
  SET_VECTOR_ELT(res, 0, mkString(dest));
  SET_VECTOR_ELT(res, 1, mkString(hex));
  SEXP stats = allocVector(REALSXP, 5);
  SET_VECTOR_ELT(res, 2, stats);
  memcpy(REAL(stats), h->stats, sizeof h->stats);
  SEXP gram = allocMatrix(REALSXP, p, p);
  SET_VECTOR_ELT(res, 3, gram);
  memcpy(REAL(gram), G, (size_t) p * p * sizeof(double));
  SEXP big = allocVector(REALSXP, p);
  SET_VECTOR_ELT(res, 4, big);
  memcpy(REAL(big), largest, (size_t) p * sizeof(double));
  SEXP id = allocVector(REALSXP, 3);
  SET_VECTOR_ELT(res, 5, id);
  REAL(id)[0] = (double) src->size;
  REAL(id)[1] = (double) src->sec;
  REAL(id)[2] = (double) src->nsec;
  SET_VECTOR_ELT(res, 6, ScalarLogical(reused));
  SET_VECTOR_ELT(res, 7, ScalarReal((double) h->header_bytes));
  UNPROTECT(1);
  return res;
}

static void copy_error(const copy_failure *f, const char *dest) {
  char shown[32];   /* the value as R prints it */
  if (ISNA(f->value)) snprintf(shown, sizeof shown, "NA");
  else if (ISNAN(f->value)) snprintf(shown, sizeof shown, "NaN");
  else if (!R_FINITE(f->value)) snprintf(shown, sizeof shown, f->value > 0 ? "Inf" : "-Inf");
  else snprintf(shown, sizeof shown, "%g", f->value);
  if (strcmp(f->what, "interrupt") == 0)
    error("the copy of the rows was interrupted; nothing was kept");
  if (strcmp(f->what, "write") == 0)
    error("cannot write the copy of the rows '%s' (is the disk full? set options(sgld.cache_dir) "
          "to a directory with room): %s", dest, strerror(f->err));
  if (strcmp(f->what, "binary") == 0)
    error("the response must be 0/1 or -1/+1; it has %s in row %lld", shown, (long long) f->row + 1);
  if (f->col < 0)
    error("`y` must be finite; it has %s at position %lld", shown, (long long) f->row + 1);
  error("`x` must be finite; it has %s in row %lld, column %d", shown, (long long) f->row + 1,
        f->col + 1);
}

/* The model's copy of its rows in the cache directory: reused when a valid
   copy of the same content is there, else written (and copies of an older
   state of the same source removed). Returns its path and key, the
   response's mean, variance and binary values, X'X of the covariates, their
   largest absolute values, the source's identity, whether it was reused and
   where its rows start; or an error naming the first non-finite value. */
SEXP sgld_file_rows(SEXP args) {
  const copy_args a = read_copy_args(args);
  const size_t width = a.is_float ? sizeof(float) : sizeof(double);
  struct stat st;
  if (stat(a.src, &st) != 0) error("cannot read the backing file '%s': %s", a.src, strerror(errno));
  const file_id src = id_of(&st);
  const uint64_t key = copy_key(&a, &src);
  const size_t dest_len = strlen(a.cache) + 64;
  char *dest = R_alloc(dest_len, 1), *partial = R_alloc(dest_len, 1);
  snprintf(dest, dest_len, "%s/sgld-%016llx.rows", a.cache, (unsigned long long) key);
  snprintf(partial, dest_len, "%s.partial-%ld", dest, (long) getpid());
  const int p = a.p;
  double *G = (double *) R_alloc((size_t) p * p + p, sizeof(double)), *largest = G + (size_t) p * p;
  rows_header h;

  int fd = open(dest, O_RDONLY);
  if (fd >= 0) {
    int foreign;
    const char *bad = fstat(fd, &st) != 0 ? "cannot be read"
                      : check_copy(fd, &st, key, a.n, p, &h, &foreign);
    const size_t extra = ((size_t) p * p + p) * sizeof(double);
    if (!bad && pread(fd, G, extra, sizeof h) != (ssize_t) extra) bad = "cannot be read";
    close(fd);
    if (!bad) return copy_result(dest, key, &h, G, largest, &src, 1);
    if (foreign)
      error("the cache directory holds a file '%s' that is not a copy written by sgld; remove "
            "it, or set options(sgld.cache_dir) to another directory", dest);
    /* a damaged copy of this content: written again below */
  }

  size_t bytes;
  const unsigned char *base = map_file(a.src, &bytes, "the backing file");
  if ((double) bytes != (double) a.n * a.ncol * width) {
    munmap((void *) base, bytes);
    error("the backing file '%s' has %.0f bytes, but a %lld x %d matrix of %s needs %.0f: "
          "it is truncated, or the descriptor does not describe it", a.src, (double) bytes,
          (long long) a.n, a.ncol, a.is_float ? "floats" : "doubles",
          (double) a.n * a.ncol * width);
  }
  posix_madvise((void *) base, bytes, POSIX_MADV_SEQUENTIAL);
  FILE *out = fopen(partial, "wb");
  if (!out) {
    int e = errno;
    munmap((void *) base, bytes);
    error("cannot write the copy of the rows '%s' in the cache directory: %s; set "
          "options(sgld.cache_dir) to a directory you can write", partial, strerror(e));
  }
  memset(&h, 0, sizeof h);
  memcpy(h.magic, ROWS_MAGIC, 8);
  h.version = ROWS_VERSION;
  h.header_bytes = header_bytes_for(p);
  h.n = (uint64_t) a.n;
  h.p = (uint64_t) p;
  h.key = key;
  h.source_path_hash = fnv(FNV_START, a.src, strlen(a.src) + 1);
  h.source_size = src.size;
  h.source_sec = src.sec;
  h.source_nsec = src.nsec;
  /* the copy's modification time: whole, even seconds (exact on file systems
     with coarse times) and in the past, so that no later write leaves it */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  h.written_sec = ((int64_t) now.tv_sec - 2) / 2 * 2;
  copy_failure f = {NULL, 0, 0, 0, 0};
  write_copy(&a, base, out, &h, G, largest, &f);
  munmap((void *) base, bytes);
  if (!f.what) {
    const size_t extra = ((size_t) p * p + p) * sizeof(double);
    if (fseek(out, 0, SEEK_SET) != 0 || fwrite(&h, sizeof h, 1, out) != 1 ||
        fwrite(G, 1, extra, out) != extra || fflush(out) != 0) {
      f.what = "write";
      f.err = errno;
    }
  }
  if (!f.what) {
    const struct timespec times[2] = {{(time_t) h.written_sec, 0}, {(time_t) h.written_sec, 0}};
    if (fchmod(fileno(out), 0444) != 0 || futimens(fileno(out), times) != 0) {
      f.what = "write";
      f.err = errno;
    }
  }
  if (fclose(out) != 0 && !f.what) {
    f.what = "write";
    f.err = errno;
  }
  if (!f.what && rename(partial, dest) != 0) {
    f.what = "write";
    f.err = errno;
  }
  if (f.what) {
    remove(partial);
    copy_error(&f, dest);
  }
  remove_stale(a.cache, dest, h.source_path_hash, &src);
  return copy_result(dest, key, &h, G, largest, &src, 0);
}

#endif
