/*
 * Bayesian Poisson regression as a compiled model for sgld:
 *
 *   y_i | beta ~ Poisson(exp(x_i' beta)),   beta ~ N(0, s^2 I).
 *
 * The functions below are what sgld's samplers call in their inner loop,
 * possibly from several threads at once, so they only read the data and
 * never touch the R API. Everything that needs R happens once, in
 * poisson_pointer(), when the model is built.
 */
#include <math.h>
#include <R.h>
#include <Rinternals.h>
#include <sgld_model.h>

typedef struct poisson_data {
  int p;                     /* coefficients */
  R_xlen_t n;                /* observations */
  const double *xt;          /* p x n, x_i in column i: a minibatch reads whole columns */
  const double *y;           /* counts */
  const double *log_y_fact;  /* log(y_i!), from R: lgamma() here would be the R API */
  double prior_prec;         /* 1 / s^2 */
  double prior_const;        /* -p (log s + log(2 pi) / 2) */
} poisson_data;

static double linear_predictor(const poisson_data *P, R_xlen_t i, const double *beta) {
  const double *x = P->xt + i * P->p;
  double eta = 0.0;
  for (int j = 0; j < P->p; j++) eta += x[j] * beta[j];
  return eta;
}

/* d/d beta of y_i eta_i - exp(eta_i) is (y_i - exp(eta_i)) x_i */
static void poisson_grad_loglik(const void *data, const double *beta, const R_xlen_t *idx,
                                int m, double *g, double *work) {
  const poisson_data *P = data;
  (void) work;
  for (int k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    const double r = P->y[i] - exp(linear_predictor(P, i, beta));
    const double *x = P->xt + i * P->p;
    for (int j = 0; j < P->p; j++) g[j] += r * x[j];
  }
}

static double poisson_loglik(const void *data, const double *beta, const R_xlen_t *idx,
                             R_xlen_t m, double *work) {
  const poisson_data *P = data;
  (void) work;
  if (!idx) m = P->n;
  double ll = 0.0;
  for (R_xlen_t k = 0; k < m; k++) {
    const R_xlen_t i = idx ? idx[k] : k;
    const double eta = linear_predictor(P, i, beta);
    ll += P->y[i] * eta - exp(eta) - P->log_y_fact[i];
  }
  return ll;
}

static void poisson_grad_logprior(const void *data, const double *beta, double *g) {
  const poisson_data *P = data;
  for (int j = 0; j < P->p; j++) g[j] -= P->prior_prec * beta[j];
}

static double poisson_logprior(const void *data, const double *beta) {
  const poisson_data *P = data;
  double ss = 0.0;
  for (int j = 0; j < P->p; j++) ss += beta[j] * beta[j];
  return P->prior_const - 0.5 * P->prior_prec * ss;
}

static void free_poisson_data(SEXP owner) {
  poisson_data *P = R_ExternalPtrAddr(owner);
  if (P) {
    R_Free(P);
    R_ClearExternalPtr(owner);
  }
}

/* .Call entry: xt (p x n double matrix), y and log(y!) (double, length n),
   prior_sd (positive double); the R function has checked them. */
SEXP poisson_pointer(SEXP xt, SEXP y, SEXP log_y_fact, SEXP prior_sd) {
  if (!isReal(xt) || !isMatrix(xt) || !isReal(y) || !isReal(log_y_fact) || !isReal(prior_sd) ||
      XLENGTH(prior_sd) != 1)
    error("poisson_pointer: arguments of the wrong type");
  const int p = nrows(xt);
  const R_xlen_t n = XLENGTH(y);
  if (p < 1 || n < 1 || XLENGTH(xt) != (R_xlen_t) p * n || XLENGTH(log_y_fact) != n)
    error("poisson_pointer: arguments of inconsistent sizes");
  const double s = REAL(prior_sd)[0];
  if (!(s > 0) || !R_FINITE(s)) error("poisson_pointer: prior_sd must be positive and finite");

  /* The model's data live as long as `owner`: its finalizer frees the struct,
     and its protected list keeps the R vectors the struct points into.
     sgld keeps `owner` alive for as long as the model exists. */
  SEXP keep = PROTECT(allocVector(VECSXP, 3));
  SET_VECTOR_ELT(keep, 0, xt);
  SET_VECTOR_ELT(keep, 1, y);
  SET_VECTOR_ELT(keep, 2, log_y_fact);
  SEXP owner = PROTECT(R_MakeExternalPtr(NULL, R_NilValue, keep));
  R_RegisterCFinalizerEx(owner, free_poisson_data, TRUE);
  poisson_data *P = R_Calloc(1, poisson_data);
  R_SetExternalPtrAddr(owner, P);
  P->p = p;
  P->n = n;
  P->xt = REAL(xt);
  P->y = REAL(y);
  P->log_y_fact = REAL(log_y_fact);
  P->prior_prec = 1.0 / (s * s);
  P->prior_const = -p * (log(s) + 0.5 * log(2.0 * M_PI));

  sgld_model_table table = {
    .d = p, .n = n, .data = P,
    .grad_loglik = poisson_grad_loglik,
    .loglik = poisson_loglik,
    .grad_logprior = poisson_grad_logprior,
    .logprior = poisson_logprior,
    .in_domain = NULL,
    .work_size = 0
  };
  SEXP model = sgld_model_pointer(&table, owner);
  UNPROTECT(2);
  return model;
}
