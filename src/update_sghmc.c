/*
 * Stochastic gradient Hamiltonian Monte Carlo (Chen, Fox and Guestrin 2014,
 * eq. 15, with their noise estimate beta_hat = 0), one step per iteration:
 *   v <- (1 - a) v + eta g_hat + sqrt(2 a eta tau) xi,   w <- w + v,
 * with friction a in (0, 1]. The velocity v is the chain's state; it starts
 * at 0. At a = 1 this is SGLD.
 */
#include "sgld.h"

typedef struct sghmc_opts {
  double friction;     /* a */
} sghmc_opts;

static const void *sghmc_build(SEXP opts, int d) {
  (void) d;
  sghmc_opts *o = (sghmc_opts *) R_alloc(1, sizeof *o);
  o->friction = list_real(opts, "friction");
  return o;
}

/* the step, its normals from z when given (step_drawn), else drawn */
static inline void sghmc_move(double *w, const double *g_hat, double eta, double tau, double *v,
                              sgld_rng *rng, const double *z, int d, const sghmc_opts *o) {
  const double a = o->friction;
  const double sd = tau > 0 ? sqrt(2.0 * a * eta * tau) : 0.0;
  for (int j = 0; j < d; j++) {
    v[j] = (1.0 - a) * v[j] + eta * g_hat[j] +
           (tau > 0 ? sd * (z ? z[j] : rng_norm(rng)) : 0.0);
    w[j] += v[j];
  }
}

static void sghmc_step(double *w, const double *g_hat, const double *g_bar, double eta,
                       double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_bar;
  sghmc_move(w, g_hat, eta, tau, state, rng, NULL, d, opts);
}

static void sghmc_step_drawn(double *w, const double *g_hat, const double *g_bar, double eta,
                             double tau, double *state, const double *z, int d,
                             const void *opts) {
  (void) g_bar;
  sghmc_move(w, g_hat, eta, tau, state, NULL, z, d, opts);
}

const sgld_update update_sghmc = {
  .name = "sghmc", .build = sghmc_build, .state_length = update_one_per_parameter,
  .init = update_zero_init, .step = sghmc_step, .step_drawn = sghmc_step_drawn
};
