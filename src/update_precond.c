/*
 * Langevin dynamics with a fixed preconditioner P = L L^T (handout eq. 3.9):
 *   w <- w + eta P g_hat + sqrt(2 eta tau) L xi.
 * Both terms go through L, so the step is w += L (eta L^T g_hat + sqrt(2 eta tau) xi)
 * and P itself is never formed. The factor L is the rule's one setting: R
 * computes it once (precondition_factor() in R/run.R) and passes it as the
 * rule's option `chol`.
 *
 * Or, for models too wide for a d x d factor, L = S (I + V C V^T) with S =
 * diag(s) (option `scale`) and, optionally, k orthonormal columns V
 * (`basis`, d x k) and C = diag(c) (`coef`, each c > -1): a diagonal
 * preconditioner corrected along the k directions where it fits worst
 * (R/auto-wide.R). L is applied in O(d k) a step; its transpose is
 * (I + V C V^T) S, its inverse (I + V C' V^T) S^{-1} with c' = 1/(1+c) - 1.
 */
#include <string.h>
#include "sgld.h"

typedef struct precond_opts {
  const double *L;     /* lower factor of P = L L^T, d x d column-major, R's memory */
  const double *s;     /* or, when L is NULL, the diagonal factor's entries */
  const double *V, *c; /* and k corrections (V d x k, c), or NULL */
  int k;
} precond_opts;

static const void *precond_build(SEXP opts, int d) {
  precond_opts *o = (precond_opts *) R_alloc(1, sizeof *o);
  o->s = list_optional_doubles(opts, "scale", d);
  o->L = o->s ? NULL : list_doubles(opts, "chol", (R_xlen_t) d * d);
  o->V = o->c = NULL;
  o->k = 0;
  SEXP c = list_optional(opts, "coef");
  if (o->s && c != R_NilValue) {
    o->k = (int) XLENGTH(c);
    if (o->k > d) error("internal: more corrections than parameters");
    o->c = list_doubles(opts, "coef", o->k);
    o->V = list_doubles(opts, "basis", (R_xlen_t) d * o->k);
  }
  return o;
}

/* x += V (f(c) * (V^T x)), f(c) = c, or 1/(1+c) - 1 when inverse; t holds k */
static void low_rank(const precond_opts *o, double *x, int d, int inverse, double *t) {
  for (int i = 0; i < o->k; i++) {
    const double *v = o->V + (size_t) i * d;
    double u = 0.0;
    for (int j = 0; j < d; j++) u += v[j] * x[j];
    t[i] = u * (inverse ? 1.0 / (1.0 + o->c[i]) - 1.0 : o->c[i]);
  }
  for (int i = 0; i < o->k; i++) {
    const double *v = o->V + (size_t) i * d;
    for (int j = 0; j < d; j++) x[j] += v[j] * t[i];
  }
}

/* scratch: the step before L is applied (step), or u and z (log_q), and
   the low-rank correction's k <= d numbers */
static size_t precond_scratch_length(int d) {
  return 3 * (size_t) d;
}

/* the step, its normals xi from z when given (step_drawn), else drawn */
static inline void precond_move(double *w, const double *g_hat, double eta, double tau,
                                double *a, sgld_rng *rng, const double *z, int d,
                                const precond_opts *o) {
  const double *L = o->L;
  const double sd = tau > 0 ? sqrt(2.0 * eta * tau) : 0.0;
  if (!L && !o->k) {                 /* diagonal: w_j += s_j (eta s_j g_j + sd xi_j) */
    for (int j = 0; j < d; j++) {
      a[j] = eta * (o->s[j] * g_hat[j]) + (tau > 0 ? sd * (z ? z[j] : rng_norm(rng)) : 0.0);
      w[j] += o->s[j] * a[j];
    }
    return;
  }
  if (!L) {                          /* a = eta L^T g + sd xi; w += L a */
    double *t = a + d;
    for (int j = 0; j < d; j++) a[j] = o->s[j] * g_hat[j];
    low_rank(o, a, d, 0, t);
    for (int j = 0; j < d; j++)
      a[j] = eta * a[j] + (tau > 0 ? sd * (z ? z[j] : rng_norm(rng)) : 0.0);
    low_rank(o, a, d, 0, t);
    for (int j = 0; j < d; j++) w[j] += o->s[j] * a[j];
    return;
  }
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
  const precond_opts *o = opts;
  const double *L = o->L;
  double *u = scratch, *z = scratch + d;
  if (!L) {                              /* z = L^{-1} (to - from) - eta L^T g */
    double *t = scratch + 2 * (size_t) d;   /* k <= d numbers */
    for (int j = 0; j < d; j++) u[j] = o->s[j] * g_from[j];
    if (o->k) low_rank(o, u, d, 0, t);
    for (int j = 0; j < d; j++) z[j] = (to[j] - from[j]) / o->s[j];
    if (o->k) low_rank(o, z, d, 1, t);
    double q = 0.0;
    for (int j = 0; j < d; j++) {
      const double e = z[j] - eta * u[j];
      q += e * e;
    }
    return -q / (4.0 * eta * tau);
  }
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
  const precond_opts *o = opts;
  if (o->L) {
    memcpy(T, o->L, (size_t) d * d * sizeof(double));
    return;
  }
  memset(T, 0, (size_t) d * d * sizeof(double));
  for (int j = 0; j < d; j++) {          /* column j: s * (e_j + V (c * V[j, ])) */
    double *col = T + (size_t) j * d;
    col[j] = 1.0;
    for (int i = 0; i < o->k; i++) {
      const double *v = o->V + (size_t) i * d, f = o->c[i] * v[j];
      for (int r = 0; r < d; r++) col[r] += v[r] * f;
    }
    for (int r = 0; r < d; r++) col[r] *= o->s[r];
  }
}

/* The Leimkuhler-Matthews discretisation of the same diffusion (as
   update_whiten.c's whiten_lm): the noise of a step is the mean of this
   step's normals and the last step's, which the state keeps (d doubles,
   then a flag that they were drawn). For a Gaussian posterior its law is
   exact at any step below 2 along every direction at once, where Euler's
   step widens a direction of step e by 1 / (1 - e / 2), and no one
   temperature cancels that for directions of different curvature; its bias
   in averages is O(eta^2). The wide models' recipe (R/auto-wide.R) takes
   steps several times larger with it. Its step has no log density of its
   own (it depends on the last normals): not a Metropolis-Hastings proposal. */
static size_t precond_lm_state_length(int d) {
  return (size_t) d + 1;
}

/* the scratch: precond_move()'s 3 d, then the step's mean normals */
static size_t precond_lm_scratch_length(int d) {
  return 4 * (size_t) d;
}

static void precond_lm_init(double *state, const double *w, int d, const void *opts) {
  (void) w;
  (void) opts;
  for (int j = 0; j <= d; j++) state[j] = 0.0;
}

static void precond_lm_step(double *w, const double *g_hat, const double *g_bar, double eta,
                            double tau, double *state, sgld_rng *rng, int d,
                            const void *opts) {
  (void) g_bar;
  double *prev = state, *scratch = state + d + 1, *xi = scratch + 3 * (size_t) d;
  if (tau > 0) lm_normals(prev, xi, rng, d);
  /* the mean of two normals has sd 1/sqrt(2): the noise is sqrt(2 eta tau) xi */
  precond_move(w, g_hat, eta, tau, scratch, NULL, tau > 0 ? xi : NULL, d, opts);
}

const sgld_update update_precond = {
  .name = "precond", .build = precond_build, .scratch_length = precond_scratch_length,
  .init = update_no_init, .step = precond_step, .log_q = precond_log_q,
  .precond_factor = precond_factor, .step_drawn = precond_step_drawn
};

const sgld_update update_precond_lm = {
  .name = "precond_lm", .build = precond_build, .state_length = precond_lm_state_length,
  .scratch_length = precond_lm_scratch_length, .init = precond_lm_init, .step = precond_lm_step,
  .precond_factor = precond_factor
};
