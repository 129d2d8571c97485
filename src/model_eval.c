/*
 * Evaluate a model's log densities and gradients at one point, over the full
 * data. Used for checks (gradients against finite differences), for exact
 * reference computations and by users who want the log posterior itself.
 */
#include <R.h>
#include "sgld.h"

SEXP sgld_model_eval(SEXP model_spec, SEXP w_) {
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  if (TYPEOF(w_) != REALSXP || XLENGTH(w_) != d)
    error("internal: 'w' must be a double vector of length %d", d);
  const double *w = REAL(w_);
  double *work = (double *) R_alloc(model.work_size + 1, sizeof(double));

  const char *names[] = {"loglik", "logprior", "grad_loglik", "grad_logprior", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(out, 0, ScalarReal(model.loglik(model.data, w, NULL, model.n, work)));
  SET_VECTOR_ELT(out, 1, ScalarReal(model.logprior(model.data, w)));
  SEXP gl = allocVector(REALSXP, d);
  SET_VECTOR_ELT(out, 2, gl);
  SEXP gp = allocVector(REALSXP, d);
  SET_VECTOR_ELT(out, 3, gp);
  for (int j = 0; j < d; j++) REAL(gl)[j] = REAL(gp)[j] = 0.0;
  full_grad_loglik(&model, w, REAL(gl), work);
  model.grad_logprior(model.data, w, REAL(gp));
  UNPROTECT(1);
  return out;
}

/* A model's one-pass log likelihood and gradient over the full data
   (loglik_grad, for mala()), or NULL where it has none: the tests check it
   against the two functions above. */
SEXP sgld_model_fused(SEXP model_spec, SEXP w_) {
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  if (TYPEOF(w_) != REALSXP || XLENGTH(w_) != d)
    error("internal: 'w' must be a double vector of length %d", d);
  if (!model.loglik_grad) return R_NilValue;
  double *work = (double *) R_alloc(model.work_size + 1, sizeof(double));
  const char *names[] = {"loglik", "grad_loglik", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SEXP g = allocVector(REALSXP, d);
  SET_VECTOR_ELT(out, 1, g);
  for (int j = 0; j < d; j++) REAL(g)[j] = 0.0;
  SET_VECTOR_ELT(out, 0, ScalarReal(model.loglik_grad(model.data, REAL(w_), NULL, model.n,
                                                      REAL(g), work)));
  UNPROTECT(1);
  return out;
}

/* The log likelihood summed over the items `items` (1-based, in R's
   numbering) at each column of W (d x K, the sampler's scale): one number
   per draw, a quantity that means the same in every chain whatever the
   parameterisation (R/warnings.R judges R-hat and the ESS on it for models
   whose parameters are not identified). */
SEXP sgld_loglik_draws(SEXP model_spec, SEXP W_, SEXP items) {
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  if (TYPEOF(W_) != REALSXP || !isMatrix(W_) || nrows(W_) != d)
    error("internal: 'W' must be a double matrix with %d rows", d);
  if (TYPEOF(items) != REALSXP || XLENGTH(items) < 1)
    error("internal: 'items' must be a non-empty double vector");
  const R_xlen_t m = XLENGTH(items);
  R_xlen_t *idx = (R_xlen_t *) R_alloc(m, sizeof(R_xlen_t));
  for (R_xlen_t k = 0; k < m; k++) {
    const double i = REAL(items)[k];
    if (!(i >= 1 && i <= (double) model.n) || i != floor(i))
      error("internal: 'items' must hold whole numbers from 1 to n");
    idx[k] = (R_xlen_t) i - 1;
  }
  double *work = (double *) R_alloc(model.work_size + 1, sizeof(double));
  const int K = ncols(W_);
  SEXP out = PROTECT(allocVector(REALSXP, K));
  for (int k = 0; k < K; k++) {
    if (k % 64 == 63) R_CheckUserInterrupt();   /* R_alloc'd scratch is freed on a jump */
    REAL(out)[k] = model.loglik(model.data, REAL(W_) + (R_xlen_t) k * d, idx, m, work);
  }
  UNPROTECT(1);
  return out;
}
