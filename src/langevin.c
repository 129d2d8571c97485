/*
 * The exact Langevin pieces shared by mala() and the diagnostics of sgld():
 * the full-data log posterior and gradient, and Metropolis-Hastings with an
 * update rule as the proposal (the rule's step taken with the full-data
 * gradient; see log_q in sgld.h), for the target exp(U / tau).
 */
#include <limits.h>
#include <string.h>
#include "sgld.h"

/* U(w) = log prior + full-data log likelihood, and its gradient into g */
double full_log_post(const sgld_model *model, const double *w, double *g,
                     const R_xlen_t *all_idx, double *work) {
  for (int j = 0; j < model->d; j++) g[j] = 0.0;
  if (model->loglik_grad) {
    const double ll = model->loglik_grad(model->data, w, all_idx, model->n, g, work);
    model->grad_logprior(model->data, w, g);
    return ll + model->logprior(model->data, w);
  }
  model->grad_loglik(model->data, w, all_idx, (int) model->n, g, work);
  model->grad_logprior(model->data, w, g);
  return model->loglik(model->data, w, NULL, model->n, work) + model->logprior(model->data, w);
}

/* The Leimkuhler-Matthews noise (update_whiten.c's whiten_lm,
   update_precond.c's precond_lm): xi = (r_prev + r) / 2 from this step's
   normals r and the last step's, which prev[0..d) keeps, prev[d] flagging
   that they were drawn (the first step draws them). */
void lm_normals(double *prev, double *xi, sgld_rng *rng, int d) {
  if (prev[d] == 0.0) {
    for (int j = 0; j < d; j++) prev[j] = rng_norm(rng);
    prev[d] = 1.0;
  }
  for (int j = 0; j < d; j++) {
    const double r = rng_norm(rng);
    xi[j] = 0.5 * (prev[j] + r);
    prev[j] = r;
  }
}

int update_is_proposal(const sgld_update *rule, int d) {
  return rule->log_q && update_state_length(rule, d) == 0;
}

/* The plain Langevin step stands in for rules that cannot be a proposal
   (kept state, or no proposal density): the diagnostic then describes plain
   SGLD at the same state and learning rate, as its documentation says. */
const sgld_update *diagnostic_proposal(const sgld_update *rule, int d, const void **opts) {
  if (update_is_proposal(rule, d)) return rule;
  *opts = NULL;    /* the plain step has no options */
  return &update_sgld;
}

void mh_propose(const sgld_update *rule, const double *w, const double *g, double eta,
                double tau, double *scratch, sgld_rng *rng, double *w_new, int d,
                const void *opts) {
  memcpy(w_new, w, d * sizeof(double));
  rule->step(w_new, g, NULL, eta, tau, scratch, rng, d, opts);
}

double mh_log_ratio(const sgld_update *rule, const double *w, double U, const double *g,
                    const double *w_new, double U_new, const double *g_new, double eta,
                    double tau, double *scratch, int d, const void *opts) {
  const double fwd = rule->log_q(w_new, w, g, eta, tau, scratch, d, opts);
  const double bwd = rule->log_q(w, w_new, g_new, eta, tau, scratch, d, opts);
  return (U_new - U) / tau + bwd - fwd;
}

/* ------------------------------------------- leapfrog trajectories -- */

/* The Hamiltonian H(w, r) = -U(w) / tau + |r|^2 / 2 in the coordinates x
   of w = T x, T the lower factor of the metric P = T T^T (NULL: P = I):
   there the momentum r is standard normal and the gradient is T^T g, so
   the kinetic energy needs no inverse of P. One leapfrog step is
     r += (eps / 2) T^T g / tau;  w += eps T r;  r += (eps / 2) T^T g' / tau,
   and its position update is mala()'s proposal w + eta P g + sqrt(2 eta tau) T r
   at eps = sqrt(2 eta tau): one step with its accept test is MALA. */

/* r += c T^T g, T lower triangular: column j of T meets g from row j on */
static void kick(double *r, const double *T, const double *g, double c, int d) {
  if (!T) {
    for (int j = 0; j < d; j++) r[j] += c * g[j];
    return;
  }
  for (int j = 0; j < d; j++) {
    const double *col = T + (size_t) j * d;
    double s = 0.0;
    for (int i = j; i < d; i++) s += col[i] * g[i];
    r[j] += c * s;
  }
}

/* w += eps T r */
static void drift(double *w, const double *T, const double *r, double eps, int d) {
  if (!T) {
    for (int j = 0; j < d; j++) w[j] += eps * r[j];
    return;
  }
  for (int j = 0; j < d; j++) {
    const double *col = T + (size_t) j * d;
    const double a = eps * r[j];
    for (int i = j; i < d; i++) w[i] += col[i] * a;
  }
}

double leapfrog_path(const sgld_model *model, const double *T, double *w, double *g,
                     double *r, double U, double eps, int steps, double tau,
                     const R_xlen_t *all_idx, double *work) {
  const int d = model->d;
  const double half = 0.5 * eps / tau;
  for (int l = 0; l < steps; l++) {
    kick(r, T, g, half, d);
    drift(w, T, r, eps, d);
    U = full_log_post(model, w, g, all_idx, work);
    /* off the posterior's support, or a model that failed: the proposal is
       refused, so the rest of the path does not matter */
    if (!isfinite(U)) return U;
    kick(r, T, g, half, d);
  }
  return U;
}

/* For the tests of the integrator (tests/testthat/test-hmc.R): `steps`
   leapfrog steps of size eps from (w, r) at temperature tau under the
   metric factor T (NULL or d x d lower triangular), returned as
   list(w, r, U) at the path's end. */
SEXP sgld_leapfrog(SEXP model_spec, SEXP factor, SEXP w0, SEXP r0, SEXP step) {
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  if (!isReal(w0) || XLENGTH(w0) != d) error("internal: 'w' must hold %d numbers", d);
  if (!isReal(r0) || XLENGTH(r0) != d) error("internal: 'r' must hold %d numbers", d);
  if (factor != R_NilValue && (!isReal(factor) || XLENGTH(factor) != (R_xlen_t) d * d))
    error("internal: 'factor' must be NULL or a %d x %d matrix", d, d);
  if (!isReal(step) || XLENGTH(step) != 3) error("internal: 'step' must be eps, steps, tau");
  const double eps = REAL(step)[0], tau = REAL(step)[2];
  const double steps = REAL(step)[1];
  if (!(eps > 0) || !isfinite(eps) || !(tau > 0) || !isfinite(tau) || !(steps >= 1) ||
      steps > 1e6 || steps != floor(steps))
    error("internal: 'step' must hold eps > 0, 1 to 1e6 steps and tau > 0");
  if (model.n > INT_MAX) error("internal: full-data evaluations need n <= %d", INT_MAX);
  R_xlen_t *all = (R_xlen_t *) R_alloc(model.n + 1, sizeof(R_xlen_t));
  for (R_xlen_t i = 0; i < model.n; i++) all[i] = i;
  double *work = (double *) R_alloc(model.work_size + 1, sizeof(double));   /* as a chain's, one thread */
  const char *names[] = {"w", "r", "U", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SEXP w = SET_VECTOR_ELT(out, 0, duplicate(w0));
  SEXP r = SET_VECTOR_ELT(out, 1, duplicate(r0));
  double *g = (double *) R_alloc(d + 1, sizeof(double));
  double U = full_log_post(&model, REAL(w), g, all, work);
  if (isfinite(U))
    U = leapfrog_path(&model, factor == R_NilValue ? NULL : REAL(factor), REAL(w), g, REAL(r),
                      U, eps, (int) steps, tau, all, work);
  SET_VECTOR_ELT(out, 2, ScalarReal(U));
  UNPROTECT(1);
  return out;
}
