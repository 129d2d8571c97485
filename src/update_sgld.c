/*
 * The Langevin update w <- w + eta g_hat + sqrt(2 eta tau) xi.
 * At temperature 0 no noise is drawn, which makes it plain (stochastic)
 * gradient ascent on the log posterior: SGD and GD are this rule at tau = 0.
 * It has no settings and no state. This file also holds the small pieces
 * other rules share.
 */
#include "sgld.h"

void update_no_init(double *state, const double *w, int d, const void *opts) {
  (void) state; (void) w; (void) d; (void) opts;
}

void update_zero_init(double *state, const double *w, int d, const void *opts) {
  (void) w; (void) opts;
  for (int j = 0; j < d; j++) state[j] = 0.0;
}

size_t update_one_per_parameter(int d) {
  return (size_t) d;
}

static void sgld_step(double *w, const double *g_hat, const double *g_bar, double eta,
                      double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_bar; (void) state; (void) opts;
  if (tau > 0) {
    const double sd = sqrt(2.0 * eta * tau);
    for (int j = 0; j < d; j++) w[j] += eta * g_hat[j] + sd * rng_norm(rng);
  } else {
    for (int j = 0; j < d; j++) w[j] += eta * g_hat[j];
  }
}

/* the same step with its normals given (sgld.h: step_drawn); the same
   expression, so the same bits */
static void sgld_step_drawn(double *w, const double *g_hat, const double *g_bar, double eta,
                            double tau, double *state, const double *z, int d,
                            const void *opts) {
  (void) g_bar; (void) state; (void) opts;
  const double sd = sqrt(2.0 * eta * tau);
  for (int j = 0; j < d; j++) w[j] += eta * g_hat[j] + sd * z[j];
}

/* the step is N(from + eta g, 2 eta tau I) */
static double sgld_log_q(const double *to, const double *from, const double *g_from,
                         double eta, double tau, double *scratch, int d, const void *opts) {
  (void) scratch; (void) opts;
  double q = 0.0;
  for (int j = 0; j < d; j++) {
    const double r = to[j] - from[j] - eta * g_from[j];
    q += r * r;
  }
  return -q / (4.0 * eta * tau);
}

const sgld_update update_sgld = {
  .name = "sgld", .init = update_no_init, .step = sgld_step, .log_q = sgld_log_q,
  .step_drawn = sgld_step_drawn
};
