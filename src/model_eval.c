/*
 * Evaluate a model's log densities and gradients at one point, over the full
 * data. Used for checks (gradients against finite differences), for exact
 * reference computations and by users who want the log posterior itself.
 * Also the log joint alone at many points (a variational fit's importance
 * ratios and ELBO, R/vi.R).
 */
#include <R.h>
#include <string.h>
#include <limits.h>
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

/* log p(D, w) = full-data log likelihood + log prior at each column of the
   d x S matrix `draws`; a model that fails stops the loop (R reports why) */
SEXP sgld_log_joint_draws(SEXP model_spec, SEXP draws) {
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  if (TYPEOF(draws) != REALSXP || !isMatrix(draws) || nrows(draws) != d)
    error("internal: 'draws' must be a double matrix with %d rows", d);
  const int S = ncols(draws);
  double *work = (double *) R_alloc(model.work_size + 1, sizeof(double));
  SEXP out = PROTECT(allocVector(REALSXP, S));
  double *o = REAL(out);
  for (int s = 0; s < S; s++) o[s] = NA_REAL;
  for (int s = 0; s < S; s++) {
    const double *w = REAL(draws) + (R_xlen_t) s * d;
    o[s] = model.loglik(model.data, w, NULL, model.n, work) + model.logprior(model.data, w);
    if (model.failed && model.failed(model.data) != MODEL_OK) break;
    if ((s & 63) == 63) R_CheckUserInterrupt();
  }
  UNPROTECT(1);
  return out;
}

/* Under a mean-field q = N(mu, diag(sd^2)): the expected full-data log
   likelihood and log prior, and their gradients in mu and sd (sgld.h:
   expected_loglik), for the models that have them */
SEXP sgld_model_expected(SEXP model_spec, SEXP mu_, SEXP sd_) {
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  if (!model.expected_loglik) error("internal: this model has no expected log likelihood");
  if (TYPEOF(mu_) != REALSXP || XLENGTH(mu_) != d || TYPEOF(sd_) != REALSXP || XLENGTH(sd_) != d)
    error("internal: 'mu' and 'sd' must be double vectors of length %d", d);
  if (model.n > INT_MAX) error("internal: the expectations need n <= %d", INT_MAX);
  double *work = (double *) R_alloc(model.work_size + 1, sizeof(double));
  R_xlen_t *all = (R_xlen_t *) R_alloc(model.n, sizeof(R_xlen_t));
  for (R_xlen_t i = 0; i < model.n; i++) all[i] = i;
  const char *names[] = {"loglik", "logprior", "grad_mu_loglik", "grad_sd_loglik",
                         "grad_mu_logprior", "grad_sd_logprior", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  for (int k = 2; k < 6; k++) {
    SEXP g = allocVector(REALSXP, d);
    SET_VECTOR_ELT(out, k, g);
    for (int j = 0; j < d; j++) REAL(g)[j] = 0.0;
  }
  const double ll = model.expected_loglik(model.data, REAL(mu_), REAL(sd_), all, (int) model.n,
                                          REAL(VECTOR_ELT(out, 2)), REAL(VECTOR_ELT(out, 3)), work);
  const double lp = model.expected_logprior(model.data, REAL(mu_), REAL(sd_),
                                            REAL(VECTOR_ELT(out, 4)), REAL(VECTOR_ELT(out, 5)));
  SET_VECTOR_ELT(out, 0, ScalarReal(ll));
  SET_VECTOR_ELT(out, 1, ScalarReal(lp));
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

/* The model's exact moves (sgld.h: exact_moves) made `times` times from w,
   on a stream seeded from R's, carrying the log posterior and its gradient
   as a chain does: w after each move (a d x times matrix), and the carried
   log posterior and gradient at the end, which the tests compare with a
   fresh evaluation. */
SEXP sgld_model_moves(SEXP model_spec, SEXP w_, SEXP times_) {
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  if (!model.exact_moves) error("internal: the model has no exact moves");
  if (TYPEOF(w_) != REALSXP || XLENGTH(w_) != d)
    error("internal: 'w' must be a double vector of length %d", d);
  const int times = asInteger(times_);
  if (times == NA_INTEGER || times < 0 || (double) times * d > 1e8)
    error("internal: 'times' must be a count with times * d at most 1e8");
  if (model.n > INT_MAX) error("internal: full-data evaluations need n <= %d", INT_MAX);
  R_xlen_t *all = (R_xlen_t *) R_alloc(model.n, sizeof(R_xlen_t));
  for (R_xlen_t i = 0; i < model.n; i++) all[i] = i;
  double *work = (double *) R_alloc(model.work_size + 1, sizeof(double));
  double *w = (double *) R_alloc(d, sizeof(double)), *g = (double *) R_alloc(d, sizeof(double));
  memcpy(w, REAL(w_), (size_t) d * sizeof(double));
  double log_post = full_log_post(&model, w, g, all, work);
  sgld_rng rng;
  rng_seed_from_r(&rng);
  const char *names[] = {"draws", "log_post", "grad", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SEXP draws = allocMatrix(REALSXP, d, times);
  SET_VECTOR_ELT(out, 0, draws);
  for (int t = 0; t < times; t++) {
    model.exact_moves(model.data, w, &log_post, g, &rng, work);
    memcpy(REAL(draws) + (R_xlen_t) t * d, w, (size_t) d * sizeof(double));
    if ((t & 1023) == 1023) R_CheckUserInterrupt();
  }
  SET_VECTOR_ELT(out, 1, ScalarReal(log_post));
  SEXP gr = allocVector(REALSXP, d);
  SET_VECTOR_ELT(out, 2, gr);
  memcpy(REAL(gr), g, (size_t) d * sizeof(double));
  UNPROTECT(1);
  return out;
}
