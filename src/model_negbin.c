/*
 * Bayesian negative-binomial regression (NB2) with the log link:
 *   y_i | beta, phi ~ NB(mean mu_i = exp(eta_i), size phi),
 *   Var(y_i) = mu_i + mu_i^2 / phi,  eta_i = x_i' beta + o_i,
 * with an optional offset o_i, optional case weights c_i, normal priors on
 * the coefficients (the intercept's optionally on centred predictors,
 * prior_centred.h) and either rstanarm's exponential prior of rate r on
 * phi, or a half-normal prior of scale s on the overdispersion 1/phi, which
 * puts its mode at the Poisson limit 1/phi = 0 (Simpson et al. 2017,
 * penalised-complexity priors).
 *
 * The sampler's parameters are (beta, log phi). Row i's log likelihood is
 *   c_i [lgamma(y_i + phi) - lgamma(phi) - log y_i!
 *        + phi (log phi - log(phi + mu_i)) + y_i (eta_i - log(phi + mu_i))],
 * with log(phi + mu_i) taken as log(e^u + e^eta_i) (u = log phi) without
 * overflow. Its derivatives, with r_i = (y_i + phi) / (phi + mu_i):
 *   d/d eta_i = y_i - r_i mu_i,
 *   d/d u = phi [psi(y_i + phi) - psi(phi) + log phi - log(phi + mu_i) + 1 - r_i].
 */
#include <limits.h>
#include <string.h>
#include "count_rows.h"

typedef struct negbin_data {
  count_rows rows;            /* design, counts, log y!, offsets, weights, prior */
  int table_len;              /* 1 + the largest count, at most table_max (digamma_table()) */
  double aux_scale;           /* s: 1/phi ~ half-normal(0, s); or 0 and */
  double aux_rate;            /* r: phi ~ exponential(r) */
  /* what negbin_loglik_points() sums once a point rather than once a row:
     the case weights of the rows of each count below table_len (count_weight),
     how many counts have rows (distinct), the rows of larger counts (big,
     n_big), and the weighted sums of log y! and of the weights */
  double *count_weight;
  int distinct;
  R_xlen_t *big, n_big;
  double log_fact_sum, weight_sum;
} negbin_data;

/* the per-draw quantities of the dispersion */
typedef struct dispersion {
  double u, phi, lgamma_phi, digamma_phi, inv_phi;
} dispersion;

static inline dispersion dispersion_of(double u, int derivatives) {
  const double phi = exp(u);
  return (dispersion) {u, phi, lgammafn(phi), derivatives ? digamma(phi) : 0.0, exp(-u)};
}

static inline double eta_of(const negbin_data *L, R_xlen_t i, const double *w) {
  return rows_dot(&L->rows.X, i, w, L->rows.offset ? L->rows.offset[i] : 0.0);
}

static inline double y_of(const negbin_data *L, R_xlen_t i) {
  return rows_y(&L->rows.X, i);
}

static inline double wt_of(const negbin_data *L, R_xlen_t i) {
  return L->rows.wt ? L->rows.wt[i] : 1.0;
}

/* log(e^a + e^b) without overflow, for finite a and b; written here rather
   than taken from R's logspace_add() because it runs inside the threads of
   a parallel gradient, where no R API may be reached (tools/parallel-calls.R) */
static inline double log_sum_exp(double a, double b) {
  return fmax(a, b) + log1p(exp(-fabs(a - b)));
}

/* row i's log likelihood at linear predictor eta, without its case weight */
static inline double nb_loglik(const negbin_data *L, R_xlen_t i, double eta, const dispersion *D) {
  const double y = y_of(L, i), lse = log_sum_exp(D->u, eta);
  return lgammafn(y + D->phi) - D->lgamma_phi - L->rows.log_fact[i] + D->phi * (D->u - lse)
         + y * (eta - lse);
}

/* psi(y + phi) - psi(phi) for a count y: the sum of 1 / (phi + k) over
   k < y below digamma_sum_max (y is a whole number: model_negbin() checks),
   where it costs less than digamma(), which took most of a gradient's time
   (a pass over NMES1988's 4,406 rows: 0.71 ms, against 0.13 ms for the
   Poisson model; digamma() alone 62 ns a call, the sum over 10 terms 13 ns:
   bench/negbin-defaults.md) */
#define digamma_sum_max 32.0
static inline double digamma_step(double y, const dispersion *D) {
  if (y >= digamma_sum_max) return digamma(y + D->phi) - D->digamma_phi;
  double s = 0.0;
  for (int k = 0; k < (int) y; k++) s += 1.0 / (D->phi + k);
  return s;
}

/* The same steps for every count below table_len at once, T[k] = psi(k +
   phi) - psi(phi) = T[k - 1] + 1 / (phi + k - 1), into `work`: phi is one
   number for the whole batch, so where the batch's rows outnumber half the
   counts the table (one division per count) costs less than a sum per row
   (one division per unit of each row's count: quine's mean count is 16,
   NMES1988's largest 89). NULL where it would not pay. The sums are the
   same terms in the same order as digamma_step()'s, so they agree with it
   to the last bit below digamma_sum_max, and to rounding above it. */
#define table_max 4096
static inline const double *digamma_table(const negbin_data *L, const dispersion *D, int m,
                                          double *work) {
  if (L->table_len < 2 || L->table_len > 2 * m) return NULL;
  work[0] = 0.0;
  for (int k = 1; k < L->table_len; k++) work[k] = work[k - 1] + 1.0 / (D->phi + (k - 1));
  return work;
}

static inline double digamma_step_from(double y, const dispersion *D, const double *T,
                                       int table_len) {
  return T && y < table_len ? T[(int) y] : digamma_step(y, D);
}

/* its derivatives in eta (*c) and in u (*du), without the case weight, T a
   digamma_table() or NULL */
static inline double nb_slopes(const negbin_data *L, R_xlen_t i, double eta, const dispersion *D,
                               const double *T, double *c, double *du) {
  const double y = y_of(L, i);
  /* log(phi + mu) = top + log1p(t), t = e^-|u - eta|: one exp, one log1p;
     mu / (phi + mu) and 1 / (phi + mu) = e^-top / (1 + t) from t without
     overflow, e^-top being 1 / phi where phi is on top and t / phi where
     mu is (e^-eta = e^-u e^(u - eta)) */
  const int mu_top = eta >= D->u;
  const double t = exp(-fabs(D->u - eta)), lse = (mu_top ? eta : D->u) + log1p(t);
  const double inv = 1.0 / (1.0 + t);
  const double share_mu = (mu_top ? 1.0 : t) * inv;                  /* mu / (phi + mu) */
  const double r = (y + D->phi) * (mu_top ? t : 1.0) * D->inv_phi * inv;  /* (y + phi) / (phi + mu) */
  *c = y - (y + D->phi) * share_mu;
  *du = D->phi * (digamma_step_from(y, D, T, L->table_len) + D->u - lse + 1.0 - r);
  return lse;
}

/* lgamma(k + phi) - lgamma(phi) for every count k below table_len, the sum
   of log(phi + j) over j < k, into `work` (past the digamma table): one log
   per count for the whole batch instead of an lgammafn() per row, as for
   the digamma steps, and only where the batch's rows outnumber half the
   counts. NULL where it would not pay. */
static inline const double *lgamma_table(const negbin_data *L, const dispersion *D, int m,
                                         double *work) {
  if (L->table_len < 2 || L->table_len > 2 * m) return NULL;
  work[0] = 0.0;
  for (int k = 1; k < L->table_len; k++) work[k] = work[k - 1] + log(D->phi + (k - 1));
  return work;
}

/* row i's log likelihood (without its case weight) from its log(phi + mu) */
static inline double nb_loglik_from(const negbin_data *L, R_xlen_t i, double eta, double lse,
                                    const dispersion *D, const double *LT) {
  const double y = y_of(L, i);
  const double lg = LT && y < L->table_len ? LT[(int) y] : lgammafn(y + D->phi) - D->lgamma_phi;
  return lg - L->rows.log_fact[i] + D->phi * (D->u - lse) + y * (eta - lse);
}

/* g += the likelihood gradient summed over the rows idx[0..m), or with `at`
   (control variates, negbin_cv_fill()) its differences from the gradient at
   the control variates' point, whose slopes `at` holds per row: one pass,
   one set of transcendental functions per row instead of two. Every sum
   as rows.h takes it, so that dense and sparse storage give the same bits
   (test-sparse-design.R; dense.h's kernels, whose partial sums would not). */
static inline void negbin_rows(const negbin_data *L, const double *w, const R_xlen_t *idx,
                               int m, double *g, double *work, const double *at, double *ll) {
  const int p = L->rows.p;
  const dispersion D = dispersion_of(w[p], 1);
  const double *T = digamma_table(L, &D, m, work);
  /* the log likelihood too (ll not NULL): its lgamma steps tabled after T */
  const double *LT = ll ? lgamma_table(L, &D, m, work + table_max) : NULL;
  double G = 0.0, sum_ll = 0.0;
  int k = 0;
  if (L->rows.X.z) {
    /* dense rows four at a time: their dot products side by side, each the
       same sum in the same order as rows_dot()'s (the same bits), so the
       four chains of additions overlap; then row by row as below */
    const R_xlen_t stride = p + 1;
    for (; k + 4 <= m; k += 4) {
      const R_xlen_t i0 = idx[k], i1 = idx[k + 1], i2 = idx[k + 2], i3 = idx[k + 3];
      const double *z0 = L->rows.X.z + i0 * stride, *z1 = L->rows.X.z + i1 * stride,
        *z2 = L->rows.X.z + i2 * stride, *z3 = L->rows.X.z + i3 * stride;
      double eta[4] = {L->rows.offset ? L->rows.offset[i0] : 0.0, L->rows.offset ? L->rows.offset[i1] : 0.0,
                       L->rows.offset ? L->rows.offset[i2] : 0.0, L->rows.offset ? L->rows.offset[i3] : 0.0};
      double e0 = eta[0], e1 = eta[1], e2 = eta[2], e3 = eta[3];
      for (int j = 0; j < p; j++) {
        e0 += z0[j] * w[j];
        e1 += z1[j] * w[j];
        e2 += z2[j] * w[j];
        e3 += z3[j] * w[j];
      }
      eta[0] = e0;
      eta[1] = e1;
      eta[2] = e2;
      eta[3] = e3;
      for (int b = 0; b < 4; b++) {
        const R_xlen_t i = idx[k + b];
        const double c_i = wt_of(L, i);
        double s, du;
        const double lse = nb_slopes(L, i, eta[b], &D, T, &s, &du);
        if (ll) sum_ll += c_i * nb_loglik_from(L, i, eta[b], lse, &D, LT);
        rows_axpy(&L->rows.X, i, c_i * s - (at ? at[2 * i] : 0.0), g);
        G += c_i * du - (at ? at[2 * i + 1] : 0.0);
      }
    }
  }
  for (; k < m; k++) {
    const R_xlen_t i = idx[k];
    const double c_i = wt_of(L, i);
    double s, du;
    const double eta = eta_of(L, i, w);
    const double lse = nb_slopes(L, i, eta, &D, T, &s, &du);
    if (ll) sum_ll += c_i * nb_loglik_from(L, i, eta, lse, &D, LT);
    rows_axpy(&L->rows.X, i, c_i * s - (at ? at[2 * i] : 0.0), g);
    G += c_i * du - (at ? at[2 * i + 1] : 0.0);
  }
  g[p] += G;
  if (ll) *ll = sum_ll;
}

static void negbin_grad_loglik(const void *data, const double *w, const R_xlen_t *idx,
                               int m, double *g, double *work) {
  negbin_rows(data, w, idx, m, g, work, NULL, NULL);
}

/* The log likelihood and its gradient in one pass (sgld.h: loglik_grad),
   for mala() and its Hamiltonian trajectories, which need both: each row's
   linear predictor and log(phi + mu) once, and the lgamma steps from a
   table. Two passes (the gradient, then loglik() with an lgammafn() per
   row) made a step of mala() on MASS::quine (146 rows) 3.4 times a
   gradient's cost (bench/hmc.md). */
static double negbin_loglik_grad(const void *data, const double *w, const R_xlen_t *idx,
                                 R_xlen_t m, double *g, double *work) {
  const negbin_data *L = data;
  double ll = 0.0;
  if (idx) {   /* the callers' rows number at most INT_MAX (run.c: full_data_items()) */
    negbin_rows(L, w, idx, (int) m, g, work, NULL, &ll);
    return ll;
  }
  /* every row, in chunks whose indices fit on the stack */
  enum { chunk = 256 };
  R_xlen_t rows[chunk];
  for (R_xlen_t from = 0; from < L->rows.n; from += chunk) {
    const int len = (int) (L->rows.n - from < chunk ? L->rows.n - from : chunk);
    for (int k = 0; k < len; k++) rows[k] = from + k;
    double part;
    negbin_rows(L, w, rows, len, g, work, NULL, &part);
    ll += part;
  }
  return ll;
}

/* Control variates (sgld.h: cv_width): each row's slopes at w0, case weight
   included, two numbers a row; then the batch's gradient differences from
   them (gradient.c) */
static void negbin_cv_fill(const void *data, const double *w0, double *at) {
  const negbin_data *L = data;
  const dispersion D = dispersion_of(w0[L->rows.p], 1);
  for (R_xlen_t i = 0; i < L->rows.n; i++) {
    double s, du;
    nb_slopes(L, i, eta_of(L, i, w0), &D, NULL, &s, &du);
    at[2 * i] = wt_of(L, i) * s;
    at[2 * i + 1] = wt_of(L, i) * du;
  }
}

static void negbin_grad_loglik_diff(const void *data, const double *at, const double *w,
                                    const R_xlen_t *idx, int m, double *g, double *work) {
  negbin_rows(data, w, idx, m, g, work, at, NULL);
}

/* The log likelihood alone (log_posterior(), the mode's search, and the
   batched evaluations of independence Metropolis-Hastings, R/auto-imh.R):
   its lgamma steps from the table loglik_grad() uses where the rows
   outnumber half the counts, an lgammafn() a row otherwise (on
   MASS::quine, 146 rows, 21 -> 6 us a pass) */
static double negbin_loglik(const void *data, const double *w, const R_xlen_t *idx,
                            R_xlen_t m, double *work) {
  const negbin_data *L = data;
  const dispersion D = dispersion_of(w[L->rows.p], 0);
  if (!idx) m = L->rows.n;
  const double *LT = m <= INT_MAX ? lgamma_table(L, &D, (int) m, work) : NULL;
  double ll = 0.0;
  for (R_xlen_t k = 0; k < m; k++) {
    const R_xlen_t i = idx ? idx[k] : k;
    const double eta = eta_of(L, i, w);
    ll += wt_of(L, i) * nb_loglik_from(L, i, eta, log_sum_exp(D.u, eta), &D, LT);
  }
  return ll;
}

/* The log likelihood at B points at once (sgld.h: loglik_points), for the
   batches of independence Metropolis-Hastings. Row i's term is
     c_i [lgamma(y_i + phi) - lgamma(phi) - log y_i! + phi u + y_i eta_i
          - (phi + y_i) log(phi + mu_i)],
   of which the lgamma steps depend on the row through its count only: they
   are summed over the counts' case weights (one log per count below
   table_len, or an lgammafn() per distinct count where the counts are
   sparse), log y! and phi u once for all rows. What is left a row and point
   is the linear predictor, one exp and one log1p: the linear predictors of
   the B points side by side, the row read once (each the same sum in the
   same order as rows_dot()'s). */
static void negbin_loglik_points(const void *data, const double *W, int B, double *out,
                                 double *work) {
  const negbin_data *L = data;
  const int p = L->rows.p, d = p + 1;
  (void) work;
  double Wt[loglik_points_max * 64], u[loglik_points_max], phi[loglik_points_max],
    acc[loglik_points_max];
  const int packed = L->rows.X.z && p <= 64;
  for (int b = 0; b < B; b++) {
    const double *w = W + (R_xlen_t) d * b;
    const dispersion D = dispersion_of(w[p], 0);
    u[b] = D.u;
    phi[b] = D.phi;
    acc[b] = 0.0;
    /* the lgamma steps of every row, by count */
    double lg = 0.0;
    if (L->table_len <= 8 * L->distinct && D.phi + L->table_len < 1e30) {
      /* the steps' logs as logs of products of up to eight factors (each
         below 1e30: no overflow), taken where a count has rows: a log per
         distinct count rather than per count (warpbreaks: 71 counts; a
         proposal of the batch 1.59 -> 1.45 us, 54 rows) */
      double step = 0.0, product = 1.0;
      int factors = 0;
      for (int k = 1; k < L->table_len; k++) {
        product *= D.phi + (k - 1);
        const int used = L->count_weight[k] != 0.0;
        if (used || ++factors == 8) {
          step += log(product);
          product = 1.0;
          factors = 0;
        }
        if (used) lg += L->count_weight[k] * step;
      }
    } else if (L->table_len <= 8 * L->distinct) {
      double step = 0.0;
      for (int k = 1; k < L->table_len; k++) {
        step += log(D.phi + (k - 1));
        lg += L->count_weight[k] * step;
      }
    } else {
      for (int k = 1; k < L->table_len; k++)
        if (L->count_weight[k] != 0.0) lg += L->count_weight[k] * (lgammafn(k + D.phi) - D.lgamma_phi);
    }
    for (R_xlen_t q = 0; q < L->n_big; q++)
      lg += wt_of(L, L->big[q]) * (lgammafn(y_of(L, L->big[q]) + D.phi) - D.lgamma_phi);
    out[b] = lg - L->log_fact_sum + D.phi * D.u * L->weight_sum;
  }
  if (packed) {   /* the points' coefficients side by side, coefficient by coefficient */
    for (int j = 0; j < p; j++)
      for (int b = 0; b < loglik_points_max; b++)
        Wt[j * loglik_points_max + b] = b < B ? W[j + (R_xlen_t) d * b] : 0.0;
  }
  for (R_xlen_t i = 0; i < L->rows.n; i++) {
    const double o = L->rows.offset ? L->rows.offset[i] : 0.0, y = y_of(L, i), c = wt_of(L, i);
    double eta[loglik_points_max];
    if (packed) {
      const double *zi = L->rows.X.z + i * (R_xlen_t) d;
      for (int b = 0; b < loglik_points_max; b++) eta[b] = o;
      for (int j = 0; j < p; j++) {
        const double zij = zi[j];
        const double *wj = Wt + j * loglik_points_max;
        for (int b = 0; b < loglik_points_max; b++) eta[b] += zij * wj[b];
      }
    } else {
      for (int b = 0; b < B; b++) eta[b] = rows_dot(&L->rows.X, i, W + (R_xlen_t) d * b, o);
    }
    /* log(phi + mu) as one exp and one log (log1p(), which log_sum_exp()
       takes, cost more: 23 -> 20.5 ns a row and point on DoctorVisits'
       5,190 rows), overflow-free below eta = 700 (|u| < 700: in_domain) */
    for (int b = 0; b < B; b++) {
      const double lse = eta[b] < 700.0 ? log(phi[b] + exp(eta[b])) : log_sum_exp(u[b], eta[b]);
      acc[b] += c * (y * eta[b] - (phi[b] + y) * lse);
    }
  }
  for (int b = 0; b < B; b++) out[b] += acc[b];
}

static void negbin_loglik_rows(const void *data, const double *w, R_xlen_t from,
                               R_xlen_t to, double *out) {
  const negbin_data *L = data;
  const dispersion D = dispersion_of(w[L->rows.p], 0);
  for (R_xlen_t i = from; i < to; i++)
    out[i - from] = wt_of(L, i) * nb_loglik(L, i, eta_of(L, i, w), &D);
}

/* psi'(y + phi) - psi'(phi) = -sum over k < y of 1 / (phi + k)^2, summed
   below digamma_sum_max as digamma_step() (no cancellation at large phi) */
static inline double trigamma_step(double y, const dispersion *D) {
  if (y >= digamma_sum_max) return trigamma(y + D->phi) - trigamma(D->phi);
  double s = 0.0;
  for (int k = 0; k < (int) y; k++) s -= 1.0 / ((D->phi + k) * (D->phi + k));
  return s;
}

/* Newton's pieces (sgld.h: hess_loglik), in (beta, u = log phi). Per row,
   with p = mu / (phi + mu) and the slopes c, du of nb_slopes():
     d2/deta2   = -(phi + y) p (1 - p),
     d2/deta du = -phi p + (phi + y) p (1 - p),
     d2/du2     = du + phi^2 [psi'(y + phi) - psi'(phi)] + phi p - (1 - p)^2 (mu - y),
   the last from d2/dphi2 = psi'(y + phi) - psi'(phi) + mu / (phi (phi + mu))
   - (mu - y) / (phi + mu)^2 (checked against differences of the gradient in
   test-mode.R). Into H's upper triangle, then mirrored. */
static double negbin_hess_loglik(const void *data, const double *w, const R_xlen_t *idx,
                                 R_xlen_t m, double *g, double *H, double *work) {
  const negbin_data *L = data;
  const int p = L->rows.p, d = p + 1;
  const dispersion D = dispersion_of(w[p], 1);
  if (!idx) m = L->rows.n;
  const int mi = m <= INT_MAX ? (int) m : INT_MAX;
  const double *T = digamma_table(L, &D, mi, work);
  const double *LT = lgamma_table(L, &D, mi, work + table_max);
  double *Hu = H + (R_xlen_t) d * p;   /* column u: the cross terms, then H[u, u] */
  double ll = 0.0, G = 0.0, Huu = 0.0;
  for (R_xlen_t k = 0; k < m; k++) {
    const R_xlen_t i = idx ? idx[k] : k;
    const double c_i = wt_of(L, i), y = y_of(L, i), eta = eta_of(L, i, w);
    double s, du;
    const double lse = nb_slopes(L, i, eta, &D, T, &s, &du);
    const double share = exp(eta - lse), rest = exp(D.u - lse), mu_minus_y = exp(eta) - y;
    ll += c_i * nb_loglik_from(L, i, eta, lse, &D, LT);
    rows_axpy(&L->rows.X, i, c_i * s, g);
    G += c_i * du;
    const double h_ee = -(D.phi + y) * share * rest;
    const double h_eu = -D.phi * share + (D.phi + y) * share * rest;
    Huu += c_i * (du + D.phi * D.phi * trigamma_step(y, &D) + D.phi * share -
                  rest * rest * mu_minus_y);
    if (L->rows.X.z) hess_row(H, d, p, L->rows.X.z + i * (R_xlen_t) (p + 1), c_i * h_ee);
    else {
      const R_xlen_t lo = (R_xlen_t) L->rows.X.start[i], hi = (R_xlen_t) L->rows.X.start[i + 1];
      hess_sparse_row(H, d, L->rows.X.col + lo, L->rows.X.val ? L->rows.X.val + lo : NULL,
                      hi - lo, c_i * h_ee);
    }
    rows_axpy(&L->rows.X, i, c_i * h_eu, Hu);
  }
  g[p] += G;
  Hu[p] += Huu;
  hess_mirror(H, d);
  return ll;
}

static int negbin_hess_logprior(const void *data, const double *w, double *H) {
  const negbin_data *L = data;
  const int p = L->rows.p, d = p + 1;
  coef_prior_hess(&L->rows.prior, H, d);
  double *Huu = H + (R_xlen_t) d * p + p;
  if (L->aux_scale == 0.0) *Huu -= L->aux_rate * exp(w[p]);
  else {
    const double a = exp(-w[p]) / L->aux_scale;
    *Huu -= 2.0 * a * a;
  }
  return 1;
}

/* Normal coefficients; for u = log phi, either the half-normal density of
   a = 1/phi = e^-u times the Jacobian |da/du| = a:
   log 2 - log s - log sqrt(2 pi) - a^2 / (2 s^2) - u, whose derivative in u
   is a^2 / s^2 - 1; or the exponential density of phi = e^u times its
   Jacobian phi: log r - r phi + u, whose derivative is 1 - r phi. */
static double negbin_logprior(const void *data, const double *w) {
  const negbin_data *L = data;
  const double lp = coef_prior_log(&L->rows.prior, w), u = w[L->rows.p];
  if (L->aux_scale == 0.0) return lp + log(L->aux_rate) - L->aux_rate * exp(u) + u;
  const double a = exp(-u) / L->aux_scale;
  return lp + M_LN2 - log(L->aux_scale) - M_LN_SQRT_2PI - 0.5 * a * a - u;
}

static void negbin_grad_logprior(const void *data, const double *w, double *g) {
  const negbin_data *L = data;
  coef_prior_grad(&L->rows.prior, w, g);
  if (L->aux_scale == 0.0) {
    g[L->rows.p] += 1.0 - L->aux_rate * exp(w[L->rows.p]);
    return;
  }
  const double a = exp(-w[L->rows.p]) / L->aux_scale;
  g[L->rows.p] += a * a - 1.0;
}

/* No logpost_coordinate (sgld.h) for coordinate updates: beside them the
   other parameters take the step of a near-Gaussian posterior, and the
   dispersion's often is not (its Laplace sd was 0.6 of the posterior's in a
   simulation with two zero-count levels, n = 2000), which the conditional
   residuals do not see: at that step its sd came out 13-19% narrow in four
   seeds (log phi, against 400,000 MALA draws). */

/* phi = e^u must be a positive finite number whose lgamma is finite */
static int negbin_in_domain(const void *data, const double *w) {
  const negbin_data *L = data;
  return fabs(w[L->rows.p]) < 700.0;
}

const char *const model_negbin_metrics[] = {"test_loglik", NULL};

static void negbin_metrics(const void *data, const double *w, double *out, double *work) {
  const negbin_data *L = data;
  out[0] = negbin_loglik(data, w, NULL, 0, work) / (double) L->rows.n;
}

/* Local reparameterisation (sgld.h: grad_loglik_local): each row's linear
   predictor drawn from N(a_i, v_i), its distribution under q = N(mu,
   diag(sd^2)), a_i = x_i' mu + o_i and v_i = sum_j x_ij^2 sd_j^2; u = log phi
   is no weight, so it is drawn once for the batch, u = mu_p + sd_p e_u. */
static double negbin_grad_loglik_local(const void *data, const double *mu, const double *sd,
                                       const R_xlen_t *idx, int m, sgld_rng *rng,
                                       double *g_mu, double *g_sd, double *work) {
  (void) work;
  const negbin_data *L = data;
  const int p = L->rows.p;
  const double e_u = rng_norm(rng);
  const dispersion D = dispersion_of(mu[p] + sd[p] * e_u, 1);
  double ll = 0.0, G = 0.0;
  for (int k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    const double c_i = wt_of(L, i);
    double a, v;
    rows_moments(&L->rows.X, i, mu, sd, L->rows.offset ? L->rows.offset[i] : 0.0, &a, &v);
    const double s = sqrt(v), e = rng_norm(rng), eta = a + s * e;
    double c, du;
    nb_slopes(L, i, eta, &D, NULL, &c, &du);
    c *= c_i;
    const double f = s > 0 ? c * e / s : 0.0;
    rows_add_gradients(&L->rows.X, i, c, f, sd, g_mu, g_sd);
    G += c_i * du;
    ll += c_i * nb_loglik(L, i, eta, &D);
  }
  g_mu[p] += G;
  g_sd[p] += G * e_u;
  return ll;
}

sgld_model model_negbin_build(SEXP spec) {
  negbin_data *L = (negbin_data *) R_alloc(1, sizeof(negbin_data));
  count_rows_read(&L->rows, spec, "negative-binomial");
  double y_max = 0.0;
  for (R_xlen_t i = 0; i < L->rows.n; i++) y_max = fmax(y_max, y_of(L, i));
  L->table_len = (int) fmin(y_max + 1.0, table_max);
  L->count_weight = (double *) R_alloc((size_t) L->table_len, sizeof(double));
  memset(L->count_weight, 0, (size_t) L->table_len * sizeof(double));
  L->n_big = 0;
  L->log_fact_sum = L->weight_sum = 0.0;
  for (R_xlen_t i = 0; i < L->rows.n; i++) {
    const double y = y_of(L, i), c = wt_of(L, i);
    if (y < L->table_len) L->count_weight[(int) y] += c;
    else L->n_big++;
    L->log_fact_sum += c * L->rows.log_fact[i];
    L->weight_sum += c;
  }
  L->big = (R_xlen_t *) R_alloc((size_t) L->n_big + 1, sizeof(R_xlen_t));
  for (R_xlen_t i = 0, q = 0; i < L->rows.n; i++) if (y_of(L, i) >= L->table_len) L->big[q++] = i;
  L->distinct = 0;
  for (int k = 0; k < L->table_len; k++) L->distinct += L->count_weight[k] != 0.0;
  L->aux_scale = list_real(spec, "prior_aux_scale");
  /* a model saved before the exponential prior existed has the half-normal */
  L->aux_rate = list_optional(spec, "prior_aux_rate") == R_NilValue
                ? 0.0 : list_real(spec, "prior_aux_rate");
  if (!(L->aux_scale > 0 || (L->aux_scale == 0.0 && L->aux_rate > 0)))
    error("internal: 'prior_aux_scale' or 'prior_aux_rate' must be positive");

  return (sgld_model) {
    .d = L->rows.p + 1,
    .n = L->rows.n,
    .data = L,
    .grad_loglik = negbin_grad_loglik,
    .loglik = negbin_loglik,
    .loglik_rows = negbin_loglik_rows,
    .loglik_points = negbin_loglik_points,
    .grad_logprior = negbin_grad_logprior,
    .logprior = negbin_logprior,
    .in_domain = negbin_in_domain,
    .metrics = negbin_metrics,
    .grad_loglik_local = negbin_grad_loglik_local,
    .loglik_grad = negbin_loglik_grad,
    .hess_loglik = negbin_hess_loglik,
    .hess_logprior = negbin_hess_logprior,
    /* the digamma and lgamma tables; not the data's own table_len: a
       held-out set shares the scratch */
    .work_size = 2 * table_max,
    .cv_width = 2,
    .cv_fill = negbin_cv_fill,
    .grad_loglik_diff = negbin_grad_loglik_diff
  };
}
