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
