/*
 * Preconditioned SGLD with an RMSprop preconditioner (Li et al. 2016):
 *   v <- rho v + (1 - rho) g_bar^2,   G = 1 / (eps + sqrt(v)),
 *   w <- w + eta G g_hat + sqrt(2 eta tau G) xi      (element-wise).
 * v averages the squared mean per-item likelihood gradient, so its scale does
 * not depend on n. The term Gamma = sum_j dG_ij / dw_j of the exact dynamics
 * is left out, as Li et al. recommend: it is small when rho is close to 1.
 */
#include "sgld.h"

static void psgld_init(double *state, const double *w, int d, const sgld_update_opts *opts) {
  (void) w;
  for (int j = 0; j < d; j++) state[j] = opts->v_init;
}

static void psgld_step(double *w, const double *g_hat, const double *g_bar, double eta,
                       double tau, double *state, sgld_rng *rng, int d,
                       const sgld_update_opts *opts) {
  double *v = state;
  const double rho = opts->rho;
  for (int j = 0; j < d; j++) {
    v[j] = rho * v[j] + (1.0 - rho) * g_bar[j] * g_bar[j];
    const double G = 1.0 / (opts->eps + sqrt(v[j]));
    w[j] += eta * G * g_hat[j];
    if (tau > 0) w[j] += sqrt(2.0 * eta * tau * G) * rng_norm(rng);
  }
}

/* P = diag(G): its factor is diag(sqrt(G)) */
static void psgld_factor(const double *w, const double *state, double *T, double *scratch,
                         int d, const sgld_update_opts *opts) {
  (void) w; (void) scratch;
  for (size_t k = 0; k < (size_t) d * d; k++) T[k] = 0.0;
  for (int j = 0; j < d; j++) T[j + (size_t) j * d] = 1.0 / sqrt(opts->eps + sqrt(state[j]));
}

const sgld_update update_psgld = {
  .state_size = 1, .needs_g_bar = 1, .init = psgld_init, .step = psgld_step,
  .precond_factor = psgld_factor
};
