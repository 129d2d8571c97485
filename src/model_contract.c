/*
 * What R asks of any model with a C table (model_table.c), whichever it is:
 * which of the table's optional functions it has (R/model.R:
 * model_capabilities()), and every row's log likelihood at many draws
 * (R/model.R: model_loglik_rows(), behind log_lik() and loo()).
 */
#include <R.h>
#include "sgld.h"
#ifdef _OPENMP
#include <omp.h>
#endif

SEXP sgld_model_info(SEXP model_spec) {
  const sgld_model model = find_model(model_spec);
  const char *names[] = {"loglik_rows", "grad_loglik_local", "expected_loglik",
                         "local_params", "main_thread_only", "path_gaussian",
                         "logpost_coordinate", ""};
  const int has[] = {model.loglik_rows != NULL, model.grad_loglik_local != NULL,
                     model.expected_loglik != NULL && model.expected_logprior != NULL,
                     model.local_params != 0, model.main_thread_only != 0,
                     model.path_gaussian != NULL, model.logpost_coordinate != NULL};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  for (int k = 0; names[k][0]; k++) SET_VECTOR_ELT(out, k, ScalarLogical(has[k]));
  UNPROTECT(1);
  return out;
}

/* The result is draws x rows, column-major: a row's entries for consecutive
   draws are adjacent, while one draw's entries for consecutive rows lie S
   doubles apart (at S = 4000, 32 KB: the same cache set, and a page each).
   So each task computes a tile of LL_DRAW_BLOCK draws x LL_ROW_BLOCK rows,
   draw by draw, then writes it row by row, in runs of LL_DRAW_BLOCK
   adjacent doubles. */
#define LL_ROW_BLOCK 64
#define LL_DRAW_BLOCK 32
/* rows between checks for an interrupt (outside the parallel region) */
#define LL_CHUNK (LL_ROW_BLOCK * 256)

/* the log likelihood of rows [from, to) at w, by the table's loglik_rows or
   else one row at a time */
static void rows_at(const sgld_model *model, const double *w, R_xlen_t from, R_xlen_t to,
                    double *out, double *work) {
  if (model->loglik_rows) {
    model->loglik_rows(model->data, w, from, to, out);
    return;
  }
  for (R_xlen_t i = from; i < to; i++) out[i - from] = model->loglik(model->data, w, &i, 1, work);
}

/* The S x n matrix of log f(z_i | w_s), for the d x S matrix of draws (one
   per column). The rows are shared by `threads` OpenMP threads when the
   model's table has loglik_rows (which touches no R); each entry is computed
   the same way whatever the number of threads. */
SEXP sgld_pointwise_loglik(SEXP model_spec, SEXP draws, SEXP threads) {
  const sgld_model model = find_model(model_spec);
  const int d = model.d;
  if (TYPEOF(draws) != REALSXP || !isMatrix(draws) || nrows(draws) != d)
    error("internal: 'draws' must be a double matrix with %d rows", d);
  if (!isInteger(threads) || XLENGTH(threads) != 1 || INTEGER(threads)[0] < 1)
    error("internal: 'threads' must be a positive integer");
  const R_xlen_t S = ncols(draws), n = model.n;
  const double *W = REAL(draws);
  int nth = model.loglik_rows && !model.main_thread_only ? INTEGER(threads)[0] : 1;
#ifndef _OPENMP
  nth = 1;
#endif
  /* scratch per thread, before any thread starts: a block of rows, and the
     work buffer of the one-row fallback */
  const size_t per = (size_t) LL_ROW_BLOCK * LL_DRAW_BLOCK + model.work_size + 1;
  double *scratch = (double *) R_alloc((size_t) nth * per, sizeof(double));
  SEXP out = PROTECT(allocMatrix(REALSXP, (int) S, (int) n));
  double *o = REAL(out);
  for (R_xlen_t c0 = 0; c0 < n; c0 += LL_CHUNK) {
    const R_xlen_t c1 = c0 + LL_CHUNK < n ? c0 + LL_CHUNK : n;
    const R_xlen_t blocks = (c1 - c0 + LL_ROW_BLOCK - 1) / LL_ROW_BLOCK;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) if (nth > 1)
#endif
    for (R_xlen_t b = 0; b < blocks; b++) {
      int t = 0;
#ifdef _OPENMP
      t = omp_get_thread_num();
#endif
      double *tile = scratch + (size_t) t * per;
      double *work = tile + (size_t) LL_ROW_BLOCK * LL_DRAW_BLOCK;
      const R_xlen_t from = c0 + b * LL_ROW_BLOCK;
      const R_xlen_t to = from + LL_ROW_BLOCK < c1 ? from + LL_ROW_BLOCK : c1;
      for (R_xlen_t s0 = 0; s0 < S; s0 += LL_DRAW_BLOCK) {
        const R_xlen_t s1 = s0 + LL_DRAW_BLOCK < S ? s0 + LL_DRAW_BLOCK : S;
        for (R_xlen_t s = s0; s < s1; s++)
          rows_at(&model, W + s * d, from, to, tile + (s - s0) * LL_ROW_BLOCK, work);
        for (R_xlen_t i = from; i < to; i++) {
          double *oi = o + i * S;
          for (R_xlen_t s = s0; s < s1; s++) oi[s] = tile[(s - s0) * LL_ROW_BLOCK + (i - from)];
        }
      }
    }
    if (model.failed && model.failed(model.data) != MODEL_OK) break;
    R_CheckUserInterrupt();
  }
  UNPROTECT(1);
  return out;
}
