/*
 * RMSprop (Tieleman and Hinton 2012): the step of each coordinate is scaled
 * by a running root mean square of its gradients,
 *   v <- rho v + (1 - rho) g_hat^2,   w <- w + eta g_hat / (sqrt(v) + eps).
 * State: v, starting at 0.
 */
#include "sgld.h"

typedef struct rmsprop_opts {
  double rho;          /* weight of the old average of squared gradients */
  double eps;          /* added to the root mean square */
} rmsprop_opts;

static const void *rmsprop_build(SEXP opts, int d) {
  (void) d;
  rmsprop_opts *o = (rmsprop_opts *) R_alloc(1, sizeof *o);
  o->rho = list_real(opts, "rho");
  o->eps = list_real(opts, "eps");
  return o;
}

static void rmsprop_step(double *w, const double *g_hat, const double *g_bar, double eta,
                         double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_bar; (void) tau; (void) rng;
  const rmsprop_opts *o = opts;
  double *v = state;
  const double rho = o->rho;
  for (int j = 0; j < d; j++) {
    v[j] = rho * v[j] + (1.0 - rho) * g_hat[j] * g_hat[j];
    w[j] += eta * g_hat[j] / (sqrt(v[j]) + o->eps);
  }
}

const sgld_update update_rmsprop = {
  .name = "rmsprop", .build = rmsprop_build, .state_length = update_one_per_parameter,
  .init = update_zero_init, .step = rmsprop_step
};
