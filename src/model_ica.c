/*
 * Bayesian ICA (Welling and Teh 2011, section 5.3): sources y = W x with
 * independent heavy-tailed densities p(y) = 1 / (4 cosh^2(y / 2)) and
 * W_ij ~ N(0, prior variance), so
 *   log f(x | W) = log |det W| + sum_i log p((W x)_i).
 * The parameter is W, D x D, stored column-major (w[i + j D] = W_ij). The
 * gradient here is the Euclidean one; the natural gradient (post-multiplied
 * by W^T W) is the business of the update rule (update_natural.c).
 */
#include <R.h>
#include "sgld.h"

typedef struct ica_data {
  int D;
  R_xlen_t n;
  const double *x;     /* D x n: item k is x[k D .. k D + D) */
  double prior_var;
} ica_data;

/* log cosh without overflow */
static inline double log_cosh(double z) {
  const double a = fabs(z);
  return a + log1p(exp(-2.0 * a)) - M_LN2;
}

/* scratch layout in work: inverse (D^2), y (D), LAPACK work (8 D), pivots (D ints);
   the log likelihood uses the same inverse, LAPACK work and pivots */
static size_t ica_work_size(int D) {
  return (size_t) D * D + 9 * (size_t) D + ((size_t) D * sizeof(int)) / sizeof(double) + 1;
}

static void ica_grad_loglik(const void *data, const double *w, const R_xlen_t *idx, int m,
                            double *g, double *work) {
  const ica_data *I = data;
  const int D = I->D;
  double *inv = work, *y = inv + D * D, *lw = y + D;
  int *ipiv = (int *) (lw + 8 * D);
  double log_det;
  if (mat_inverse(w, D, inv, &log_det, lw, 8 * D, ipiv) != 0) {
    for (int k = 0; k < D * D; k++) g[k] = NAN;   /* singular W: the chain must stop */
    return;
  }
  /* m copies of W^{-T}: element (i, j) of W^{-T} is inv[j + i D] */
  for (int j = 0; j < D; j++)
    for (int i = 0; i < D; i++) g[i + j * D] += m * inv[j + i * D];
  for (int k = 0; k < m; k++) {
    const double *x = I->x + (size_t) idx[k] * D;
    for (int i = 0; i < D; i++) {
      double s = 0.0;
      for (int j = 0; j < D; j++) s += w[i + j * D] * x[j];
      y[i] = -tanh(0.5 * s);        /* d log p / dy */
    }
    for (int j = 0; j < D; j++)
      for (int i = 0; i < D; i++) g[i + j * D] += y[i] * x[j];
  }
}

static double ica_loglik(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                         double *work) {
  const ica_data *I = data;
  const int D = I->D;
  /* log|det W| from the LU factors mat_inverse() computes on its way */
  double *inv = work, *lw = inv + D * D + D;
  int *ipiv = (int *) (lw + 8 * D);
  double log_det;
  if (mat_inverse(w, D, inv, &log_det, lw, 8 * D, ipiv) != 0) return -INFINITY;
  double ll = (double) m * log_det;
  for (R_xlen_t k = 0; k < m; k++) {
    const double *x = I->x + (size_t) (idx ? idx[k] : k) * D;
    for (int i = 0; i < D; i++) {
      double s = 0.0;
      for (int j = 0; j < D; j++) s += w[i + j * D] * x[j];
      ll -= 2.0 * log_cosh(0.5 * s) + 2.0 * M_LN2;
    }
  }
  return ll;
}

static void ica_grad_logprior(const void *data, const double *w, double *g) {
  const ica_data *I = data;
  for (int k = 0; k < I->D * I->D; k++) g[k] -= w[k] / I->prior_var;
}

static double ica_logprior(const void *data, const double *w) {
  const ica_data *I = data;
  const int d = I->D * I->D;
  double s = 0.0;
  for (int k = 0; k < d; k++) s += w[k] * w[k];
  return -0.5 * s / I->prior_var - 0.5 * d * log(2.0 * M_PI * I->prior_var);
}

/* mean log likelihood per held-out item, named for R */
const char *const model_ica_metrics[] = {"test_loglik", NULL};

static void ica_metrics(const void *data, const double *w, double *out, double *work) {
  const ica_data *I = data;
  out[0] = ica_loglik(data, w, NULL, I->n, work) / (double) I->n;
}

sgld_model model_ica_build(SEXP spec) {
  ica_data *I = (ica_data *) R_alloc(1, sizeof(ica_data));
  I->D = list_int(spec, "D");
  I->n = (R_xlen_t) list_real(spec, "n");
  if (I->D < 2 || I->n < 1) error("internal: ICA needs D >= 2 and n >= 1");
  I->x = list_doubles(spec, "xt", (R_xlen_t) I->D * I->n);
  I->prior_var = list_real(spec, "prior_variance");
  if (!(I->prior_var > 0)) error("internal: the prior variance must be positive");

  /* fields not named here (optional functions this model lacks) are zero */
  return (sgld_model) {
    .d = I->D * I->D,
    .n = I->n,
    .data = I,
    .grad_loglik = ica_grad_loglik,
    .loglik = ica_loglik,
    .grad_logprior = ica_grad_logprior,
    .logprior = ica_logprior,
    .metrics = ica_metrics,
    .work_size = ica_work_size(I->D)
  };
}
