/*
 * Bayesian logistic regression: p(y_i | x_i, beta) = sigma(y_i x_i' beta),
 * y_i in {-1, +1}, with an independent normal or Laplace prior on each
 * coefficient (so the intercept can have its own).
 *
 * The data are one (p + 1) x n matrix whose column i is (x_i, y_i). Every
 * exponential is taken of a non-positive number, so nothing overflows however
 * large |x_i' beta| is.
 */
#include <R.h>
#include <Rmath.h>
#include "sgld.h"

enum { PRIOR_NORMAL = 0, PRIOR_LAPLACE = 1 };

typedef struct logistic_data {
  int p;
  R_xlen_t n;
  const double *z;         /* (p + 1) x n: covariates then y in {-1, +1} */
  const int *prior_type;   /* per coefficient */
  const double *prior_loc, *prior_scale;
} logistic_data;

/* log sigma(u) = -log(1 + e^-u) */
static inline double log_sigmoid(double u) {
  return u > 0 ? -log1p(exp(-u)) : u - log1p(exp(u));
}

/* sigma(-u) = 1 / (1 + e^u) */
static inline double sigmoid_neg(double u) {
  if (u > 0) {
    double e = exp(-u);
    return e / (1.0 + e);
  }
  return 1.0 / (1.0 + exp(u));
}

static inline double linear_predictor(const double *zi, const double *w, int p) {
  double eta = 0.0;
  for (int j = 0; j < p; j++) eta += zi[j] * w[j];
  return eta;
}

static void logistic_grad_loglik(const void *data, const double *w, const R_xlen_t *idx,
                                 int m, double *g, double *work) {
  (void) work;
  const logistic_data *L = data;
  const int p = L->p, stride = p + 1;
  for (int k = 0; k < m; k++) {
    const double *zi = L->z + idx[k] * stride;
    const double y = zi[p];
    const double c = y * sigmoid_neg(y * linear_predictor(zi, w, p));
    for (int j = 0; j < p; j++) g[j] += c * zi[j];
  }
}

static double logistic_loglik(const void *data, const double *w, const R_xlen_t *idx,
                              R_xlen_t m) {
  const logistic_data *L = data;
  const int p = L->p, stride = p + 1;
  if (!idx) m = L->n;
  double ll = 0.0;
  for (R_xlen_t k = 0; k < m; k++) {
    const double *zi = L->z + (idx ? idx[k] : k) * stride;
    ll += log_sigmoid(zi[p] * linear_predictor(zi, w, p));
  }
  return ll;
}

static double logistic_logprior(const void *data, const double *w) {
  const logistic_data *L = data;
  double lp = 0.0;
  for (int j = 0; j < L->p; j++) {
    const double s = L->prior_scale[j], u = (w[j] - L->prior_loc[j]) / s;
    if (L->prior_type[j] == PRIOR_LAPLACE) lp += -fabs(u) - log(2.0 * s);
    else lp += -0.5 * u * u - log(s) - M_LN_SQRT_2PI;
  }
  return lp;
}

/* the Laplace prior's gradient is taken as 0 at its kink */
static void logistic_grad_logprior(const void *data, const double *w, double *g) {
  const logistic_data *L = data;
  for (int j = 0; j < L->p; j++) {
    const double s = L->prior_scale[j], u = w[j] - L->prior_loc[j];
    if (L->prior_type[j] == PRIOR_LAPLACE) g[j] -= (double) ((u > 0) - (u < 0)) / s;
    else g[j] -= u / (s * s);
  }
}

sgld_model model_logistic_build(SEXP spec) {
  logistic_data *L = (logistic_data *) R_alloc(1, sizeof(logistic_data));
  L->p = list_int(spec, "p");
  L->n = (R_xlen_t) list_real(spec, "n");
  if (L->p < 1 || L->n < 1) error("internal: logistic model needs p >= 1 and n >= 1");
  L->z = list_doubles(spec, "z", (R_xlen_t) (L->p + 1) * L->n);
  SEXP type = list_elt(spec, "prior_type");
  if (TYPEOF(type) != INTSXP || XLENGTH(type) != L->p)
    error("internal: 'prior_type' must be an integer vector of length p");
  L->prior_type = INTEGER(type);
  L->prior_loc = list_doubles(spec, "prior_loc", L->p);
  L->prior_scale = list_doubles(spec, "prior_scale", L->p);

  sgld_model m;
  m.d = L->p;
  m.n = L->n;
  m.data = L;
  m.grad_loglik = logistic_grad_loglik;
  m.loglik = logistic_loglik;
  m.grad_logprior = logistic_grad_logprior;
  m.logprior = logistic_logprior;
  m.in_domain = NULL;
  m.work_size = 0;
  return m;
}
