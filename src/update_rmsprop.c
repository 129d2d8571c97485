/*
 * RMSprop (Tieleman and Hinton 2012): the step of each coordinate is scaled
 * by a running root mean square of its gradients,
 *   v <- rho v + (1 - rho) g_hat^2,   w <- w + eta g_hat / (sqrt(v) + eps).
 */
#include "sgld.h"

static void rmsprop_init(double *state, const double *w, int d, const sgld_update_opts *opts) {
  (void) w;
  for (int j = 0; j < d; j++) state[j] = opts->v_init;
}

static void rmsprop_step(double *w, const double *g_hat, const double *g_bar, double eta,
                         double tau, double *state, sgld_rng *rng, int d,
                         const sgld_update_opts *opts) {
  (void) g_bar; (void) tau; (void) rng;
  double *v = state;
  const double rho = opts->rho;
  for (int j = 0; j < d; j++) {
    v[j] = rho * v[j] + (1.0 - rho) * g_hat[j] * g_hat[j];
    w[j] += eta * g_hat[j] / (sqrt(v[j]) + opts->eps);
  }
}

const sgld_update update_rmsprop = {
  .state_size = 1, .init = rmsprop_init, .step = rmsprop_step
};
