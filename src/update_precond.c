/*
 * Langevin dynamics with a fixed preconditioner P = L L^T (handout eq. 3.9):
 *   w <- w + eta P g_hat + sqrt(2 eta tau) L xi.
 * Both terms go through L, so the step is w += L (eta L^T g_hat + sqrt(2 eta tau) xi)
 * and P itself is never formed. The factor L is the rule's one setting: R
 * computes it once (precondition_factor() in R/run.R) and passes it as the
 * rule's option `chol`.
 */
#include <string.h>
#include "sgld.h"

typedef struct precond_opts {
  const double *L;     /* lower factor of P = L L^T, d x d column-major, R's memory */
} precond_opts;

static const void *precond_build(SEXP opts, int d) {
  precond_opts *o = (precond_opts *) R_alloc(1, sizeof *o);
  o->L = list_doubles(opts, "chol", (R_xlen_t) d * d);
  return o;
}

/* scratch: the step before L is applied (step), or u and z (log_q) */
static size_t precond_scratch_length(int d) {
  return 2 * (size_t) d;
}

/* the step, its normals xi from z when given (step_drawn), else drawn */
static inline void precond_move(double *w, const double *g_hat, double eta, double tau,
                                double *a, sgld_rng *rng, const double *z, int d,
                                const precond_opts *o) {
  const double *L = o->L;
  const double sd = tau > 0 ? sqrt(2.0 * eta * tau) : 0.0;
  for (int j = 0; j < d; j++) {      /* a = eta L^T g_hat + sd xi; column j of L is row j of L^T */
    const double *col = L + (size_t) j * d;
    double s = 0.0;
    for (int i = j; i < d; i++) s += col[i] * g_hat[i];
    a[j] = eta * s + (tau > 0 ? sd * (z ? z[j] : rng_norm(rng)) : 0.0);
  }
  for (int j = 0; j < d; j++) {      /* w += L a, column by column */
    const double *col = L + (size_t) j * d;
    for (int i = j; i < d; i++) w[i] += col[i] * a[j];
  }
}

/* state: the scratch, the step before L is applied */
static void precond_step(double *w, const double *g_hat, const double *g_bar, double eta,
                         double tau, double *state, sgld_rng *rng, int d,
                         const void *opts) {
  (void) g_bar;
  precond_move(w, g_hat, eta, tau, state, rng, NULL, d, opts);
}

static void precond_step_drawn(double *w, const double *g_hat, const double *g_bar,
                               double eta, double tau, double *state, const double *z, int d,
                               const void *opts) {
  (void) g_bar;
  precond_move(w, g_hat, eta, tau, state, NULL, z, d, opts);
}

/* the step is N(from + eta P g, 2 eta tau P): the residual through L^{-1} */
static double precond_log_q(const double *to, const double *from, const double *g_from,
                            double eta, double tau, double *scratch, int d,
                            const void *opts) {
  const double *L = ((const precond_opts *) opts)->L;
  double *u = scratch, *z = scratch + d;
  for (int j = 0; j < d; j++) {          /* u = L^T g */
    const double *col = L + (size_t) j * d;
    double s = 0.0;
    for (int i = j; i < d; i++) s += col[i] * g_from[i];
    u[j] = s;
  }
  double q = 0.0;
  for (int i = 0; i < d; i++) {          /* z = L^{-1} (to - from) - eta u, forward */
    double s = to[i] - from[i];
    for (int k = 0; k < i; k++) s -= L[i + (size_t) k * d] * z[k];
    z[i] = s / L[i + (size_t) i * d];
  }
  for (int i = 0; i < d; i++) {
    const double r = z[i] - eta * u[i];
    q += r * r;
  }
  return -q / (4.0 * eta * tau);
}

static void precond_factor(const double *w, const double *state, double *T, double *scratch,
                           int d, const void *opts) {
  (void) w; (void) state; (void) scratch;
  memcpy(T, ((const precond_opts *) opts)->L, (size_t) d * d * sizeof(double));
}

const sgld_update update_precond = {
  .name = "precond", .build = precond_build, .scratch_length = precond_scratch_length,
  .init = update_no_init, .step = precond_step, .log_q = precond_log_q,
  .precond_factor = precond_factor, .step_drawn = precond_step_drawn
};
