/*
 * Langevin dynamics with a fixed preconditioner P = L L^T (handout eq. 3.9):
 *   w <- w + eta P g_hat + sqrt(2 eta tau) L xi.
 * Both terms go through L, so the step is w += L (eta L^T g_hat + sqrt(2 eta tau) xi)
 * and P itself is never formed.
 */
#include "sgld.h"

static void precond_step(double *w, const double *g_hat, const double *g_bar, double eta,
                         double tau, double *state, sgld_rng *rng, int d,
                         const sgld_update_opts *opts) {
  (void) g_bar;
  const double *L = opts->L;
  double *a = state;                 /* scratch: the step before L is applied */
  const double sd = tau > 0 ? sqrt(2.0 * eta * tau) : 0.0;
  for (int j = 0; j < d; j++) {      /* a = eta L^T g_hat + sd xi; column j of L is row j of L^T */
    const double *col = L + (size_t) j * d;
    double s = 0.0;
    for (int i = j; i < d; i++) s += col[i] * g_hat[i];
    a[j] = eta * s + (tau > 0 ? sd * rng_norm(rng) : 0.0);
  }
  for (int j = 0; j < d; j++) {      /* w += L a, column by column */
    const double *col = L + (size_t) j * d;
    for (int i = j; i < d; i++) w[i] += col[i] * a[j];
  }
}

const sgld_update update_precond = {0, 0, 1, 0, update_no_init, precond_step};
