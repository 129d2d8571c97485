/*
 * Preconditioned SGLD with an RMSprop preconditioner (Li et al. 2016):
 *   v <- alpha v + (1 - alpha) g_bar^2,   G = 1 / (lambda + sqrt(v)),
 *   w <- w + eta G g_hat + sqrt(2 eta tau G) xi      (element-wise).
 * v averages the squared mean per-item likelihood gradient, so its scale does
 * not depend on n. The term Gamma = sum_j dG_ij / dw_j of the exact dynamics
 * is left out, as Li et al. recommend: it is small when alpha is close to 1.
 * State: v, starting at v_init.
 */
#include "sgld.h"

typedef struct psgld_opts {
  double alpha;        /* weight of the old average of squared gradients */
  double lambda;       /* added to the root mean square */
  double v_init;       /* where the average starts */
} psgld_opts;

static const void *psgld_build(SEXP opts, int d) {
  (void) d;
  psgld_opts *o = (psgld_opts *) R_alloc(1, sizeof *o);
  o->alpha = list_real(opts, "alpha");
  o->lambda = list_real(opts, "lambda");
  o->v_init = list_real(opts, "v_init");
  return o;
}

static void psgld_init(double *state, const double *w, int d, const void *opts) {
  (void) w;
  const psgld_opts *o = opts;
  for (int j = 0; j < d; j++) state[j] = o->v_init;
}

/* the step, its normals from z when given (step_drawn), else drawn */
static inline void psgld_move(double *w, const double *g_hat, const double *g_bar, double eta,
                              double tau, double *v, sgld_rng *rng, const double *z, int d,
                              const psgld_opts *o) {
  const double alpha = o->alpha;
  for (int j = 0; j < d; j++) {
    v[j] = alpha * v[j] + (1.0 - alpha) * g_bar[j] * g_bar[j];
    const double G = 1.0 / (o->lambda + sqrt(v[j]));
    w[j] += eta * G * g_hat[j];
    if (tau > 0) w[j] += sqrt(2.0 * eta * tau * G) * (z ? z[j] : rng_norm(rng));
  }
}

static void psgld_step(double *w, const double *g_hat, const double *g_bar, double eta,
                       double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  psgld_move(w, g_hat, g_bar, eta, tau, state, rng, NULL, d, opts);
}

static void psgld_step_drawn(double *w, const double *g_hat, const double *g_bar, double eta,
                             double tau, double *state, const double *z, int d,
                             const void *opts) {
  psgld_move(w, g_hat, g_bar, eta, tau, state, NULL, z, d, opts);
}

/* P = diag(G): its factor is diag(sqrt(G)) */
static void psgld_factor(const double *w, const double *state, double *T, double *scratch,
                         int d, const void *opts) {
  (void) w; (void) scratch;
  const psgld_opts *o = opts;
  for (size_t k = 0; k < (size_t) d * d; k++) T[k] = 0.0;
  for (int j = 0; j < d; j++) T[j + (size_t) j * d] = 1.0 / sqrt(o->lambda + sqrt(state[j]));
}

const sgld_update update_psgld = {
  .name = "psgld", .build = psgld_build, .state_length = update_one_per_parameter,
  .needs_g_bar = 1, .init = psgld_init, .step = psgld_step, .precond_factor = psgld_factor,
  .step_drawn = psgld_step_drawn
};
