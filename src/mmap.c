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
 * from: the backing file's path, size, modification time and a checksum of
 * its content (a change through bigmemory's own map keeps size and time),
 * the columns taken, the response and its coding. So models on the same content share
 * one copy, and models on different content (a logistic and a linear model
 * code the response differently) never read each other's. It starts with a
 * header (rows_header: the key, the source's identity and checksum, the
 * copy's own checksum, the response's summaries and the covariates' Gram
 * matrix X'X for the rank check), and its modification time is set, when
 * written, to a time recorded in the header: any later write to it changes
 * that time, and one whose time was set back still fails its checksum.
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
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#endif
#include <signal.h>
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

volatile int sgld_rows_lost = 0;

SEXP sgld_rows_lost_since(void) {
  return ScalarLogical(FALSE);
}

#else

/* ------------------------------------------------- the copy's header -- */

#define ROWS_MAGIC "SGLDROWS"
#define ROWS_VERSION 2       /* 2: checksums of the source and of the copy */
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
  uint64_t source_sum;          /* content_sum() of the source when the copy was made */
  uint64_t copy_sum;            /* content_sum() of this file, with this field 0 */
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

/* ------------------------------------------------ content checksums -- */

/* A copy is keyed by the content it was made from, not only by time stamps:
   a big.matrix changed in place through bigmemory (a write into its memory
   map, then flush()) leaves its backing file's size and, on Linux, often its
   modification time as they were. So the key also holds a checksum of the
   source's bytes, and the copy's header a checksum of the copy's own bytes,
   checked before the copy is used. A file of up to SUM_FULL_BYTES is summed
   whole (a source and its copy of 61 MB each, 2e6 rows: 25 ms of CPU for
   both, from the page cache, at every call that maps the model; 130 ms of
   wall time with 2 cores at load 7); a larger one in
   SUM_SAMPLES blocks spread evenly over it, plus the first and last block of
   each of its `parts` (the source's columns, the copy's rows region): a
   change to a whole column, or at either end of one, is always seen; a few
   scattered values of a file larger than 64 MB may not be (the size and
   modification time are checked as well). */
#define SUM_FULL_BYTES ((int64_t) 64 << 20)
#define SUM_BLOCK 4096
#define SUM_SAMPLES 1024
#define SUM_MAX_PARTS 4096

/* Four lanes of words, each step (lane ^ word) * odd, then a shift-xor: a
   bijection of the lane's state for a given word, so any one changed word
   changes the sum. The shift-xor is needed: without it a flipped sign bit
   stays the top bit through the multiplication, and two sign flips in one
   lane cancel, as they do when a column is negated in place. */
static uint64_t sum_bytes(uint64_t h, const unsigned char *b, size_t len) {
  uint64_t lane[4] = {h, h ^ UINT64_C(0x9e3779b97f4a7c15), h ^ UINT64_C(0xc2b2ae3d27d4eb4f),
                      h ^ UINT64_C(0x165667b19e3779f9)};
  const uint64_t odd = UINT64_C(0xff51afd7ed558ccd);
  size_t i = 0;
  for (; i + 32 <= len; i += 32)
    for (int k = 0; k < 4; k++) {
      uint64_t w;
      memcpy(&w, b + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * odd;
      lane[k] ^= lane[k] >> 29;
    }
  h = fnv(h, lane, sizeof lane);
  return fnv(h, b + i, len - i);
}

/* sums bytes [from, from + len) of the file open as fd into h; -1 if they
   cannot all be read */
static int sum_range(int fd, int64_t from, int64_t len, unsigned char *buf, size_t buf_len,
                     uint64_t *h) {
  while (len > 0) {
    const size_t want = (size_t) (len < (int64_t) buf_len ? len : (int64_t) buf_len);
    const ssize_t got = pread(fd, buf, want, (off_t) from);
    if (got != (ssize_t) want) return -1;
    *h = sum_bytes(*h, buf, want);
    from += (int64_t) want;
    len -= (int64_t) want;
  }
  return 0;
}

/* The checksum of bytes [start, size) of the file open as fd, seen as
   `parts` equal parts (see above). Reads with pread, never through a
   mapping, so a file shortened meanwhile gives an error, not a bus error.
   Returns 0 and sets *sum, or -1 if the file cannot be read. */
static int content_sum(int fd, int64_t start, int64_t size, int64_t parts, uint64_t *sum) {
  static unsigned char buf[1 << 20];
  uint64_t h = fnv(FNV_START, &size, sizeof size);
  const int64_t len = size - start;
  if (len <= SUM_FULL_BYTES) {
    if (sum_range(fd, start, len, buf, sizeof buf, &h) != 0) return -1;
    *sum = h;
    return 0;
  }
  for (int j = 0; j < SUM_SAMPLES; j++) {
    const int64_t at = start + (int64_t) ((double) j / (SUM_SAMPLES - 1) * (double) (len - SUM_BLOCK)) / 8 * 8;
    if (sum_range(fd, at, SUM_BLOCK, buf, sizeof buf, &h) != 0) return -1;
  }
  if (parts > SUM_MAX_PARTS) parts = SUM_MAX_PARTS;
  const int64_t part = len / (parts > 0 ? parts : 1);
  for (int64_t k = 0; part >= SUM_BLOCK && k < parts; k++) {
    const int64_t first = start + k * part, last = first + part - SUM_BLOCK;
    if (sum_range(fd, first, SUM_BLOCK, buf, sizeof buf, &h) != 0 ||
        sum_range(fd, last, SUM_BLOCK, buf, sizeof buf, &h) != 0)
      return -1;
  }
  *sum = h;
  return 0;
}

/* The copy's own checksum: its header with copy_sum set to 0, then the rest
   of the file (X'X, the largest values, the rows). */
static int copy_sum_of(int fd, const rows_header *h, int64_t size, uint64_t *sum) {
  rows_header zeroed = *h;
  zeroed.copy_sum = 0;
  uint64_t rest;
  if (content_sum(fd, (int64_t) sizeof zeroed, size, 1, &rest) != 0) return -1;
  *sum = sum_bytes(rest, (const unsigned char *) &zeroed, sizeof zeroed);
  return 0;
}

/* The source's checksum: the whole file when it is small, else sampled with
   each column's ends */
static int source_sum_of(const char *path, int64_t ncol, uint64_t *sum) {
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  struct stat st;
  int ok = fstat(fd, &st) == 0 ? content_sum(fd, 0, (int64_t) st.st_size, ncol, sum) : -1;
  close(fd);
  return ok;
}

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
  uint64_t sum;
  if (copy_sum_of(fd, h, id.size, &sum) != 0) return "cannot be read to the end";
  if (sum != h->copy_sum)
    return "was modified after it was written (its content no longer matches the checksum "
           "written with it)";
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

/* ------------------------------------------- a file shortened under a run --

   A file truncated while it is mapped (by another process: the copy is
   read-only, but root, or a user who makes it writable, can) turns every
   read of its lost pages into SIGBUS, which kills R. Checks of the size
   between chunks cannot prevent it (the truncation can come in the middle
   of one, and a chunk reads on several threads), and a private or
   populated mapping does not either (its pages not yet read still come
   from the file). So reads of a copy's mapping are guarded: a SIGBUS whose
   address lies in a registered mapping is answered by mapping a page of
   zeros over the lost page (mmap is a system call, safe in a handler on
   Linux and the BSDs, and this works on whichever thread faulted; no
   longjmp, so no thread is left holding a lock) and setting
   sgld_rows_lost. The read then goes on with zeros, which no chain keeps:
   it checks the flag after each gradient and before keeping a state, and
   stops (chain.c); R then raises an error that holds the draws made before
   (R/run.R). A SIGBUS anywhere else goes to the handler that was there
   before (R's), as if this one were not installed. */

volatile int sgld_rows_lost = 0;

#define GUARDED_MAX 64
static struct { volatile uintptr_t from, to; } guarded[GUARDED_MAX];
static struct sigaction previous_bus;
static uintptr_t page_bytes;

static void on_bus(int sig, siginfo_t *info, void *context) {
  (void) sig;
  (void) context;
  const uintptr_t at = (uintptr_t) info->si_addr;
  for (int i = 0; i < GUARDED_MAX; i++)
    if (at >= guarded[i].from && at < guarded[i].to) {
      void *page = (void *) (at & ~(page_bytes - 1));
      if (mmap(page, page_bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
          MAP_FAILED) {
        sgld_rows_lost = 1;
        return;
      }
      break;
    }
  /* not ours: the previous handler gets the repeated fault */
  sigaction(SIGBUS, &previous_bus, NULL);
}

/* installed again whenever a mapping is made, in case R replaced it */
static void guard_reads(void) {
  struct sigaction now;
  if (sigaction(SIGBUS, NULL, &now) != 0) return;
  if ((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_bus) return;
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_sigaction = on_bus;
  act.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&act.sa_mask);
  page_bytes = (uintptr_t) sysconf(_SC_PAGESIZE);
  previous_bus = now;
  sigaction(SIGBUS, &act, NULL);
}

static void guard_add(void *addr, size_t bytes) {
  for (int i = 0; i < GUARDED_MAX; i++)
    if (guarded[i].to == 0) {
      guarded[i].from = (uintptr_t) addr;
      guarded[i].to = (uintptr_t) addr + bytes;
      guard_reads();
      return;
    }
  /* more live mappings than slots: this one is read unguarded, as before */
}

static void guard_remove(void *addr) {
  for (int i = 0; i < GUARDED_MAX; i++)
    if (guarded[i].from == (uintptr_t) addr) {
      guarded[i].to = 0;
      guarded[i].from = 0;
    }
}

/* Has a read of a copy found its file shortened since the last call? Clears. */
SEXP sgld_rows_lost_since(void) {
  const int lost = sgld_rows_lost != 0;
  sgld_rows_lost = 0;
  return ScalarLogical(lost);
}

static void unmap(SEXP ptr) {
  void *p = R_ExternalPtrAddr(ptr);
  SEXP prot = R_ExternalPtrProtected(ptr);
  if (!p || TYPEOF(prot) != VECSXP) return;
  const mapping *m = (const mapping *) RAW(VECTOR_ELT(prot, 0));
  guard_remove(p);
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
  /* a change in place through bigmemory's own map leaves size and time */
  SEXP sum_ = env_value(file, "source_sum"), ncol_ = env_value(file, "source_ncol");
  uint64_t sum;
  if (TYPEOF(sum_) == STRSXP && XLENGTH(sum_) == 1 && TYPEOF(ncol_) == INTSXP &&
      XLENGTH(ncol_) == 1 && source_sum_of(path, INTEGER(ncol_)[0], &sum) == 0 &&
      sum != strtoull(CHAR(STRING_ELT(sum_, 0)), NULL, 16))
    error("the file-backed matrix's backing file '%s' was changed in place after the model "
          "was built (its content no longer matches the checksum taken then, though its size "
          "and modification time do): the model's copy holds the data as they were; build "
          "the model again from the matrix", path);
}

/* The copy was removed, or another file moved over it, while this process
   held it mapped (during a run, or between runs): the mapping still reads
   the file as it was written and checked (unlinking does not unmap), so the
   run goes on from it, with one warning per model. */
static const double *kept_mapping(SEXP file, SEXP ptr, const char *path, const char *what) {
  const mapping *m = (const mapping *) RAW(VECTOR_ELT(R_ExternalPtrProtected(ptr), 0));
  SEXP warned = env_value(file, "orphaned");
  if (!(TYPEOF(warned) == LGLSXP && XLENGTH(warned) == 1 && LOGICAL(warned)[0] == TRUE)) {
    defineVar(install("orphaned"), ScalarLogical(TRUE), file);
    warning("the model's copy of its rows '%s' %s while this process had it mapped; the "
            "run reads its mapping, which still holds the model's rows as written, and "
            "returns its draws. Another process (or this one in a new session) cannot read "
            "it: build the model again from its file-backed matrix", path, what);
  }
  return (const double *) ((const char *) R_ExternalPtrAddr(ptr) + m->offset);
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
  SEXP old = env_value(file, "ptr");
  const int mapped = TYPEOF(old) == EXTPTRSXP && R_ExternalPtrAddr(old) != NULL;
  if (stat(path, &st) != 0) {
    if (mapped && errno == ENOENT) return kept_mapping(file, old, path, "was removed");
    error("the model's copy of its rows '%s' cannot be read (%s): it was removed (a cleaned "
          "cache?), or this process does not see that directory; build the model again from "
          "its file-backed matrix, which writes it again (for futures on other machines, set "
          "options(sgld.cache_dir) to a directory they share)", path, strerror(errno));
  }
  /* checked before every run, a mapping kept or not: a copy changed in place
     (and its time set back) shows through a shared mapping */
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    error("cannot open the model's copy of its rows '%s': %s", path, strerror(errno));
  rows_header h;
  int foreign;
  const char *bad = fstat(fd, &st) != 0 ? "cannot be read"
                    : check_copy(fd, &st, key, n, p, &h, &foreign);
  if (bad) {
    close(fd);
    /* another file moved over the path: the mapping still holds the old one */
    if (mapped) {
      const mapping *m = (const mapping *) RAW(VECTOR_ELT(R_ExternalPtrProtected(old), 0));
      if (m->id.ino != st.st_ino || m->id.dev != st.st_dev)
        return kept_mapping(file, old, path, "was replaced by another file");
    }
    error("the model's copy of its rows '%s' %s; build the model again from its file-backed "
          "matrix, which writes a new copy", path, bad);
  }
  const file_id id = id_of(&st);
  if (TYPEOF(old) == EXTPTRSXP && R_ExternalPtrAddr(old)) {
    const mapping *m = (const mapping *) RAW(VECTOR_ELT(R_ExternalPtrProtected(old), 0));
    if (same_file(&m->id, &id)) {
      close(fd);
      return (const double *) ((const char *) R_ExternalPtrAddr(old) + m->offset);
    }
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
  guard_add(addr, m.bytes);
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
static uint64_t copy_key(const copy_args *a, const file_id *src, uint64_t source_sum) {
  uint64_t h = FNV_START;
  const int64_t fields[] = {ROWS_VERSION, src->size, src->sec, src->nsec, a->is_float,
                            (int64_t) a->n, a->ncol, a->ycol, a->response, a->p};
  h = fnv(h, a->src, strlen(a->src) + 1);
  h = fnv(h, &source_sum, sizeof source_sum);
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

/* A copy is written as "<copy>.partial-<host>-<pid>" and renamed into place
   once whole. A process killed meanwhile (SIGKILL, a crash, a full disk it
   did not survive) leaves its partial file behind: one of this host whose
   process no longer exists is removed by the next build in the directory
   (partial files of other hosts sharing the directory are left alone). */
static void partial_name(char *out, size_t len, const char *dest) {
  char host[128];
  if (gethostname(host, sizeof host) != 0) host[0] = 0;
  host[sizeof host - 1] = 0;
  for (char *c = host; *c; c++) if (*c == '/' || *c == '-') *c = '_';
  snprintf(out, len, "%s.partial-%s-%ld", dest, host, (long) getpid());
}

/* is `tail` (the name after "sgld-<16 hex digits>") the partial suffix of a
   dead process of this host? */
static int dead_partial(const char *tail) {
  const char *prefix = ".rows.partial-";
  if (strncmp(tail, prefix, strlen(prefix)) != 0) return 0;
  tail += strlen(prefix);
  const char *dash = strrchr(tail, '-');
  if (dash) {   /* else the name of earlier versions, "partial-<pid>" */
    char host[128];
    if (gethostname(host, sizeof host) != 0) return 0;
    host[sizeof host - 1] = 0;
    for (char *c = host; *c; c++) if (*c == '/' || *c == '-') *c = '_';
    if ((size_t) (dash - tail) != strlen(host) || strncmp(tail, host, strlen(host)) != 0) return 0;
  }
  char *end;
  const long pid = strtol(dash ? dash + 1 : tail, &end, 10);
  if (*end != 0 || pid <= 0 || pid == (long) getpid()) return 0;
  return kill((pid_t) pid, 0) != 0 && errno == ESRCH;
}

/* Copies of an earlier state of the same source: no model can use them any
   more (a model checks its source before each run), so they are removed. */
static void remove_stale(const char *cache, const char *keep, uint64_t path_hash,
                         const file_id *src, uint64_t source_sum) {
  DIR *dir = opendir(cache);
  if (!dir) return;
  const size_t len = strlen(cache) + 512;
  char *other = R_alloc(len, 1);
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    const size_t l = strlen(e->d_name);
    if (l > 26 && strncmp(e->d_name, "sgld-", 5) == 0 && dead_partial(e->d_name + 21)) {
      snprintf(other, len, "%s/%s", cache, e->d_name);
      unlink(other);
      continue;
    }
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
        (h.source_size != src->size || h.source_sec != src->sec || h.source_nsec != src->nsec ||
         h.source_sum != source_sum))
      unlink(other);
  }
  closedir(dir);
}

static SEXP copy_result(const char *dest, uint64_t key, const rows_header *h, const double *G,
                        const double *largest, const file_id *src, int reused) {
  const int p = (int) h->p;
  const char *names[] = {"path", "key", "stats", "gram", "largest", "source_id", "reused",
                         "offset", "source_sum", ""};
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
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long) h->source_sum);
  SET_VECTOR_ELT(res, 8, mkString(hex));
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
  if (strcmp(f->what, "write") == 0 && f->err == EFBIG)
    error("cannot write the copy of the rows '%s': it would pass this process's file size "
          "limit (`ulimit -f`, RLIMIT_FSIZE); raise the limit, or use the data as an in-memory "
          "matrix; the partial copy was removed", dest);
  if (strcmp(f->what, "write") == 0 && f->err == ENOSPC)
    error("cannot write the copy of the rows '%s': no space left on the cache directory's "
          "device; set options(sgld.cache_dir) to a directory with room; the partial copy "
          "was removed", dest);
#ifdef EDQUOT
  if (strcmp(f->what, "write") == 0 && f->err == EDQUOT)
    error("cannot write the copy of the rows '%s': the disk quota is exceeded; set "
          "options(sgld.cache_dir) to a directory with room; the partial copy was removed", dest);
#endif
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
/* An existing copy of this content: 1 with its header and Gram matrix
   read when it is whole, 0 when there is none or it is damaged (written
   again by the caller); an error when the name is taken by a file that is
   not a copy. */
static int read_existing_copy(const char *dest, uint64_t key, const copy_args *a,
                              rows_header *h, double *G) {
  int fd = open(dest, O_RDONLY);
  if (fd < 0) return 0;
  struct stat st;
  int foreign = 0;
  const char *bad = fstat(fd, &st) != 0 ? "cannot be read"
                    : check_copy(fd, &st, key, a->n, a->p, h, &foreign);
  const size_t extra = ((size_t) a->p * a->p + a->p) * sizeof(double);
  if (!bad && pread(fd, G, extra, sizeof *h) != (ssize_t) extra) bad = "cannot be read";
  close(fd);
  if (!bad) return 1;
  if (foreign)
    error("the cache directory holds a file '%s' that is not a copy written by sgld; remove "
          "it, or set options(sgld.cache_dir) to another directory", dest);
  return 0;
}

static void new_copy_header(rows_header *h, const copy_args *a, uint64_t key,
                            const file_id *src, uint64_t source_sum) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, ROWS_MAGIC, 8);
  h->version = ROWS_VERSION;
  h->header_bytes = header_bytes_for(a->p);
  h->n = (uint64_t) a->n;
  h->p = (uint64_t) a->p;
  h->key = key;
  h->source_path_hash = fnv(FNV_START, a->src, strlen(a->src) + 1);
  h->source_size = src->size;
  h->source_sec = src->sec;
  h->source_nsec = src->nsec;
  h->source_sum = source_sum;
  /* the copy's modification time: whole, even seconds (exact on file systems
     with coarse times) and in the past, so that no later write leaves it */
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  h->written_sec = ((int64_t) now.tv_sec - 2) / 2 * 2;
}

static void note_write_failure(copy_failure *f) {
  f->what = "write";
  f->err = errno;
}

/* After the rows: the header and Gram matrix, then the checksum of the
   whole and the header that holds it, then read-only with the header's
   time. Any failure is recorded in f. */
static void seal_copy(FILE *out, rows_header *h, const double *G, int p, R_xlen_t n,
                      copy_failure *f) {
  const size_t extra = ((size_t) p * p + p) * sizeof(double);
  if (fseek(out, 0, SEEK_SET) != 0 || fwrite(h, sizeof *h, 1, out) != 1 ||
      fwrite(G, 1, extra, out) != extra || fflush(out) != 0) {
    note_write_failure(f);
    return;
  }
  const int64_t size = (int64_t) h->header_bytes + (int64_t) (p + 1) * (int64_t) n * 8;
  if (copy_sum_of(fileno(out), h, size, &h->copy_sum) != 0 ||
      pwrite(fileno(out), h, sizeof *h, 0) != (ssize_t) sizeof *h) {
    note_write_failure(f);
    return;
  }
  const struct timespec times[2] = {{(time_t) h->written_sec, 0}, {(time_t) h->written_sec, 0}};
  if (fchmod(fileno(out), 0444) != 0 || futimens(fileno(out), times) != 0)
    note_write_failure(f);
}

SEXP sgld_file_rows(SEXP args) {
  const copy_args a = read_copy_args(args);
  const size_t width = a.is_float ? sizeof(float) : sizeof(double);
  struct stat st;
  if (stat(a.src, &st) != 0) error("cannot read the backing file '%s': %s", a.src, strerror(errno));
  const file_id src = id_of(&st);
  uint64_t source_sum;
  if (source_sum_of(a.src, a.ncol, &source_sum) != 0)
    error("cannot read the backing file '%s' to the end: %s", a.src, strerror(errno));
  const uint64_t key = copy_key(&a, &src, source_sum);
  const size_t dest_len = strlen(a.cache) + 256;
  char *dest = R_alloc(dest_len, 1), *partial = R_alloc(dest_len, 1);
  snprintf(dest, dest_len, "%s/sgld-%016llx.rows", a.cache, (unsigned long long) key);
  partial_name(partial, dest_len, dest);
  const int p = a.p;
  double *G = (double *) R_alloc((size_t) p * p + p, sizeof(double)), *largest = G + (size_t) p * p;
  rows_header h;
  if (read_existing_copy(dest, key, &a, &h, G))
    return copy_result(dest, key, &h, G, largest, &src, 1);

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
  /* past the file size limit (ulimit -f) a write raises SIGXFSZ, which
     kills the process unless ignored; ignored, the write fails with EFBIG
     and is an R error like a full disk */
  struct sigaction ignore_xfsz, old_xfsz;
  memset(&ignore_xfsz, 0, sizeof ignore_xfsz);
  ignore_xfsz.sa_handler = SIG_IGN;
  sigemptyset(&ignore_xfsz.sa_mask);
  sigaction(SIGXFSZ, &ignore_xfsz, &old_xfsz);
  FILE *out = fopen(partial, "w+b");   /* read back for its checksum */
  if (!out) {
    sigaction(SIGXFSZ, &old_xfsz, NULL);
    int e = errno;
    munmap((void *) base, bytes);
    error("cannot write the copy of the rows '%s' in the cache directory: %s; set "
          "options(sgld.cache_dir) to a directory you can write", partial, strerror(e));
  }
  new_copy_header(&h, &a, key, &src, source_sum);
  copy_failure f = {NULL, 0, 0, 0, 0};
  write_copy(&a, base, out, &h, G, largest, &f);
  munmap((void *) base, bytes);
  if (!f.what) seal_copy(out, &h, G, p, a.n, &f);
  if (fclose(out) != 0 && !f.what) note_write_failure(&f);
  sigaction(SIGXFSZ, &old_xfsz, NULL);
  if (!f.what && rename(partial, dest) != 0) note_write_failure(&f);
  if (f.what) {
    remove(partial);
    copy_error(&f, dest);
  }
  remove_stale(a.cache, dest, h.source_path_hash, &src, source_sum);
  return copy_result(dest, key, &h, G, largest, &src, 0);
}

#endif
