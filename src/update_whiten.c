/*
 * Langevin dynamics with a latent path whitened given the globals: a
 * data-informed non-centring (Papaspiliopoulos, Roberts and Skold 2007
 * study the centred / non-centred choice it interpolates).
 *
 * The model (sgld_model.path_gaussian) says that given its k globals theta
 * the path x (the last P = d - k parameters) is approximately
 * N(xbar(theta), M(theta)^{-1}), xbar = M^{-1} b, M tridiagonal. With
 * M = L L^T (L lower bidiagonal) the rule moves (theta, z),
 *   z = L(theta)^T (x - xbar(theta)),      x = xbar(theta) + L(theta)^{-T} z,
 * in which z is close to N(0, I) whatever theta is. Changing theta at fixed z
 * moves the whole path with it: theta is no longer held in place by the
 * path's roughness (the funnel of the centred form, where the path is
 * sampled as itself), nor does it pin the path's well-identified slow part
 * (the trouble of the plain non-centred form, the path's innovations). In
 * these coordinates the target is exp(U~ / tau) with
 *   U~(theta, z) = U(theta, x(theta, z)) - tau sum_i log l_i(theta)
 * (the Jacobian |dx/dz| = 1 / det L), and one iteration is
 *   theta' = theta + eta C g~_theta + sqrt(2 eta tau) R xi,
 *   z'     = z + eta g~_z + sqrt(2 eta tau) xi',
 * then x' = xbar(theta') + L(theta')^{-T} z'. C = R R^T is a fixed k x k
 * preconditioner for the globals (option `chol`, R's lower factor), about
 * their marginal posterior covariance (R/whiten.R finds it). The gradient
 * comes from g = grad U in the original coordinates by the chain rule:
 *   g~_z = L^{-1} g_x,
 *   g~_theta_j = g_theta_j + (M^{-1} g_x)' (db_j - dM_j xbar)
 *                - g~_z' (dL_j' (x - xbar)) - tau sum_i dl_ij / l_i,
 * with dL_j, the derivative of the Cholesky factor in theta_j, from one
 * forward recursion. Everything is O(k P).
 *
 * Without kept state, so it is also mala()'s proposal: Gaussian in
 * (theta, z) with a fixed covariance; in the original coordinates its
 * density at `to` carries the Jacobian det L(theta_to).
 *
 * Measured on MASS::SP500 (model_sv(type = "rw"), T = 2780; bench/sv.R):
 * MALA in the path's own coordinates with the process's precision as a
 * metric gave sigma 4 to 8 effective draws in 30,000 iterations, MALA here
 * 380 to 540.
 */
#include <limits.h>
#include <string.h>
#include "sgld.h"

typedef struct whiten_opts {
  const sgld_model *model;
  int k, P;
  const double *R;     /* lower factor of C, k x k column-major (R's memory) */
} whiten_opts;

static void check_path_model(const sgld_model *model) {
  if (!model->path_gaussian || model->path_k < 1 || model->path_k > model->d - 2)
    error("internal: this model has no path_gaussian for the \"whiten\" rule");
}

static const void *whiten_build(SEXP opts, const sgld_model *model) {
  check_path_model(model);
  whiten_opts *o = (whiten_opts *) R_alloc(1, sizeof *o);
  o->model = model;
  o->k = model->path_k;
  o->P = model->d - o->k;
  o->R = list_doubles(opts, "chol", (R_xlen_t) o->k * o->k);
  for (int j = 0; j < o->k; j++)
    if (!(o->R[j + j * o->k] > 0) || !isfinite(o->R[j + j * o->k]))
      error("internal: the globals' factor must have a positive diagonal");
  return o;
}

/* The views into the scratch, P doubles each unless said: the path block's
   M (a, o), b, factor (il = 1 / l, e), xbar, u = x - xbar, z, the whitened
   gradient gz, h = M^{-1} g_x, the derivatives (da, dob, db) and those of the
   factor (dl, de); gt and xi hold d doubles (the globals' gradient; the
   noise, or the proposal's mean). */
typedef struct whiten_at {
  double *a, *o, *b, *il, *e, *xbar, *u, *z, *gz, *h, *da, *dob, *db, *dl, *de;
  double *gt, *xi;
} whiten_at;

enum { WHITEN_VECTORS = 17 };

static size_t whiten_scratch_length(int d) {
  return WHITEN_VECTORS * (size_t) d;
}

static whiten_at whiten_views(double *s, int d) {
  double *p[WHITEN_VECTORS];
  for (int i = 0; i < WHITEN_VECTORS; i++) p[i] = s + (size_t) i * d;
  whiten_at m = {p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11],
                 p[12], p[13], p[14], p[15], p[16]};
  return m;
}

/* L from M = tridiag(o; a; o), as il = 1 / diag(L) and e = its subdiagonal:
   0 if M is not positive definite */
static int factor(const double *a, const double *o, double *il, double *e, int P) {
  double prev = 0.0;
  for (int i = 0; i < P; i++) {
    const double piv = a[i] - prev * prev;
    if (!(piv > 0) || !isfinite(piv)) return 0;
    il[i] = 1.0 / sqrt(piv);
    prev = i + 1 < P ? o[i] * il[i] : 0.0;
    e[i] = prev;
  }
  return 1;
}

/* x <- L^{-1} x and x <- L^{-T} x */
static void solve_lower(const double *il, const double *e, double *x, int P) {
  x[0] *= il[0];
  for (int i = 1; i < P; i++) x[i] = (x[i] - e[i - 1] * x[i - 1]) * il[i];
}

static void solve_upper(const double *il, const double *e, double *x, int P) {
  x[P - 1] *= il[P - 1];
  for (int i = P - 2; i >= 0; i--) x[i] = (x[i] - e[i] * x[i + 1]) * il[i];
}

/* log det L = -sum log il, in blocks of 8 (one log per block: the pivots of
   a positive definite M of this kind stay within a few orders of magnitude
   of 1, so a product of 8 cannot overflow) */
static double log_det_factor(const double *il, int P) {
  double s = 0.0;
  for (int i = 0; i < P; i += 8) {
    double prod = 1.0;
    const int end = i + 8 < P ? i + 8 : P;
    for (int j = i; j < end; j++) prod *= il[j];
    s -= log(prod);
  }
  return s;
}

/* M, b, L and xbar at the globals of w; 0 if M is not positive definite */
static int path_at(const whiten_opts *o, const double *w, whiten_at *m) {
  const int P = o->P;
  o->model->path_gaussian(o->model->data, w, -1, m->a, m->o, m->b);
  if (!factor(m->a, m->o, m->il, m->e, P)) return 0;
  memcpy(m->xbar, m->b, (size_t) P * sizeof(double));
  solve_lower(m->il, m->e, m->xbar, P);
  solve_upper(m->il, m->e, m->xbar, P);
  return 1;
}

/* z of w, after path_at(): u = x - xbar, z = L^T u */
static void whiten(const whiten_opts *o, const double *w, whiten_at *m) {
  const int k = o->k, P = o->P;
  for (int i = 0; i < P; i++) m->u[i] = w[k + i] - m->xbar[i];
  for (int i = 0; i < P; i++)
    m->z[i] = m->u[i] / m->il[i] + (i + 1 < P ? m->e[i] * m->u[i + 1] : 0.0);
}

/* the gradient of U~ at (theta, z) from g = grad U at w, after whiten():
   gt[0..k) and gz */
static void whitened_gradient(const whiten_opts *o, const double *w, const double *g,
                              double tau, whiten_at *m) {
  const int k = o->k, P = o->P;
  memcpy(m->gz, g + k, (size_t) P * sizeof(double));
  solve_lower(m->il, m->e, m->gz, P);
  memcpy(m->h, m->gz, (size_t) P * sizeof(double));
  solve_upper(m->il, m->e, m->h, P);
  const double *il = m->il, *e = m->e, *xbar = m->xbar, *u = m->u, *h = m->h, *gz = m->gz;
  for (int j = 0; j < k; j++) {
    o->model->path_gaussian(o->model->data, w, j, m->da, m->dob, m->db);
    const double *da = m->da, *dob = m->dob, *db = m->db;
    double *dl = m->dl, *de = m->de;
    /* the factor's derivative: l_i^2 = a_i - e_{i-1}^2, e_i = o_i / l_i
       (sequential), then d log det L = sum dl_i / l_i */
    dl[0] = 0.5 * da[0] * il[0];
    for (int i = 0; i + 1 < P; i++) {
      de[i] = (dob[i] - e[i] * dl[i]) * il[i];
      dl[i + 1] = (0.5 * da[i + 1] - e[i] * de[i]) * il[i + 1];
    }
    double dlog = 0.0;
    for (int i = 0; i < P; i++) dlog += dl[i] * il[i];
    /* h' (db - dM xbar) - gz' (dL^T u), dM and dL^T bidiagonal or tridiagonal:
       the diagonal terms, then the off-diagonal ones, without branches */
    double s = 0.0;
    for (int i = 0; i < P; i++) s += h[i] * (db[i] - da[i] * xbar[i]) - gz[i] * dl[i] * u[i];
    for (int i = 0; i + 1 < P; i++)
      s -= dob[i] * (h[i + 1] * xbar[i] + h[i] * xbar[i + 1]) + gz[i] * de[i] * u[i + 1];
    m->gt[j] = g[j] - tau * dlog + s;
  }
}

/* the globals theta' = theta + eta C gt + sd R xi[0..k) into w[0..k), and
   z <- z + eta gz + sd xi[k..d) */
static void move(const whiten_opts *o, double *w, whiten_at *m, double eta, double sd) {
  const int k = o->k, P = o->P;
  const double *R = o->R;
  double *rtg = m->u;                  /* free again: R^T gt */
  for (int j = 0; j < k; j++) {
    double s = 0.0;
    for (int i = j; i < k; i++) s += R[i + j * k] * m->gt[i];
    rtg[j] = s;
  }
  for (int i = 0; i < k; i++) {
    double s = 0.0;
    for (int j = 0; j <= i; j++) s += R[i + j * k] * (eta * rtg[j] + sd * m->xi[j]);
    w[i] += s;
  }
  for (int i = 0; i < P; i++) m->z[i] += eta * m->gz[i] + sd * m->xi[k + i];
}

/* x = xbar(theta) + L(theta)^{-T} z at the globals now in w; 0 if M is not
   positive definite there */
static int unwhiten(const whiten_opts *o, double *w, whiten_at *m) {
  const int k = o->k, P = o->P;
  if (!path_at(o, w, m)) return 0;
  solve_upper(m->il, m->e, m->z, P);
  for (int i = 0; i < P; i++) w[k + i] = m->xbar[i] + m->z[i];
  return 1;
}

static void whiten_step(double *w, const double *g_hat, const double *g_bar, double eta,
                        double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_bar;
  const whiten_opts *o = opts;
  whiten_at m = whiten_views(state, d);
  if (!path_at(o, w, &m)) {
    for (int j = 0; j < d; j++) w[j] = NAN;    /* the driver stops the chain */
    return;
  }
  whiten(o, w, &m);
  whitened_gradient(o, w, g_hat, tau, &m);
  const double sd = tau > 0 ? sqrt(2.0 * eta * tau) : 0.0;
  for (int j = 0; j < d; j++) m.xi[j] = tau > 0 ? rng_norm(rng) : 0.0;
  move(o, w, &m, eta, sd);
  if (!unwhiten(o, w, &m))
    for (int j = 0; j < d; j++) w[j] = NAN;
}

/* log q(to | from) in the original coordinates, up to a constant:
   -|residual in (theta, z)|^2 / (4 eta tau) (the globals' part in C^{-1})
   + log det L(theta_to) */
static double whiten_log_q(const double *to, const double *from, const double *g_from,
                           double eta, double tau, double *scratch, int d, const void *opts) {
  const whiten_opts *o = opts;
  const int k = o->k, P = o->P;
  whiten_at m = whiten_views(scratch, d);
  if (!path_at(o, from, &m)) return -INFINITY;
  whiten(o, from, &m);
  whitened_gradient(o, from, g_from, tau, &m);
  /* the proposal's mean: the globals in mean[0..k), z in mean[k..d) */
  double *mean = m.xi;
  memcpy(mean, from, (size_t) k * sizeof(double));
  for (int i = k; i < d; i++) mean[i] = 0.0;   /* no noise: move() reads xi times 0 */
  move(o, mean, &m, eta, 0.0);
  memcpy(mean + k, m.z, (size_t) P * sizeof(double));
  if (!path_at(o, to, &m)) return -INFINITY;
  whiten(o, to, &m);
  double quad = 0.0, *r = m.gt;
  for (int i = 0; i < k; i++) {        /* R^{-1} (theta_to - mean), forward */
    double s = to[i] - mean[i];
    for (int j = 0; j < i; j++) s -= o->R[i + j * k] * r[j];
    r[i] = s / o->R[i + i * k];
    quad += r[i] * r[i];
  }
  for (int i = 0; i < P; i++) {
    const double v = m.z[i] - mean[k + i];
    quad += v * v;
  }
  return -quad / (4.0 * eta * tau) + log_det_factor(m.il, P);
}

const sgld_update update_whiten = {
  .name = "whiten", .build_model = whiten_build, .scratch_length = whiten_scratch_length,
  .init = update_no_init, .step = whiten_step, .log_q = whiten_log_q
};

/* For R (R/whiten.R, and the tests): at w on the sampler's scale, its
   whitened coordinates (theta, z), log det L, U(w), and the gradient of
   U~ = U - tau log det L in (theta, z), from the full-data gradient of U.
   With `inverse` TRUE, w is read as (theta, z) and only its image w is
   returned. */
SEXP sgld_whiten_eval(SEXP model_spec, SEXP w_, SEXP tau_, SEXP inverse_) {
  sgld_model model = find_model(model_spec);
  check_path_model(&model);
  const int d = model.d;
  if (TYPEOF(w_) != REALSXP || XLENGTH(w_) != d)
    error("internal: 'w' must be a double vector of length %d", d);
  const double tau = asReal(tau_);
  whiten_opts o = {&model, model.path_k, d - model.path_k, NULL};
  whiten_at m = whiten_views((double *) R_alloc(whiten_scratch_length(d), sizeof(double)), d);
  SEXP w_out = PROTECT(allocVector(REALSXP, d));
  double *w = REAL(w_out);
  memcpy(w, REAL(w_), (size_t) d * sizeof(double));
  if (asLogical(inverse_) == TRUE) {
    memcpy(m.z, w + o.k, (size_t) o.P * sizeof(double));
    if (!unwhiten(&o, w, &m)) error("the path's precision is not positive definite there");
    UNPROTECT(1);
    return w_out;
  }
  if (!path_at(&o, w, &m)) error("the path's precision is not positive definite there");
  whiten(&o, w, &m);
  double *g = (double *) R_alloc(d, sizeof(double));
  double *work = (double *) R_alloc(model.work_size + 1, sizeof(double));
  if (model.n > INT_MAX) error("internal: full-data evaluations need n <= %d", INT_MAX);
  R_xlen_t *all = (R_xlen_t *) R_alloc(model.n, sizeof(R_xlen_t));
  for (R_xlen_t i = 0; i < model.n; i++) all[i] = i;
  const double U = full_log_post(&model, w, g, all, work);
  whitened_gradient(&o, w, g, tau, &m);
  const char *names[] = {"theta_z", "log_det", "U", "grad", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SEXP tz = allocVector(REALSXP, d);
  SET_VECTOR_ELT(out, 0, tz);
  SET_VECTOR_ELT(out, 1, ScalarReal(log_det_factor(m.il, o.P)));
  SET_VECTOR_ELT(out, 2, ScalarReal(U));
  SEXP gr = allocVector(REALSXP, d);
  SET_VECTOR_ELT(out, 3, gr);
  memcpy(REAL(tz), w, (size_t) o.k * sizeof(double));
  memcpy(REAL(tz) + o.k, m.z, (size_t) o.P * sizeof(double));
  memcpy(REAL(gr), m.gt, (size_t) o.k * sizeof(double));
  memcpy(REAL(gr) + o.k, m.gz, (size_t) o.P * sizeof(double));
  UNPROTECT(2);
  return out;
}
