/*
 * Welling and Teh's diagnostics of a stochastic-gradient Langevin chain
 * (REFERENCE.md section 4), evaluated at the current state on request:
 *  - V_s, the covariance of the per-item scores s_i = grad log f(z_i | w)
 *    + grad log f(w) / n over the data (all items, or a random subset of
 *    `sample` items for large data), and its largest eigenvalue;
 *  - the sampling threshold alpha = eta n^2 lambda_max(T^T V_s T) / (2 m), T a
 *    factor of the update's preconditioner (the identity for plain SGLD), which
 *    is the ratio of the stochastic-gradient variance eta^2 (n^2 / m) lambda_max
 *    to the injected variance 2 eta at temperature 1 (Welling and Teh's eq. 10
 *    and its preconditioned form in their section 5.3);
 *  - the Metropolis-Hastings rejection probability of the update's full-data
 *    proposal from the current state (the plain Langevin one for rules with
 *    kept state).
 * They use their own random stream, so asking for them leaves the chain's
 * draws unchanged.
 */
#include <string.h>
#include "sgld.h"

/* largest eigenvalue of a symmetric positive semi-definite d x d matrix */
double lambda_max_psd(const double *A, int d, double *v, double *av) {
  if (d == 1) return A[0];
  for (int j = 0; j < d; j++) v[j] = 1.0 / sqrt((double) d) + 1e-3 * j;
  double lambda = 0.0;
  for (int it = 0; it < 1000; it++) {
    double norm = 0.0;
    for (int i = 0; i < d; i++) {
      double s = 0.0;
      for (int k = 0; k < d; k++) s += A[i + k * d] * v[k];
      av[i] = s;
      norm += s * s;
    }
    norm = sqrt(norm);
    if (norm == 0.0) return 0.0;
    for (int i = 0; i < d; i++) v[i] = av[i] / norm;
    if (fabs(norm - lambda) <= 1e-10 * norm) return norm;
    lambda = norm;
  }
  return lambda;
}

/* The buffer: V, then B = T^T V T (d^2 each) and five vectors of d for
   score_lambda_max(); then the factor T (d^2). The caller may reuse its start
   for the two gradients of the rejection diagnostic once lambda is known. */
static size_t score_buffer_length(int d) {
  return 2 * (size_t) d * d + 5 * (size_t) d;
}

size_t diagnostics_scratch_length(int d) {
  return score_buffer_length(d) + (size_t) d * d;
}

double *diagnostics_factor_slot(double *buf, int d) {
  return buf + score_buffer_length(d);
}

/* lambda_max of the score covariance V, or of T^T V T when a factor T of the
   update's preconditioner is given (NULL: identity); buf as above */
double score_lambda_max(const sgld_model *model, const double *w, const R_xlen_t *items,
                        R_xlen_t count, const double *T, double *buf, double *work) {
  const int d = model->d;
  double *V = buf, *mean = buf + d * d, *s = mean + d, *prior = s + d;
  double *v = prior + d, *av = v + d, *B = av + d;
  for (int j = 0; j < d; j++) prior[j] = mean[j] = 0.0;
  for (int j = 0; j < d * d; j++) V[j] = 0.0;
  model->grad_logprior(model->data, w, prior);
  /* one pass: running mean and co-moment (Welford) */
  for (R_xlen_t k = 0; k < count; k++) {
    for (int j = 0; j < d; j++) s[j] = prior[j] / (double) model->n;
    model->grad_loglik(model->data, w, items + k, 1, s, work);
    const double inv = 1.0 / (double) (k + 1);
    for (int j = 0; j < d; j++) {
      const double delta = s[j] - mean[j];
      mean[j] += delta * inv;
      s[j] = delta;                      /* keep delta for the co-moment */
    }
    for (int a = 0; a < d; a++)
      for (int b = 0; b < d; b++)
        V[a + b * d] += s[a] * s[b] * (1.0 - inv);
  }
  for (int j = 0; j < d * d; j++) V[j] /= (double) count;
  if (!T) return lambda_max_psd(V, d, v, av);
  /* B = T^T V T, column by column: B[, b] = T^T (V T[, b]) */
  for (int b = 0; b < d; b++) {
    const double *tb = T + (size_t) b * d;
    for (int i = 0; i < d; i++) {
      double acc = 0.0;
      for (int k = 0; k < d; k++) acc += V[i + (size_t) k * d] * tb[k];
      av[i] = acc;
    }
    for (int a = 0; a < d; a++) {
      const double *ta = T + (size_t) a * d;
      double acc = 0.0;
      for (int i = 0; i < d; i++) acc += ta[i] * av[i];
      B[a + (size_t) b * d] = acc;
    }
  }
  return lambda_max_psd(B, d, v, av);
}
