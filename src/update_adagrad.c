/*
 * AdaGrad (Duchi, Hazan and Singer 2011): every coordinate's step shrinks with
 * the sum of its squared gradients so far,
 *   s <- s + g_hat^2,   w <- w + eta g_hat / (sqrt(s) + eps).
 * State: s, starting at 0.
 */
#include "sgld.h"

typedef struct adagrad_opts {
  double eps;          /* added to the root of the sum, so no step divides by 0 */
} adagrad_opts;

static const void *adagrad_build(SEXP opts, int d) {
  (void) d;
  adagrad_opts *o = (adagrad_opts *) R_alloc(1, sizeof *o);
  o->eps = list_real(opts, "eps");
  return o;
}

static void adagrad_step(double *w, const double *g_hat, const double *g_bar, double eta,
                         double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_bar; (void) tau; (void) rng;
  const adagrad_opts *o = opts;
  double *s = state;
  for (int j = 0; j < d; j++) {
    s[j] += g_hat[j] * g_hat[j];
    w[j] += eta * g_hat[j] / (sqrt(s[j]) + o->eps);
  }
}

const sgld_update update_adagrad = {
  .name = "adagrad", .build = adagrad_build, .state_length = update_one_per_parameter,
  .init = update_zero_init, .step = adagrad_step
};
