/*
 * The rank check of a sparse design (check_rank_sparse() in
 * R/design-sparse.R) without the Matrix package's sparse X'X, whose
 * product cost 85 MB of peak memory beside a 23 MB design of 10^5 x 2,000
 * (a transposed copy, then the unsymmetric product): the Gram matrix X'X
 * summed row by row from the design's rows (one x_i x_i' per row,
 * O(sum of squared row counts)) into a d x d scratch matrix, its columns
 * scaled to unit sums of squares, and LAPACK's pivoted Cholesky
 * factorisation (dpstrf) in place: d^2 doubles in all.
 */
#define USE_FC_LEN_T
#include <math.h>
#include <string.h>
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Lapack.h>
#ifndef FCONE
#define FCONE
#endif

/* row_start (n + 1 integers from 0), col (0-based, < d), val (one double per
   non-zero, or NULL for all ones; Matrix's RsparseMatrix slots p, j, x), d,
   tol: list(ss = each column's sum of squares, rank, pivot (1-based)); rank
   and pivot NULL when a sum of squares is 0 or not finite (R says which). */
SEXP sgld_sparse_gram_rank(SEXP row_start, SEXP col, SEXP val, SEXP d_, SEXP tol_) {
  if (TYPEOF(row_start) != INTSXP || XLENGTH(row_start) < 1)
    error("internal: 'row_start' must be an integer vector");
  if (TYPEOF(col) != INTSXP) error("internal: 'col' must be an integer vector");
  if (TYPEOF(d_) != INTSXP || XLENGTH(d_) != 1 || INTEGER(d_)[0] < 1 ||
      INTEGER(d_)[0] > 46340)   /* d^2 must be an int for LAPACK's lda * n */
    error("internal: 'd' must be one integer in 1..46340");
  if (TYPEOF(tol_) != REALSXP || XLENGTH(tol_) != 1 || !(REAL(tol_)[0] > 0))
    error("internal: 'tol' must be one positive number");
  const int d = INTEGER(d_)[0];
  const R_xlen_t n = XLENGTH(row_start) - 1, nnz = XLENGTH(col);
  const int *rs = INTEGER(row_start), *cj = INTEGER(col);
  if (rs[0] != 0 || rs[n] != nnz) error("internal: 'row_start' must run from 0 to length(col)");
  for (R_xlen_t i = 0; i < n; i++)
    if (rs[i] > rs[i + 1]) error("internal: 'row_start' must not decrease");
  for (R_xlen_t k = 0; k < nnz; k++)
    if (cj[k] < 0 || cj[k] >= d) error("internal: 'col' out of range");
  const double *x = NULL;
  if (val != R_NilValue) {
    if (TYPEOF(val) != REALSXP || XLENGTH(val) != nnz)
      error("internal: 'val' must be NULL or one double per non-zero");
    x = REAL(val);
  }
  double *G = (double *) R_alloc((size_t) d * d, sizeof(double));
  memset(G, 0, (size_t) d * d * sizeof(double));
  /* the upper triangle, G[a + b d] with a <= b */
  for (R_xlen_t i = 0; i < n; i++) {
    for (int p = rs[i]; p < rs[i + 1]; p++) {
      const double xp = x ? x[p] : 1.0;
      for (int q = rs[i]; q < rs[i + 1]; q++) {
        const int a = cj[p], b = cj[q];
        if (a <= b) G[a + (size_t) b * d] += xp * (x ? x[q] : 1.0);
      }
    }
  }
  SEXP out = PROTECT(allocVector(VECSXP, 3));
  SEXP names = PROTECT(allocVector(STRSXP, 3));
  SET_STRING_ELT(names, 0, mkChar("ss"));
  SET_STRING_ELT(names, 1, mkChar("rank"));
  SET_STRING_ELT(names, 2, mkChar("pivot"));
  setAttrib(out, R_NamesSymbol, names);
  SEXP ss = PROTECT(allocVector(REALSXP, d));
  int usable = 1;
  for (int j = 0; j < d; j++) {
    REAL(ss)[j] = G[j + (size_t) j * d];
    if (!(isfinite(REAL(ss)[j]) && REAL(ss)[j] > 0)) usable = 0;
  }
  SET_VECTOR_ELT(out, 0, ss);
  if (usable) {
    double *scale = (double *) R_alloc(d, sizeof(double));
    for (int j = 0; j < d; j++) scale[j] = 1.0 / sqrt(REAL(ss)[j]);
    for (int b = 0; b < d; b++)
      for (int a = 0; a <= b; a++) G[a + (size_t) b * d] *= scale[a] * scale[b];
    SEXP pivot = PROTECT(allocVector(INTSXP, d));
    int rank = 0, info = 0;
    double tol = REAL(tol_)[0];
    double *work = (double *) R_alloc(2 * (size_t) d, sizeof(double));
    F77_CALL(dpstrf)("U", &d, G, &d, INTEGER(pivot), &rank, &tol, work, &info FCONE);
    if (info < 0) error("internal: dpstrf argument %d", -info);
    SET_VECTOR_ELT(out, 1, ScalarInteger(rank));
    SET_VECTOR_ELT(out, 2, pivot);
    UNPROTECT(1);
  }
  UNPROTECT(3);
  return out;
}
