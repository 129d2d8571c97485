/*
 * Gradient ascent with momentum (the "heavy ball"; PyTorch's form):
 *   v <- beta v + g_hat,   w <- w + eta v.
 * Deterministic: used by sgd() only, where the temperature is 0.
 */
#include "sgld.h"

static void momentum_init(double *state, const double *w, int d, const sgld_update_opts *opts) {
  (void) w; (void) opts;
  for (int j = 0; j < d; j++) state[j] = 0.0;
}

static void momentum_step(double *w, const double *g_hat, const double *g_bar, double eta,
                          double tau, double *state, sgld_rng *rng, int d,
                          const sgld_update_opts *opts) {
  (void) g_bar; (void) tau; (void) rng;
  double *v = state;
  for (int j = 0; j < d; j++) {
    v[j] = opts->beta * v[j] + g_hat[j];
    w[j] += eta * v[j];
  }
}

const sgld_update update_momentum = {
  .state_size = 1, .init = momentum_init, .step = momentum_step
};
