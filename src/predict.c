/*
 * Predictions of the regression models from posterior draws: for every row
 * x_i of a design and every chosen draw beta_s, the linear predictor
 * eta = x_i' beta_s + offset_i and, for the logistic model, the probability
 * 1 / (1 + exp(-eta)); returned either averaged over the draws (one number per
 * row) or, on request, as the rows x draws matrix.
 *
 * The work is blocked over draws so that memory stays bounded by a block and
 * the design's non-zeros, never rows x draws unless the matrix is asked for:
 * the chosen draws
 * of a block are gathered once from the chains into a contiguous draws x p
 * buffer, and then, row by row, each non-zero covariate adds its column of
 * the buffer (draws contiguous, so the inner loop is a plain axpy) to the
 * row's linear predictors. The design's non-zeros are listed once, so
 * one-hot designs such as Adult's cost their non-zeros only. Blocks of rows
 * may run in OpenMP threads, each with scratch of its own; every row's sum
 * over the draws is taken in the same order whatever the number of threads,
 * so the results are the same bits. No R API is called inside the loops.
 */
#include <R.h>
#include <Rinternals.h>
#include <Rmath.h>
#include "sgld.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#define PRED_DRAW_BLOCK 256   /* draws per block: 2 KB per covariate column */
#define PRED_ROW_BLOCK 32     /* rows per task when threads share them */

typedef struct pred_draws {
  int chains;
  const double **chain;       /* each chain's draws, K_c x ld column-major */
  const R_xlen_t *len;        /* K_c */
  const double *pick;         /* chosen draws as 0-based pooled indices, or NULL */
  R_xlen_t count;             /* how many draws are used */
} pred_draws;

/* the pooled draw k (0-based), as chain and row */
static void locate(const pred_draws *D, R_xlen_t k, int *c, R_xlen_t *row) {
  int cc = 0;
  while (cc < D->chains - 1 && k >= D->len[cc]) k -= D->len[cc++];
  *c = cc;
  *row = k;
}

/* draws s0 .. s0 + nb - 1 of the selection into buf (PRED_DRAW_BLOCK x p,
   column-major), the rows past nb zero */
static void gather(const pred_draws *D, R_xlen_t s0, int nb, int p, double *buf) {
  for (int b = 0; b < PRED_DRAW_BLOCK; b++) {
    if (b >= nb) {
      for (int j = 0; j < p; j++) buf[b + (R_xlen_t) j * PRED_DRAW_BLOCK] = 0.0;
      continue;
    }
    const R_xlen_t k = D->pick ? (R_xlen_t) D->pick[s0 + b] : s0 + b;
    int c;
    R_xlen_t row;
    locate(D, k, &c, &row);
    const double *src = D->chain[c];
    const R_xlen_t K = D->len[c];
    for (int j = 0; j < p; j++) buf[b + (R_xlen_t) j * PRED_DRAW_BLOCK] = src[row + (R_xlen_t) j * K];
  }
}

/* The non-zero covariates of every row: row i's columns col[k] and values
   val[k] for k from start[i] to start[i + 1] - 1. Built once, reading X in
   its column-major order, so the blocks of draws then read only the
   non-zeros (at most 12 bytes each: no more than X itself for designs that
   are at least a third zeros). */
static void design_nonzeros(const double *X, R_xlen_t n, int p, R_xlen_t *start,
                            int **col_out, double **val_out) {
  for (R_xlen_t i = 0; i <= n; i++) start[i] = 0;
  for (int j = 0; j < p; j++) {
    const double *xj = X + (R_xlen_t) j * n;
    for (R_xlen_t i = 0; i < n; i++) start[i + 1] += xj[i] != 0.0;
  }
  for (R_xlen_t i = 0; i < n; i++) start[i + 1] += start[i];
  const R_xlen_t nnz = start[n];
  int *col = (int *) R_alloc((size_t) (nnz > 0 ? nnz : 1), sizeof(int));
  double *val = (double *) R_alloc((size_t) (nnz > 0 ? nnz : 1), sizeof(double));
  R_xlen_t *next = (R_xlen_t *) R_alloc((size_t) (n > 0 ? n : 1), sizeof(R_xlen_t));
  for (R_xlen_t i = 0; i < n; i++) next[i] = start[i];
  for (int j = 0; j < p; j++) {
    const double *xj = X + (R_xlen_t) j * n;
    for (R_xlen_t i = 0; i < n; i++) {
      if (xj[i] == 0.0) continue;
      col[next[i]] = j;
      val[next[i]++] = xj[i];
    }
  }
  *col_out = col;
  *val_out = val;
}

/* The linear predictors of one row under a block of gathered draws. Every
   block is computed at its full width (a last, shorter block is padded with
   zero draws): a loop of constant length over restrict-qualified arrays is one
   the compiler vectorizes at the -O2 that R builds packages with. The row's
   sums stay in the first-level cache while its non-zeros add their columns. */
static void linear_row(const int *col, const double *val, int nz, double o,
                       const double *restrict Wb, double *restrict e) {
  for (int b = 0; b < PRED_DRAW_BLOCK; b++) e[b] = o;
  int k = 0;
  /* four non-zeros per pass: a quarter of the loads and stores of e */
  for (; k + 4 <= nz; k += 4) {
    const double *restrict w0 = Wb + (size_t) col[k] * PRED_DRAW_BLOCK;
    const double *restrict w1 = Wb + (size_t) col[k + 1] * PRED_DRAW_BLOCK;
    const double *restrict w2 = Wb + (size_t) col[k + 2] * PRED_DRAW_BLOCK;
    const double *restrict w3 = Wb + (size_t) col[k + 3] * PRED_DRAW_BLOCK;
    const double x0 = val[k], x1 = val[k + 1], x2 = val[k + 2], x3 = val[k + 3];
    for (int b = 0; b < PRED_DRAW_BLOCK; b++)
      e[b] += (x0 * w0[b] + x1 * w1[b]) + (x2 * w2[b] + x3 * w3[b]);
  }
  for (; k < nz; k++) {
    const double *restrict wj = Wb + (size_t) col[k] * PRED_DRAW_BLOCK;
    const double x = val[k];
    for (int b = 0; b < PRED_DRAW_BLOCK; b++) e[b] += x * wj[b];
  }
}

/* The draws of `chains` (a list of matrices whose first p columns are used),
   all of them or those `pick` names (1-based pooled indices); R errors for
   malformed input, before any work. */
static void read_draws(SEXP chains, SEXP pick, int p, pred_draws *D) {
  if (!isNewList(chains) || XLENGTH(chains) < 1) error("`chains` must be a non-empty list");
  const int nch = (int) XLENGTH(chains);
  const double **chain = (const double **) R_alloc((size_t) nch, sizeof(double *));
  R_xlen_t *len = (R_xlen_t *) R_alloc((size_t) nch, sizeof(R_xlen_t));
  R_xlen_t total = 0;
  for (int c = 0; c < nch; c++) {
    SEXP m = VECTOR_ELT(chains, c);
    if (!isReal(m) || !isMatrix(m) || ncols(m) < p)
      error("`chains[[%d]]` must be a double matrix with at least %d columns", c + 1, p);
    chain[c] = REAL(m);
    len[c] = nrows(m);
    total += len[c];
  }
  *D = (pred_draws) {nch, chain, len, NULL, total};
  if (!isNull(pick)) {
    if (!isReal(pick) || XLENGTH(pick) < 1) error("`pick` must be NULL or double indices");
    D->count = XLENGTH(pick);
    double *pk = (double *) R_alloc((size_t) D->count, sizeof(double));
    for (R_xlen_t k = 0; k < D->count; k++) {
      const double v = REAL(pick)[k];
      if (!(v >= 1 && v <= (double) total) || v != floor(v))
        error("`pick` must hold whole numbers from 1 to %.0f", (double) total);
      pk[k] = v - 1.0;
    }
    D->pick = pk;
  }
  if (D->count < 1) error("there are no draws to predict from");
}

/*
 * X: n x p design (double matrix); chains: list of draws matrices whose first
 * p columns are the coefficients; pick: NULL or 1-based pooled indices of the
 * draws to use; offset: NULL or n numbers; link: the name of the inverse link
 * applied to each linear predictor ("identity"; "logit": probabilities;
 * "log": means exp(eta));
 * keep: TRUE for the n x draws matrix instead of the mean over draws.
 */
SEXP sgld_predict(SEXP X, SEXP chains, SEXP pick, SEXP offset, SEXP link_name,
                  SEXP keep_flag, SEXP threads) {
  if (!isReal(X) || !isMatrix(X)) error("`X` must be a double matrix");
  const R_xlen_t n = nrows(X);
  const int p = ncols(X);
  if (!isLogical(keep_flag) || XLENGTH(keep_flag) != 1 || LOGICAL(keep_flag)[0] == NA_LOGICAL)
    error("`keep` must be TRUE or FALSE");
  if (!isInteger(threads) || XLENGTH(threads) != 1 || INTEGER(threads)[0] < 1)
    error("`threads` must be a positive integer");
  const int link = name_code(link_name, CODES_LINK), keep = LOGICAL(keep_flag)[0];
  int nth = INTEGER(threads)[0];
#ifndef _OPENMP
  nth = 1;
#endif

  pred_draws D;
  read_draws(chains, pick, p, &D);
  if (keep && (double) n * (double) D.count > R_XLEN_T_MAX)
    error("the rows x draws matrix would be too large; use fewer draws (`ndraws`)");
  const double *off = NULL;
  if (!isNull(offset)) {
    if (!isReal(offset) || XLENGTH(offset) != n) error("`offset` must be NULL or %.0f numbers",
                                                       (double) n);
    off = REAL(offset);
  }

  SEXP out = PROTECT(keep ? allocMatrix(REALSXP, (int) n, (int) D.count)
                          : allocVector(REALSXP, n));
  double *res = REAL(out);
  if (!keep) for (R_xlen_t i = 0; i < n; i++) res[i] = 0.0;
  const double *x = REAL(X);
  const size_t pp = (size_t) (p > 0 ? p : 1);
  double *Wb = (double *) R_alloc(PRED_DRAW_BLOCK * pp, sizeof(double));
  R_xlen_t *start = (R_xlen_t *) R_alloc((size_t) n + 1, sizeof(R_xlen_t));
  int *col;
  double *val;
  design_nonzeros(x, n, p, start, &col, &val);
  /* scratch per thread */
  double *eta_all = (double *) R_alloc((size_t) nth * PRED_DRAW_BLOCK, sizeof(double));
  const R_xlen_t row_blocks = (n + PRED_ROW_BLOCK - 1) / PRED_ROW_BLOCK;

  for (R_xlen_t s0 = 0; s0 < D.count; s0 += PRED_DRAW_BLOCK) {
    const int nb = (int) (D.count - s0 < PRED_DRAW_BLOCK ? D.count - s0 : PRED_DRAW_BLOCK);
    R_CheckUserInterrupt();   /* between blocks: nothing is left half-written */
    gather(&D, s0, nb, p, Wb);
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) if (nth > 1)
#endif
    for (R_xlen_t blk = 0; blk < row_blocks; blk++) {
#ifdef _OPENMP
      const int t = omp_get_thread_num();
#else
      const int t = 0;
#endif
      double *eta = eta_all + (size_t) t * PRED_DRAW_BLOCK;
      const R_xlen_t i0 = blk * PRED_ROW_BLOCK;
      const int nr = (int) (n - i0 < PRED_ROW_BLOCK ? n - i0 : PRED_ROW_BLOCK);
      for (int r = 0; r < nr; r++) {
        const R_xlen_t i = i0 + r;
        linear_row(col + start[i], val + start[i], (int) (start[i + 1] - start[i]),
                   off ? off[i] : 0.0, Wb, eta);
        if (link == LINK_LOG) {
          for (int b = 0; b < nb; b++) eta[b] = exp(eta[b]);
        } else if (link == LINK_LOGIT) {
          /* 1 / (1 + exp(-eta)) as R's plogis computes it (exp(-eta) may be
             Inf, giving 0); the division in a loop of its own, which the
             compiler vectorizes */
          for (int b = 0; b < nb; b++) eta[b] = exp(-eta[b]);
          for (int b = 0; b < PRED_DRAW_BLOCK; b++) eta[b] = 1.0 / (1.0 + eta[b]);
        }
        if (keep) {
          for (int b = 0; b < nb; b++) res[i0 + r + (s0 + b) * n] = eta[b];
        } else {
          double acc = 0.0;
          for (int b = 0; b < nb; b++) acc += eta[b];
          res[i0 + r] += acc;
        }
      }
    }
  }
  if (!keep) for (R_xlen_t i = 0; i < n; i++) res[i] /= (double) D.count;
  UNPROTECT(1);
  return out;
}

/*
 * The tied-means mixture's posterior predictive density at each x_i: the
 * density 0.5 N(x_i; theta1, s2) + 0.5 N(x_i; theta1 + theta2, s2) of each
 * draw, averaged over the draws (or the n x draws matrix when keep).
 */
SEXP sgld_predict_mixture(SEXP x, SEXP chains, SEXP pick, SEXP sigma2_x, SEXP keep_flag) {
  if (!isReal(x)) error("`x` must be a double vector");
  const R_xlen_t n = XLENGTH(x);
  if (!isReal(sigma2_x) || XLENGTH(sigma2_x) != 1 || !(REAL(sigma2_x)[0] > 0) ||
      !R_FINITE(REAL(sigma2_x)[0]))
    error("`sigma2_x` must be a positive number");
  if (!isLogical(keep_flag) || XLENGTH(keep_flag) != 1 || LOGICAL(keep_flag)[0] == NA_LOGICAL)
    error("`keep` must be TRUE or FALSE");
  const int keep = LOGICAL(keep_flag)[0];
  pred_draws D;
  read_draws(chains, pick, 2, &D);
  if (keep && (double) n * (double) D.count > R_XLEN_T_MAX)
    error("the rows x draws matrix would be too large; use fewer draws (`ndraws`)");
  SEXP out = PROTECT(keep ? allocMatrix(REALSXP, (int) n, (int) D.count)
                          : allocVector(REALSXP, n));
  double *res = REAL(out);
  if (!keep) for (R_xlen_t i = 0; i < n; i++) res[i] = 0.0;
  const double *xv = REAL(x), s2 = REAL(sigma2_x)[0];
  const double half_c = 0.5 * M_1_SQRT_2PI / sqrt(s2);
  double *Wb = (double *) R_alloc(2 * PRED_DRAW_BLOCK, sizeof(double));
  for (R_xlen_t s0 = 0; s0 < D.count; s0 += PRED_DRAW_BLOCK) {
    const int nb = (int) (D.count - s0 < PRED_DRAW_BLOCK ? D.count - s0 : PRED_DRAW_BLOCK);
    R_CheckUserInterrupt();
    gather(&D, s0, nb, 2, Wb);
    const double *theta1 = Wb, *theta2 = Wb + PRED_DRAW_BLOCK;
    for (R_xlen_t i = 0; i < n; i++) {
      double acc = 0.0;
      for (int b = 0; b < nb; b++) {
        const double d1 = xv[i] - theta1[b], d2 = d1 - theta2[b];
        const double v = half_c * (exp(-0.5 * d1 * d1 / s2) + exp(-0.5 * d2 * d2 / s2));
        if (keep) res[i + (s0 + b) * n] = v;
        else acc += v;
      }
      if (!keep) res[i] += acc;
    }
  }
  if (!keep) for (R_xlen_t i = 0; i < n; i++) res[i] /= (double) D.count;
  UNPROTECT(1);
  return out;
}
