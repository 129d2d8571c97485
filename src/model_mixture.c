/*
 * Welling and Teh's mixture with tied means: theta1 ~ N(0, s1), theta2 ~ N(0, s2),
 * x_i ~ 1/2 N(theta1, sx) + 1/2 N(theta1 + theta2, sx), with s1, s2, sx variances.
 * The two components are combined by log-sum-exp, so data far from both means
 * give finite values and gradients.
 */
#include <R.h>
#include <Rmath.h>
#include "sgld.h"

typedef struct mixture_data {
  R_xlen_t n;
  const double *x;
  double s1, s2, sx;
} mixture_data;

/* log density of one item and, if r2 is given, the responsibility of the
   second component */
static inline double mixture_item(const mixture_data *M, double x, const double *w, double *r2) {
  const double a = x - w[0], b = x - w[0] - w[1];
  const double la = -0.5 * a * a / M->sx, lb = -0.5 * b * b / M->sx;
  const double hi = la > lb ? la : lb;
  const double lse = hi + log(exp(la - hi) + exp(lb - hi));
  if (r2) *r2 = exp(lb - lse);
  return lse - M_LN2 - 0.5 * log(2.0 * M_PI * M->sx);
}

static void mixture_grad_loglik(const void *data, const double *w, const R_xlen_t *idx,
                                int m, double *g, double *work) {
  (void) work;
  const mixture_data *M = data;
  double g0 = 0.0, g1 = 0.0;
  for (int k = 0; k < m; k++) {
    const double x = M->x[idx[k]];
    double r2;
    mixture_item(M, x, w, &r2);
    const double da = (x - w[0]) / M->sx, db = (x - w[0] - w[1]) / M->sx;
    g0 += (1.0 - r2) * da + r2 * db;
    g1 += r2 * db;
  }
  g[0] += g0;
  g[1] += g1;
}

static double mixture_loglik(const void *data, const double *w, const R_xlen_t *idx,
                             R_xlen_t m, double *work) {
  (void) work;
  const mixture_data *M = data;
  if (!idx) m = M->n;
  double ll = 0.0;
  for (R_xlen_t k = 0; k < m; k++) ll += mixture_item(M, M->x[idx ? idx[k] : k], w, NULL);
  return ll;
}

static double mixture_logprior(const void *data, const double *w) {
  const mixture_data *M = data;
  return -0.5 * (w[0] * w[0] / M->s1 + w[1] * w[1] / M->s2) - M_LN_2PI
         - 0.5 * (log(M->s1) + log(M->s2));
}

static void mixture_grad_logprior(const void *data, const double *w, double *g) {
  const mixture_data *M = data;
  g[0] -= w[0] / M->s1;
  g[1] -= w[1] / M->s2;
}

/* mean log likelihood per held-out item, named for R */
const char *const model_mixture_metrics[] = {"test_loglik", NULL};

static void mixture_metrics(const void *data, const double *w, double *out, double *work) {
  const mixture_data *M = data;
  out[0] = mixture_loglik(data, w, NULL, M->n, work) / (double) M->n;
}

sgld_model model_mixture_build(SEXP spec) {
  mixture_data *M = (mixture_data *) R_alloc(1, sizeof(mixture_data));
  M->n = (R_xlen_t) list_real(spec, "n");
  if (M->n < 1) error("internal: mixture model needs n >= 1");
  M->x = list_doubles(spec, "z", M->n);
  M->s1 = list_real(spec, "sigma2_1");
  M->s2 = list_real(spec, "sigma2_2");
  M->sx = list_real(spec, "sigma2_x");
  if (!(M->s1 > 0 && M->s2 > 0 && M->sx > 0)) error("internal: mixture variances must be positive");

  /* fields not named here (optional functions this model lacks) are zero */
  return (sgld_model) {
    .d = 2,
    .n = M->n,
    .data = M,
    .grad_loglik = mixture_grad_loglik,
    .loglik = mixture_loglik,
    .grad_logprior = mixture_grad_logprior,
    .logprior = mixture_logprior,
    .metrics = mixture_metrics
  };
}
