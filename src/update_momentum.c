/*
 * Gradient ascent with momentum (the "heavy ball"; PyTorch's form):
 *   v <- beta v + g_hat,   w <- w + eta v.
 * Deterministic: used by sgd() only, where the temperature is 0.
 * State: the velocity v, starting at 0.
 */
#include "sgld.h"

typedef struct momentum_opts {
  double momentum;     /* beta, the weight of the old velocity */
} momentum_opts;

static const void *momentum_build(SEXP opts, int d) {
  (void) d;
  momentum_opts *o = (momentum_opts *) R_alloc(1, sizeof *o);
  o->momentum = list_real(opts, "momentum");
  return o;
}

static void momentum_step(double *w, const double *g_hat, const double *g_bar, double eta,
                          double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_bar; (void) tau; (void) rng;
  const momentum_opts *o = opts;
  double *v = state;
  for (int j = 0; j < d; j++) {
    v[j] = o->momentum * v[j] + g_hat[j];
    w[j] += eta * v[j];
  }
}

const sgld_update update_momentum = {
  .name = "momentum", .build = momentum_build, .state_length = update_one_per_parameter,
  .init = update_zero_init, .step = momentum_step
};
