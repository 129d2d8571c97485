/*
 * Adam (Kingma and Ba 2015), ascending the log posterior:
 *   m <- beta1 m + (1 - beta1) g_hat,   v <- beta2 v + (1 - beta2) g_hat^2,
 *   w <- w + eta m_hat / (sqrt(v_hat) + eps),
 * with the bias corrections m_hat = m / (1 - beta1^t), v_hat = v / (1 - beta2^t).
 * State: m, v, then the two powers beta1^t and beta2^t.
 */
#include "sgld.h"

static void adam_init(double *state, const double *w, int d, const sgld_update_opts *opts) {
  (void) w; (void) opts;
  for (int j = 0; j < 2 * d; j++) state[j] = 0.0;
  state[2 * d] = state[2 * d + 1] = 1.0;
}

static void adam_step(double *w, const double *g_hat, const double *g_bar, double eta,
                      double tau, double *state, sgld_rng *rng, int d,
                      const sgld_update_opts *opts) {
  (void) g_bar; (void) tau; (void) rng;
  double *m = state, *v = state + d, *pow = state + 2 * d;
  const double b1 = opts->beta, b2 = opts->rho;
  pow[0] *= b1;
  pow[1] *= b2;
  const double c1 = 1.0 / (1.0 - pow[0]), c2 = 1.0 / (1.0 - pow[1]);
  for (int j = 0; j < d; j++) {
    m[j] = b1 * m[j] + (1.0 - b1) * g_hat[j];
    v[j] = b2 * v[j] + (1.0 - b2) * g_hat[j] * g_hat[j];
    w[j] += eta * (m[j] * c1) / (sqrt(v[j] * c2) + opts->eps);
  }
}

const sgld_update update_adam = {
  .state_size = 2, .state_extra = 2, .init = adam_init, .step = adam_step
};
