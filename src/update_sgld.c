/*
 * The Langevin update w <- w + eta g_hat + sqrt(2 eta tau) xi.
 * At temperature 0 no noise is drawn, which makes it plain (stochastic)
 * gradient ascent on the log posterior: SGD and GD are this rule at tau = 0.
 */
#include "sgld.h"

void update_no_init(double *state, const double *w, int d, const sgld_update_opts *opts) {
  (void) state; (void) w; (void) d; (void) opts;
}

static void sgld_step(double *w, const double *g_hat, const double *g_bar, double eta,
                      double tau, double *state, sgld_rng *rng, int d,
                      const sgld_update_opts *opts) {
  (void) g_bar; (void) state; (void) opts;
  if (tau > 0) {
    const double sd = sqrt(2.0 * eta * tau);
    for (int j = 0; j < d; j++) w[j] += eta * g_hat[j] + sd * rng_norm(rng);
  } else {
    for (int j = 0; j < d; j++) w[j] += eta * g_hat[j];
  }
}

const sgld_update update_sgld = {0, 0, 0, 0, update_no_init, sgld_step};
