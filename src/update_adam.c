/*
 * Adam (Kingma and Ba 2015), ascending the log posterior:
 *   m <- beta1 m + (1 - beta1) g_hat,   v <- beta2 v + (1 - beta2) g_hat^2,
 *   w <- w + eta m_hat / (sqrt(v_hat) + eps),
 * with the bias corrections m_hat = m / (1 - beta1^t), v_hat = v / (1 - beta2^t).
 * State: m, v, then the two powers beta1^t and beta2^t.
 */
#include "sgld.h"

typedef struct adam_opts {
  double beta1, beta2;   /* decay rates of the first and second moments */
  double eps;            /* added to the root mean square */
} adam_opts;

static const void *adam_build(SEXP opts, int d) {
  (void) d;
  adam_opts *o = (adam_opts *) R_alloc(1, sizeof *o);
  o->beta1 = list_real(opts, "beta1");
  o->beta2 = list_real(opts, "beta2");
  o->eps = list_real(opts, "eps");
  return o;
}

static size_t adam_state_length(int d) {
  return 2 * (size_t) d + 2;
}

static void adam_init(double *state, const double *w, int d, const void *opts) {
  (void) w; (void) opts;
  for (int j = 0; j < 2 * d; j++) state[j] = 0.0;
  state[2 * d] = state[2 * d + 1] = 1.0;
}

static void adam_step(double *w, const double *g_hat, const double *g_bar, double eta,
                      double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_bar; (void) tau; (void) rng;
  const adam_opts *o = opts;
  double *m = state, *v = state + d, *pow = state + 2 * d;
  const double b1 = o->beta1, b2 = o->beta2;
  pow[0] *= b1;
  pow[1] *= b2;
  const double c1 = 1.0 / (1.0 - pow[0]), c2 = 1.0 / (1.0 - pow[1]);
  for (int j = 0; j < d; j++) {
    m[j] = b1 * m[j] + (1.0 - b1) * g_hat[j];
    v[j] = b2 * v[j] + (1.0 - b2) * g_hat[j] * g_hat[j];
    w[j] += eta * (m[j] * c1) / (sqrt(v[j] * c2) + o->eps);
  }
}

const sgld_update update_adam = {
  .name = "adam", .build = adam_build, .state_length = adam_state_length,
  .init = adam_init, .step = adam_step
};
