/*
 * AdaGrad (Duchi, Hazan and Singer 2011): every coordinate's step shrinks with
 * the sum of its squared gradients so far,
 *   s <- s + g_hat^2,   w <- w + eta g_hat / (sqrt(s) + eps).
 */
#include "sgld.h"

static void adagrad_init(double *state, const double *w, int d, const sgld_update_opts *opts) {
  (void) w;
  for (int j = 0; j < d; j++) state[j] = opts->v_init;
}

static void adagrad_step(double *w, const double *g_hat, const double *g_bar, double eta,
                         double tau, double *state, sgld_rng *rng, int d,
                         const sgld_update_opts *opts) {
  (void) g_bar; (void) tau; (void) rng;
  double *s = state;
  for (int j = 0; j < d; j++) {
    s[j] += g_hat[j] * g_hat[j];
    w[j] += eta * g_hat[j] / (sqrt(s[j]) + opts->eps);
  }
}

const sgld_update update_adagrad = {
  .state_size = 1, .init = adagrad_init, .step = adagrad_step
};
