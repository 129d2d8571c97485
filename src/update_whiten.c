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
 * A model may put a level (path_level: the AR(1) model's mu) into the
 * block: then theta is the other globals, the block is (x, mu) and M is the
 * path's tridiagonal part bordered by a dense last row and column; its
 * factor is L = [L_A 0; l' lambda] with L_A L_A' = A (bidiagonal), L_A l =
 * the border and lambda^2 = M_mu,mu - l'l, all O(P). Whitening mu with the
 * path removes the funnel between mu and phi: as phi -> 1 the process's
 * long-run mean is barely identified and mu's conditional sd given the
 * other globals grows from about sigma / (sqrt(T) (1 - phi)) to the
 * prior's, which a fixed step for mu cannot follow (on demeaned
 * MASS::SP500, Euler's steps of 0.05 over 25,000 iterations gave mu 406
 * effective draws with mu outside the block and 656 in it, and sigma 215
 * and 239).
 *
 * Two rules: "whiten" takes Euler's steps, as above, without kept state,
 * so it is also mala()'s proposal (and sgd()'s step): Gaussian in
 * (theta, z) with a fixed covariance; in the original coordinates its
 * density at `to` carries the Jacobian det L(theta_to). "whiten_lm",
 * sgld()'s, takes Leimkuhler-Matthews steps (below).
 *
 * Measured on MASS::SP500 (model_sv(type = "rw"), T = 2780; bench/sv.R):
 * MALA in the path's own coordinates with the process's precision as a
 * metric gave sigma 4 to 8 effective draws in 30,000 iterations, MALA here
 * 380 to 540.
 */
#include <limits.h>
#include <string.h>
#include "sgld.h"

/* the scratch's vectors: shared ones, and per global the rule moves (see
   whiten_at) */
enum { WHITEN_SHARED = 14, WHITEN_PER_GLOBAL = 4, WHITEN_MAX_GLOBALS = 3 };

typedef struct whiten_opts {
  const sgld_model *model;
  int k;               /* globals before the path */
  int lev;             /* 1 when w[0] (a level) is in the block, else 0 */
  int kg;              /* globals moved with C: w[lev..k) */
  int P, B;            /* the path's length; the block's, P + lev */
  const double *R;     /* lower factor of C, kg x kg column-major (R's memory) */
} whiten_opts;

static void check_path_model(const sgld_model *model) {
  if (!model->path_gaussian || model->path_k < 1 || model->path_k > model->d - 2 ||
      model->path_level < 0 || model->path_level > 1 || model->path_level >= model->path_k ||
      model->path_k - model->path_level > WHITEN_MAX_GLOBALS)
    error("internal: this model has no path_gaussian for the \"whiten\" rule");
}

static whiten_opts whiten_layout(const sgld_model *model, const double *R) {
  whiten_opts o = {model, model->path_k, model->path_level, model->path_k - model->path_level,
                   model->d - model->path_k, model->d - model->path_k + model->path_level, R};
  return o;
}

static const void *whiten_build(SEXP opts, const sgld_model *model) {
  check_path_model(model);
  whiten_opts *o = (whiten_opts *) R_alloc(1, sizeof *o);
  *o = whiten_layout(model, NULL);
  const int kg = o->kg;
  o->R = list_doubles(opts, "chol", (R_xlen_t) kg * kg);
  for (int j = 0; j < kg; j++)
    if (!(o->R[j + j * kg] > 0) || !isfinite(o->R[j + j * kg]))
      error("internal: the globals' factor must have a positive diagonal");
  return o;
}

/* The views into the scratch, d doubles each: the path part of M (a, o), of
   b, and the level's border (r: P + 2 values, as path_gaussian writes
   them); the factor (il = 1 / diag(L_A), e its subdiagonal, l); on the
   block (P + lev values): ubar, v = u - ubar, z, the whitened gradient gz,
   h = M^{-1} g_u (in log_q: the proposal's mean); gt (the globals'
   gradient) and xi (the noise); then, for each of the (at most
   WHITEN_MAX_GLOBALS) globals the rule moves, M's and b's derivatives in it
   (da, dob, db, dr). lam is lambda. */
typedef struct whiten_at {
  double *a, *o, *b, *r, *il, *e, *l, *ubar, *v, *z, *gz, *h, *gt, *xi;
  double *da[WHITEN_MAX_GLOBALS], *dob[WHITEN_MAX_GLOBALS], *db[WHITEN_MAX_GLOBALS],
         *dr[WHITEN_MAX_GLOBALS];
  double lam;
} whiten_at;

static size_t whiten_scratch_length(int d) {
  return (WHITEN_SHARED + WHITEN_PER_GLOBAL * WHITEN_MAX_GLOBALS) * (size_t) d;
}

static whiten_at whiten_views(double *s, int d) {
  whiten_at m;
  double **shared[WHITEN_SHARED] = {&m.a, &m.o, &m.b, &m.r, &m.il, &m.e, &m.l, &m.ubar, &m.v,
                                    &m.z, &m.gz, &m.h, &m.gt, &m.xi};
  for (int i = 0; i < WHITEN_SHARED; i++) *shared[i] = s + (size_t) i * d;
  s += (size_t) WHITEN_SHARED * d;
  for (int j = 0; j < WHITEN_MAX_GLOBALS; j++) {
    double **per[WHITEN_PER_GLOBAL] = {&m.da[j], &m.dob[j], &m.db[j], &m.dr[j]};
    for (int i = 0; i < WHITEN_PER_GLOBAL; i++)
      *per[i] = s + (size_t) (j * WHITEN_PER_GLOBAL + i) * d;
  }
  m.lam = 0.0;
  return m;
}

/* L_A from A = tridiag(o; a; o), as il = 1 / diag(L_A) and e = its
   subdiagonal: 0 if A is not positive definite. The pivots follow
   p_i = a_i - o_{i-1}^2 / p_{i-1}, one division on the dependency chain;
   the square roots come after, off it. */
static int factor(const double *a, const double *o, double *il, double *e, int P) {
  double piv = a[0];
  il[0] = piv;
  for (int i = 1; i < P; i++) {
    piv = a[i] - o[i - 1] * o[i - 1] / piv;
    il[i] = piv;
  }
  int ok = 1;
  for (int i = 0; i < P; i++) {
    ok &= il[i] > 0 && isfinite(il[i]);
    il[i] = 1.0 / sqrt(il[i]);
  }
  if (!ok) return 0;
  for (int i = 0; i + 1 < P; i++) e[i] = o[i] * il[i];
  e[P - 1] = 0.0;
  return 1;
}

/* x <- L_A^{-1} x and x <- L_A^{-T} x */
static void solve_lower(const double *il, const double *e, double *x, int P) {
  x[0] *= il[0];
  for (int i = 1; i < P; i++) x[i] = (x[i] - e[i - 1] * x[i - 1]) * il[i];
}

static void solve_upper(const double *il, const double *e, double *x, int P) {
  x[P - 1] *= il[P - 1];
  for (int i = P - 2; i >= 0; i--) x[i] = (x[i] - e[i] * x[i + 1]) * il[i];
}

static double dot(const double *x, const double *y, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

/* the block's x <- L^{-1} x and x <- L^{-T} x, L = [L_A 0; l' lambda] */
static void block_solve_lower(const whiten_opts *o, const whiten_at *m, double *x) {
  solve_lower(m->il, m->e, x, o->P);
  if (o->lev) x[o->P] = (x[o->P] - dot(m->l, x, o->P)) / m->lam;
}

static void block_solve_upper(const whiten_opts *o, const whiten_at *m, double *x) {
  const int P = o->P;
  if (o->lev) {
    x[P] /= m->lam;
    for (int i = 0; i < P; i++) x[i] -= m->l[i] * x[P];
  }
  solve_upper(m->il, m->e, x, P);
}

/* log det L = -sum log il (+ log lambda), in blocks of 8 (one log per
   block: the pivots of a positive definite M of this kind stay within a
   few orders of magnitude of 1, so a product of 8 cannot overflow) */
static double log_det_factor(const whiten_opts *o, const whiten_at *m) {
  double s = 0.0;
  for (int i = 0; i < o->P; i += 8) {
    double prod = 1.0;
    const int end = i + 8 < o->P ? i + 8 : o->P;
    for (int j = i; j < end; j++) prod *= m->il[j];
    s -= log(prod);
  }
  return o->lev ? s + log(m->lam) : s;
}

/* M, b, L and ubar at the globals of w; 0 if M is not positive definite.
   The forward solves for l and for ubar share one loop (two independent
   dependency chains side by side). */
static int path_at(const whiten_opts *o, const double *w, whiten_at *m) {
  const int P = o->P;
  o->model->path_gaussian(o->model->data, w, -1, m->a, m->o, m->b, m->r);
  if (!factor(m->a, m->o, m->il, m->e, P)) return 0;
  const double *il = m->il, *e = m->e, *r = m->r, *b = m->b;
  double *y = m->ubar, *l = m->l;
  if (o->lev) {
    l[0] = r[0] * il[0];
    y[0] = b[0] * il[0];
    for (int i = 1; i < P; i++) {
      l[i] = (r[i] - e[i - 1] * l[i - 1]) * il[i];
      y[i] = (b[i] - e[i - 1] * y[i - 1]) * il[i];
    }
    const double lam2 = r[P] - dot(l, l, P);
    if (!(lam2 > 0) || !isfinite(lam2)) return 0;
    m->lam = sqrt(lam2);
    y[P] = (r[P + 1] - dot(l, y, P)) / m->lam;
  } else {
    memcpy(y, b, (size_t) P * sizeof(double));
    solve_lower(il, e, y, P);
  }
  block_solve_upper(o, m, y);
  return 1;
}

/* the block's value in w: the path, then the level */
static double block_value(const whiten_opts *o, const double *w, int i) {
  return i < o->P ? w[o->k + i] : w[0];
}

/* z of w, after path_at(): v = u - ubar, z = L^T v */
static void whiten(const whiten_opts *o, const double *w, whiten_at *m) {
  const int P = o->P;
  for (int i = 0; i < o->B; i++) m->v[i] = block_value(o, w, i) - m->ubar[i];
  for (int i = 0; i < P; i++)
    m->z[i] = m->v[i] / m->il[i] + (i + 1 < P ? m->e[i] * m->v[i + 1] : 0.0);
  if (o->lev) {
    for (int i = 0; i < P; i++) m->z[i] += m->l[i] * m->v[P];
    m->z[P] = m->lam * m->v[P];
  }
}

/* the gradient of U~ at (theta, z) from g = grad U at w, after whiten():
   gt[0..kg) and gz */
static void whitened_gradient(const whiten_opts *o, const double *w, const double *g,
                              double tau, whiten_at *m) {
  const int k = o->k, P = o->P, lev = o->lev, kg = o->kg;
  memcpy(m->gz, g + k, (size_t) P * sizeof(double));
  if (lev) m->gz[P] = g[0];
  block_solve_lower(o, m, m->gz);
  memcpy(m->h, m->gz, (size_t) o->B * sizeof(double));
  block_solve_upper(o, m, m->h);
  const double *il = m->il, *e = m->e, *l = m->l, *ubar = m->ubar, *v = m->v, *h = m->h,
               *gz = m->gz;
  for (int j = 0; j < kg; j++)
    o->model->path_gaussian(o->model->data, w, lev + j, m->da[j], m->dob[j], m->db[j], m->dr[j]);
  /* One pass over the path, every global side by side (their sequential
     recursions are independent chains). The factor's derivative: l_i^2 =
     a_i - e_{i-1}^2, e_i = o_i / l_i, so dl_i (of diag L_A) and de_i (of its
     subdiagonal) follow from dl_{i-1}, de_{i-1}; d log det L_A = sum dl_i /
     l_i; s = h' (db - dM ubar) - gz' (dL^T v), dM and dL^T tridiagonal or
     bidiagonal; with the level, dl_vec = L_A^{-1} (dr - dL_A l) (forward)
     and the dot products it enters. */
  double dl[WHITEN_MAX_GLOBALS], de[WHITEN_MAX_GLOBALS], dlb[WHITEN_MAX_GLOBALS],
         dlog[WHITEN_MAX_GLOBALS], s[WHITEN_MAX_GLOBALS], ldl[WHITEN_MAX_GLOBALS],
         gdl[WHITEN_MAX_GLOBALS], hdr[WHITEN_MAX_GLOBALS], dru[WHITEN_MAX_GLOBALS];
  for (int j = 0; j < kg; j++) {
    dl[j] = 0.5 * m->da[j][0] * il[0];
    de[j] = dlb[j] = dlog[j] = s[j] = ldl[j] = gdl[j] = hdr[j] = dru[j] = 0.0;
  }
  for (int i = 0; i < P; i++) {
    const int more = i + 1 < P;
    for (int j = 0; j < kg; j++) {
      const double *da = m->da[j], *dob = m->dob[j];
      dlog[j] += dl[j] * il[i];
      s[j] += h[i] * (m->db[j][i] - da[i] * ubar[i]) - gz[i] * dl[j] * v[i];
      if (lev) {
        const double dr = m->dr[j][i];
        dlb[j] = (dr - dl[j] * l[i] - (i > 0 ? de[j] * l[i - 1] + e[i - 1] * dlb[j] : 0.0)) * il[i];
        ldl[j] += l[i] * dlb[j];
        gdl[j] += gz[i] * dlb[j];
        hdr[j] += h[i] * dr;
        dru[j] += dr * ubar[i];
      }
      if (more) {
        de[j] = (dob[i] - e[i] * dl[j]) * il[i];
        s[j] -= dob[i] * (h[i + 1] * ubar[i] + h[i] * ubar[i + 1]) + gz[i] * de[j] * v[i + 1];
        dl[j] = (0.5 * da[i + 1] - e[i] * de[j]) * il[i + 1];
      }
    }
  }
  for (int j = 0; j < kg; j++) {
    if (lev) {
      /* the border: dM ubar gains dr mubar (path rows) and dr'xbar + ds mubar
         (the level's row); dlambda = (ds - 2 l'dl_vec) / (2 lambda), and
         dL^T v gains dl_vec v_mu (path rows) and dlambda v_mu (the level's) */
      const double *dr = m->dr[j], mubar = ubar[P], vmu = v[P];
      const double dlam = (dr[P] - 2.0 * ldl[j]) / (2.0 * m->lam);
      s[j] += h[P] * (dr[P + 1] - dru[j] - dr[P] * mubar) - mubar * hdr[j]
              - vmu * (gdl[j] + gz[P] * dlam);
      dlog[j] += dlam / m->lam;
    }
    m->gt[j] = g[lev + j] - tau * dlog[j] + s[j];
  }
}

/* the globals th' = th + eta C gt + sd R xi[0..kg) (th: w[lev..k)), and
   z <- z + eta gz + sd xi[kg..d); no noise when xi is NULL */
static void move(const whiten_opts *o, double *th, whiten_at *m, const double *xi, double eta,
                 double sd) {
  const int kg = o->kg;
  const double *R = o->R;
  double *rtg = m->da[0];              /* free again: R^T gt */
  for (int j = 0; j < kg; j++) {
    double s = 0.0;
    for (int i = j; i < kg; i++) s += R[i + j * kg] * m->gt[i];
    rtg[j] = s;
  }
  for (int i = 0; i < kg; i++) {
    double s = 0.0;
    for (int j = 0; j <= i; j++) s += R[i + j * kg] * (eta * rtg[j] + (xi ? sd * xi[j] : 0.0));
    th[i] += s;
  }
  for (int i = 0; i < o->B; i++) m->z[i] += eta * m->gz[i] + (xi ? sd * xi[kg + i] : 0.0);
}

/* u = ubar(theta) + L(theta)^{-T} z at the globals now in w, into w; 0 if M
   is not positive definite there */
static int unwhiten(const whiten_opts *o, double *w, whiten_at *m) {
  const int k = o->k, P = o->P;
  if (!path_at(o, w, m)) return 0;
  block_solve_upper(o, m, m->z);
  for (int i = 0; i < P; i++) w[k + i] = m->ubar[i] + m->z[i];
  if (o->lev) w[0] = m->ubar[P] + m->z[P];
  return 1;
}

/* one step with the noise xi (d normals, NULL for none) */
static void whiten_move(double *w, const double *g_hat, double eta, double tau, double *scratch,
                        const double *xi, int d, const whiten_opts *o) {
  whiten_at m = whiten_views(scratch, d);
  if (!path_at(o, w, &m)) {
    for (int j = 0; j < d; j++) w[j] = NAN;    /* the driver stops the chain */
    return;
  }
  whiten(o, w, &m);
  whitened_gradient(o, w, g_hat, tau, &m);
  move(o, w + o->lev, &m, xi, eta, tau > 0 ? sqrt(2.0 * eta * tau) : 0.0);
  if (!unwhiten(o, w, &m))
    for (int j = 0; j < d; j++) w[j] = NAN;
}

static void whiten_step(double *w, const double *g_hat, const double *g_bar, double eta,
                        double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_bar;
  whiten_at m = whiten_views(state, d);
  if (tau > 0)
    for (int j = 0; j < d; j++) m.xi[j] = rng_norm(rng);
  whiten_move(w, g_hat, eta, tau, state, tau > 0 ? m.xi : NULL, d, opts);
}

/* The Leimkuhler-Matthews discretisation of the same diffusion
   (Leimkuhler, Matthews and Stoltz 2016): the noise of a step is the mean of
   this step's normals and the last step's, xi = (r_n + r_{n+1}) / 2, which
   the state keeps (d doubles, then a flag that they were drawn). At the same
   cost as Euler's step its invariant law is exact for a Gaussian target (a
   standard normal coordinate's variance is 1 at any step below 2, Euler's
   1 / (1 - eta / 2)) and its bias in averages is O(eta^2) rather than
   O(eta), so the whitened coordinates, close to Gaussian, take steps
   several times larger for the same accuracy (bench/sv.R). */
static size_t whiten_lm_state_length(int d) {
  return (size_t) d + 1;
}

static void whiten_lm_init(double *state, const double *w, int d, const void *opts) {
  (void) w;
  (void) opts;
  for (int j = 0; j <= d; j++) state[j] = 0.0;
}

static void whiten_lm_step(double *w, const double *g_hat, const double *g_bar, double eta,
                           double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_bar;
  double *prev = state, *scratch = state + d + 1;
  whiten_at m = whiten_views(scratch, d);
  if (tau > 0) lm_normals(prev, m.xi, rng, d);
  /* the mean of two normals has sd 1/sqrt(2): the noise is sqrt(2 eta tau) xi */
  whiten_move(w, g_hat, eta, tau, scratch, tau > 0 ? m.xi : NULL, d, opts);
}

/* log q(to | from) in the original coordinates, up to a constant:
   -|residual in (theta, z)|^2 / (4 eta tau) (the globals' part in C^{-1})
   + log det L(theta_to) */
static double whiten_log_q(const double *to, const double *from, const double *g_from,
                           double eta, double tau, double *scratch, int d, const void *opts) {
  const whiten_opts *o = opts;
  const int kg = o->kg, B = o->B, lev = o->lev;
  whiten_at m = whiten_views(scratch, d);
  if (!path_at(o, from, &m)) return -INFINITY;
  whiten(o, from, &m);
  whitened_gradient(o, from, g_from, tau, &m);
  /* the proposal's mean: the globals in mean[0..kg), z in mean[kg..d) */
  double *mean = m.h;                  /* free again */
  memcpy(mean, from + lev, (size_t) kg * sizeof(double));
  move(o, mean, &m, NULL, eta, 0.0);
  memcpy(mean + kg, m.z, (size_t) B * sizeof(double));
  if (!path_at(o, to, &m)) return -INFINITY;
  whiten(o, to, &m);
  double quad = 0.0, *r = m.gt;
  for (int i = 0; i < kg; i++) {       /* R^{-1} (theta_to - mean), forward */
    double s = to[lev + i] - mean[i];
    for (int j = 0; j < i; j++) s -= o->R[i + j * kg] * r[j];
    r[i] = s / o->R[i + i * kg];
    quad += r[i] * r[i];
  }
  for (int i = 0; i < B; i++) {
    const double v = m.z[i] - mean[kg + i];
    quad += v * v;
  }
  return -quad / (4.0 * eta * tau) + log_det_factor(o, &m);
}

const sgld_update update_whiten = {
  .name = "whiten", .build_model = whiten_build, .scratch_length = whiten_scratch_length,
  .init = update_no_init, .step = whiten_step, .log_q = whiten_log_q
};

const sgld_update update_whiten_lm = {
  .name = "whiten_lm", .build_model = whiten_build, .state_length = whiten_lm_state_length,
  .scratch_length = whiten_scratch_length, .init = whiten_lm_init, .step = whiten_lm_step
};

/* For R (R/whiten.R, and the tests): at w on the sampler's scale, its
   whitened coordinates (theta, z) (the kg globals w[lev..k), then the
   block's z), log det L, U(w), and the gradient of U~ = U - tau log det L in
   (theta, z), from the full-data gradient of U. With `inverse` TRUE, w is
   read as (theta, z) and only its image w is returned. */
SEXP sgld_whiten_eval(SEXP model_spec, SEXP w_, SEXP tau_, SEXP inverse_) {
  sgld_model model = find_model(model_spec);
  check_path_model(&model);
  const int d = model.d;
  if (TYPEOF(w_) != REALSXP || XLENGTH(w_) != d)
    error("internal: 'w' must be a double vector of length %d", d);
  const double tau = asReal(tau_);
  whiten_opts o = whiten_layout(&model, NULL);
  whiten_at m = whiten_views((double *) R_alloc(whiten_scratch_length(d), sizeof(double)), d);
  SEXP w_out = PROTECT(allocVector(REALSXP, d));
  double *w = REAL(w_out);
  if (asLogical(inverse_) == TRUE) {
    memcpy(w + o.lev, REAL(w_), (size_t) o.kg * sizeof(double));
    if (o.lev) w[0] = 0.0;             /* not read: the block's M and b do not depend on it */
    memcpy(m.z, REAL(w_) + o.kg, (size_t) o.B * sizeof(double));
    if (!unwhiten(&o, w, &m)) error("the path's precision is not positive definite there");
    UNPROTECT(1);
    return w_out;
  }
  memcpy(w, REAL(w_), (size_t) d * sizeof(double));
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
  SET_VECTOR_ELT(out, 1, ScalarReal(log_det_factor(&o, &m)));
  SET_VECTOR_ELT(out, 2, ScalarReal(U));
  SEXP gr = allocVector(REALSXP, d);
  SET_VECTOR_ELT(out, 3, gr);
  memcpy(REAL(tz), w + o.lev, (size_t) o.kg * sizeof(double));
  memcpy(REAL(tz) + o.kg, m.z, (size_t) o.B * sizeof(double));
  memcpy(REAL(gr), m.gt, (size_t) o.kg * sizeof(double));
  memcpy(REAL(gr) + o.kg, m.gz, (size_t) o.B * sizeof(double));
  UNPROTECT(2);
  return out;
}
