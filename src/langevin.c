/*
 * The exact Langevin pieces shared by mala() and the diagnostics of sgld():
 * the full-data log posterior and gradient, a Langevin proposal with an
 * optional fixed preconditioner P = L L', and its Metropolis-Hastings log
 * acceptance ratio for the target exp(U / tau).
 */
#include <string.h>
#include "sgld.h"

/* U(w) = log prior + full-data log likelihood, and its gradient into g */
double full_log_post(const sgld_model *model, const double *w, double *g,
                     const R_xlen_t *all_idx, double *work) {
  for (int j = 0; j < model->d; j++) g[j] = 0.0;
  model->grad_loglik(model->data, w, all_idx, (int) model->n, g, work);
  model->grad_logprior(model->data, w, g);
  return model->loglik(model->data, w, NULL, model->n) + model->logprior(model->data, w);
}

/* out = P g with P = L L' (L lower triangular, column-major); L NULL means P = I */
static void apply_p(const double *L, const double *g, double *out, double *tmp, int d) {
  if (!L) {
    memcpy(out, g, d * sizeof(double));
    return;
  }
  for (int i = 0; i < d; i++) {           /* tmp = L' g */
    double s = 0.0;
    for (int k = i; k < d; k++) s += L[k + i * d] * g[k];
    tmp[i] = s;
  }
  for (int i = 0; i < d; i++) {           /* out = L tmp */
    double s = 0.0;
    for (int k = 0; k <= i; k++) s += L[i + k * d] * tmp[k];
    out[i] = s;
  }
}

/* |L^{-1} r|^2 = r' P^{-1} r by forward substitution (r' r when L is NULL) */
static double p_inv_norm2(const double *L, const double *r, double *tmp, int d) {
  double q = 0.0;
  for (int i = 0; i < d; i++) {
    double s = r[i];
    if (L) {
      for (int k = 0; k < i; k++) s -= L[i + k * d] * tmp[k];
      s /= L[i + i * d];
    }
    tmp[i] = s;
    q += s * s;
  }
  return q;
}

/* w_new = w + eta P g + sqrt(2 eta tau) L xi */
void langevin_propose(const double *w, const double *g, double eta, double tau,
                      const double *L, sgld_rng *rng, double *w_new, double *tmp, int d) {
  double *pg = tmp, *xi = tmp + d, *tmp2 = tmp + 2 * d;
  apply_p(L, g, pg, tmp2, d);
  for (int j = 0; j < d; j++) xi[j] = rng_norm(rng);
  const double sd = sqrt(2.0 * eta * tau);
  for (int i = 0; i < d; i++) {
    double lx = xi[i];
    if (L) {
      lx = 0.0;
      for (int k = 0; k <= i; k++) lx += L[i + k * d] * xi[k];
    }
    w_new[i] = w[i] + eta * pg[i] + sd * lx;
  }
}

/* log of [pi(w') q(w | w')] / [pi(w) q(w' | w)] with pi = exp(U / tau) */
double langevin_log_ratio(const double *w, double U, const double *g,
                          const double *w_new, double U_new, const double *g_new,
                          double eta, double tau, const double *L, double *tmp, int d) {
  double *pg = tmp, *r = tmp + d, *tmp2 = tmp + 2 * d;
  /* forward: w' - w - eta P g(w) */
  apply_p(L, g, pg, tmp2, d);
  for (int j = 0; j < d; j++) r[j] = w_new[j] - w[j] - eta * pg[j];
  const double fwd = p_inv_norm2(L, r, tmp2, d);
  /* backward: w - w' - eta P g(w') */
  apply_p(L, g_new, pg, tmp2, d);
  for (int j = 0; j < d; j++) r[j] = w[j] - w_new[j] - eta * pg[j];
  const double bwd = p_inv_norm2(L, r, tmp2, d);
  return (U_new - U) / tau - (bwd - fwd) / (4.0 * eta * tau);
}
