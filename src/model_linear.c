/*
 * Bayesian normal linear regression, sampled in w = (beta, gamma = log sigma^2).
 *
 *   y_i | beta, sigma^2 ~ N(x_i' beta, sigma^2), optionally with case weights c_i
 *   (observation i counts c_i times: its log likelihood is multiplied by c_i)
 * and one of two priors:
 *   normal-inverse-gamma (conjugate): beta | sigma^2 ~ N(mu, sigma^2 V),
 *     sigma^2 ~ IG(a, b);
 *   rstanarm's: normal priors on beta, the intercept's optionally on centred
 *     predictors (prior_centred.h), and sigma ~ exponential(r).
 *
 * The data are one (p + 1) x n matrix whose column i is (x_i, y_i), so a
 * minibatch reads one contiguous block per observation.
 */
#include <R.h>
#include <Rmath.h>
#include "sgld.h"
#include "dense.h"
#include "rows.h"
#include "prior_centred.h"

typedef struct linear_data {
  int p;                 /* regression coefficients */
  R_xlen_t n;
  const double *z;       /* (p + 1) x n: covariates then response, per observation */
  design_rows X;         /* the same rows, or sparse ones (z NULL; rows.h) */
  const double *wt;      /* case weights, one per observation; NULL when all are 1 */
  const double *mu;      /* prior mean of beta */
  const double *vinv;    /* V^{-1}: p x p, or its diagonal when vinv_diag */
  int vinv_diag;
  double a, b;           /* inverse-gamma shape and rate */
  double prior_const;    /* normalising constant of the prior in (beta, gamma) */
  int nig;               /* 1: the prior above; 0: rstanarm's, in coef and sigma_rate */
  coef_prior coef;
  double sigma_rate;     /* r: sigma ~ exponential(r) */
  int wide;              /* the dense kernels' AVX2 build (dense.h: dense_wide()) */
  int ahead;             /* rows prefetched ahead (dense.h: dense_ahead()) */
} linear_data;

/* The batch sums of residual times covariates (into xr) and of squared
   residuals (returned). For a handful of coefficients, one pass with the sums in
   registers (inlined with a constant p); beyond that, two passes over blocks of
   the batch (residuals, then one dot product per coefficient). */
#define LINEAR_SMALL_P 4
#define LINEAR_BLOCK 64

/* row k's residual into the sums */
#define LINEAR_SMALL_ROW(k)                                                          \
  {                                                                                  \
    const double *zi = z + idx[k] * stride;                                          \
    double r = zi[p];                                                                \
    for (int j = 0; j < p; j++) r -= zi[j] * w[j];                                   \
    for (int j = 0; j < p; j++) acc[j] += r * zi[j];                                 \
    ssr += r * r;                                                                    \
  }

static inline double linear_sums_small(const double *z, const int p, const double *w,
                                       const R_xlen_t *idx, int m, double *xr) {
  const int stride = p + 1;
  double acc[LINEAR_SMALL_P] = {0.0, 0.0, 0.0, 0.0}, ssr = 0.0;
  for (int k = 0; k < m; k++) LINEAR_SMALL_ROW(k)
  for (int j = 0; j < p; j++) xr[j] = acc[j];
  return ssr;
}

/* The same for data beyond L2 (dense.h: dense_ahead()): the rows that
   prefetch `ahead` rows on, then the last `ahead`, which do not. A function
   of its own, for any p: with the prefetching loops in linear_sums_small()
   the compiler stopped inlining linear_sums(), which cost 5% of an
   iteration on `handout` at batch 100 (CPU time, medians of 3). */
static double linear_sums_far(const double *z, const int p, const double *w,
                              const R_xlen_t *idx, int m, double *xr, int ahead) {
  const int stride = p + 1, last = ahead < m ? m - ahead : 0;
  double acc[LINEAR_SMALL_P] = {0.0, 0.0, 0.0, 0.0}, ssr = 0.0;
  int k = 0;
  dense_prefetch_rows(z, idx, 0, ahead, m, stride);
  for (; k < last; k++) {
    dense_prefetch_row(z + idx[k + ahead] * stride, stride);
    LINEAR_SMALL_ROW(k)
  }
  for (; k < m; k++) LINEAR_SMALL_ROW(k)
  for (int j = 0; j < p; j++) xr[j] = acc[j];
  return ssr;
}

static double linear_sums_blocked(const double *z, const int p, const double *w,
                                  const R_xlen_t *idx, int m, double *xr) {
  const int stride = p + 1;
  double r[LINEAR_BLOCK], ssr = 0.0;
  for (int j = 0; j < p; j++) xr[j] = 0.0;
  for (int k0 = 0; k0 < m; k0 += LINEAR_BLOCK) {
    const int len = m - k0 < LINEAR_BLOCK ? m - k0 : LINEAR_BLOCK;
    const R_xlen_t *ix = idx + k0;
    for (int k = 0; k < len; k++) {
      const double *zi = z + ix[k] * stride;
      double rk = zi[p];
      for (int j = 0; j < p; j++) rk -= zi[j] * w[j];
      r[k] = rk;
      ssr += rk * rk;
    }
    for (int j = 0; j < p; j++) {
      double s = 0.0;
      for (int k = 0; k < len; k++) s += r[k] * z[ix[k] * stride + j];
      xr[j] += s;
    }
  }
  return ssr;
}

/* Many coefficients: blocks of DENSE_BLOCK rows (dense.h), each row read
   once for its residual and again, still in cache, for X'r. The column-wise
   second pass above strides across 64 rows per coefficient, which at large p
   misses the cache on every read. LINEAR_BLOCK_OF is one block of B rows
   from item k; LINEAR_DENSE the batch, in blocks of 4 (dot products by
   `dots4`) after `wide_blocks` (empty, or the wide build's blocks of 8),
   then single rows, as model_logistic.c's. */
#define LINEAR_BLOCK_OF(B, dots, axpy)                                               \
  {                                                                                  \
    const double *zb[B];                                                             \
    double r[B];                                                                     \
    if (ahead) dense_prefetch_rows(z, idx, k + ahead, k + ahead + (B), m, stride);   \
    for (int b = 0; b < (B); b++) zb[b] = z + idx[k + b] * stride;                   \
    dots(zb, NULL, w, p, r);   /* rows of doubles: no spread prefetch (dense.h) */   \
    for (int b = 0; b < (B); b++) {                                                  \
      r[b] = zb[b][p] - r[b];                                                        \
      ssr += r[b] * r[b];                                                            \
    }                                                                                \
    axpy(xr, zb, r, p);                                                              \
  }
#define LINEAR_DENSE(ahead_rows, dots4, wide_blocks)                                 \
  const int stride = p + 1, ahead = ahead_rows;                                      \
  double ssr = 0.0;                                                                  \
  for (int j = 0; j < p; j++) xr[j] = 0.0;                                           \
  dense_prefetch_rows(z, idx, 0, ahead, m, stride);                                  \
  int k = 0;                                                                         \
  wide_blocks                                                                        \
  for (; k + DENSE_BLOCK <= m; k += DENSE_BLOCK)                                     \
    LINEAR_BLOCK_OF(DENSE_BLOCK, dots4, dense_axpy4)                                 \
  for (; k < m; k++) {                                                               \
    const double *zi = z + idx[k] * stride, r = zi[p] - dense_dot(zi, w, p);         \
    ssr += r * r;                                                                    \
    dense_axpy(xr, zi, r, p);                                                        \
  }                                                                                  \
  return ssr;

static double linear_sums_dense(const double *z, const int p, const double *w,
                                const R_xlen_t *idx, int m, double *xr, int rows_ahead) {
  LINEAR_DENSE(rows_ahead, dense_dots4, )
}

#ifdef DENSE_WIDE_BUILD
DENSE_WIDE static double linear_sums_dense_wide(const double *z, const int p, const double *w,
                                                const R_xlen_t *idx, int m, double *xr,
                                                int rows_ahead) {
  LINEAR_DENSE(rows_ahead, dense_dots4w,
               for (; k + DENSE_WIDE_BLOCK <= m; k += DENSE_WIDE_BLOCK)
                 LINEAR_BLOCK_OF(DENSE_WIDE_BLOCK, dense_dots8w, dense_axpy8w))
}
#else
#define linear_sums_dense_wide linear_sums_dense
#endif

/* the same sums weighted by the case weights, and their sum into *wsum */
static double linear_sums_weighted(const linear_data *L, const double *w, const R_xlen_t *idx,
                                   int m, double *xr, double *wsum) {
  const int p = L->p;
  double ssr = 0.0, sw = 0.0;
  for (int j = 0; j < p; j++) xr[j] = 0.0;
  for (int k = 0; k < m; k++) {
    const double c = L->wt[idx[k]], r = rows_residual(&L->X, idx[k], w), cr = c * r;
    rows_axpy(&L->X, idx[k], cr, xr);
    ssr += cr * r;
    sw += c;
  }
  *wsum = sw;
  return ssr;
}

/* the batch sums, with the register-resident kernel for small p */
static inline double linear_sums(const linear_data *L, const double *w, const R_xlen_t *idx,
                                 int m, double *xr) {
  if (!L->z) {   /* sparse rows */
    double ssr = 0.0;
    for (int j = 0; j < L->p; j++) xr[j] = 0.0;
    for (int k = 0; k < m; k++) {
      const double r = rows_residual(&L->X, idx[k], w);
      rows_axpy(&L->X, idx[k], r, xr);
      ssr += r * r;
    }
    return ssr;
  }
  if (L->ahead && L->p <= LINEAR_SMALL_P)
    return linear_sums_far(L->z, L->p, w, idx, m, xr, L->ahead);
  switch (L->p) {
  case 1: return linear_sums_small(L->z, 1, w, idx, m, xr);
  case 2: return linear_sums_small(L->z, 2, w, idx, m, xr);
  case 3: return linear_sums_small(L->z, 3, w, idx, m, xr);
  case 4: return linear_sums_small(L->z, 4, w, idx, m, xr);
  default:
    if (L->p < DENSE_MIN_P) return linear_sums_blocked(L->z, L->p, w, idx, m, xr);
    return L->wide ? linear_sums_dense_wide(L->z, L->p, w, idx, m, xr, L->ahead)
                   : linear_sums_dense(L->z, L->p, w, idx, m, xr, L->ahead);
  }
}

static void linear_grad_loglik(const void *data, const double *w, const R_xlen_t *idx,
                               int m, double *g, double *work) {
  const linear_data *L = data;
  const int p = L->p;
  double count = m;      /* the batch's total weight */
  const double ssr = L->wt ? linear_sums_weighted(L, w, idx, m, work, &count)
                           : linear_sums(L, w, idx, m, work);
  const double prec = exp(-w[p]);
  for (int j = 0; j < p; j++) g[j] += prec * work[j];
  g[p] += -0.5 * count + 0.5 * prec * ssr;
}

static double linear_loglik(const void *data, const double *w, const R_xlen_t *idx,
                            R_xlen_t m, double *work) {
  (void) work;
  const linear_data *L = data;
  const int p = L->p;
  if (!idx) m = L->n;
  double ssr = 0.0, count = 0.0;
  for (R_xlen_t k = 0; k < m; k++) {
    const R_xlen_t i = idx ? idx[k] : k;
    const double c = L->wt ? L->wt[i] : 1.0, r = rows_residual(&L->X, i, w);
    ssr += c * r * r;
    count += c;
  }
  return -0.5 * count * (M_LN_2PI + w[p]) - 0.5 * exp(-w[p]) * ssr;
}

/* each row's term of linear_loglik */
static void linear_loglik_rows(const void *data, const double *w, R_xlen_t from, R_xlen_t to,
                               double *out) {
  const linear_data *L = data;
  const int p = L->p;
  const double half_prec = 0.5 * exp(-w[p]), lnorm = -0.5 * (M_LN_2PI + w[p]);
  for (R_xlen_t i = from; i < to; i++) {
    const double r = rows_residual(&L->X, i, w);
    out[i - from] = (L->wt ? L->wt[i] : 1.0) * (lnorm - half_prec * r * r);
  }
}

/* Q = (beta - mu)' V^{-1} (beta - mu); when g is given, also add -scale V^{-1} (beta - mu)
   into it. Row by row, so no scratch memory is needed whatever p is. */
static double linear_quad(const linear_data *L, const double *w, double *g, double scale) {
  const int p = L->p;
  double q = 0.0;
  for (int i = 0; i < p; i++) {
    double s;
    if (L->vinv_diag) {
      s = L->vinv[i] * (w[i] - L->mu[i]);
    } else {
      s = 0.0;
      for (int j = 0; j < p; j++) s += L->vinv[i + j * p] * (w[j] - L->mu[j]);
    }
    if (g) g[i] -= scale * s;
    q += s * (w[i] - L->mu[i]);
  }
  return q;
}

/* log N(beta; mu, e^gamma V) + log IG(e^gamma; a, b) + gamma (Jacobian of sigma^2 = e^gamma) */
/* rstanarm's prior: the coefficients' (prior_centred.h), and for
   sigma = e^(gamma/2) the exponential density times the Jacobian sigma / 2:
   log r - r sigma + gamma / 2 - log 2, whose derivative in gamma is
   (1 - r sigma) / 2 and second derivative -r sigma / 4 */
static double sigma_logprior(const linear_data *L, double gam) {
  return log(L->sigma_rate) - L->sigma_rate * exp(0.5 * gam) + 0.5 * gam - M_LN2;
}

static double sigma_slope(const linear_data *L, double gam) {
  return 0.5 * (1.0 - L->sigma_rate * exp(0.5 * gam));
}

static double linear_logprior(const void *data, const double *w) {
  const linear_data *L = data;
  const int p = L->p;
  if (!L->nig) return coef_prior_log(&L->coef, w) + sigma_logprior(L, w[p]);
  const double gam = w[p], prec = exp(-gam);
  double q = linear_quad(L, w, NULL, 0.0);
  return L->prior_const - 0.5 * p * gam - 0.5 * prec * q - (L->a + 1.0) * gam
         - L->b * prec + gam;
}

static void linear_grad_logprior(const void *data, const double *w, double *g) {
  const linear_data *L = data;
  const int p = L->p;
  if (!L->nig) {
    coef_prior_grad(&L->coef, w, g);
    g[p] += sigma_slope(L, w[p]);
    return;
  }
  const double gam = w[p], prec = exp(-gam);
  double q = linear_quad(L, w, g, prec);
  g[p] += -0.5 * p + 0.5 * prec * q - (L->a + 1.0) + L->b * prec + 1.0;
}

/* both gradients with one exponential: it costs as much as the rest of a
   small batch's arithmetic */
static void linear_grad_logpost(const void *data, const double *w, const R_xlen_t *idx,
                                int m, double scale, double *g, double *work) {
  const linear_data *L = data;
  const int p = L->p;
  double count = m;
  const double ssr = L->wt ? linear_sums_weighted(L, w, idx, m, work, &count)
                           : linear_sums(L, w, idx, m, work);
  const double prec = exp(-w[p]);
  /* grouped as grad_loglik and grad_logprior compute it, so the two paths
     give the same bits */
  for (int j = 0; j < p; j++) g[j] = (prec * work[j]) * scale;
  if (!L->nig) {
    coef_prior_grad(&L->coef, w, g);
    g[p] = (-0.5 * count + 0.5 * prec * ssr) * scale + sigma_slope(L, w[p]);
    return;
  }
  const double q = linear_quad(L, w, g, prec);
  g[p] = (-0.5 * count + 0.5 * prec * ssr) * scale
         + (-0.5 * p + 0.5 * prec * q - (L->a + 1.0) + L->b * prec + 1.0);
}

/* A step too large can throw log sigma^2 so far that 1/sigma^2 underflows to 0
   and the gradient vanishes: the chain would drift on with finite but meaningless
   numbers. Beyond log(DBL_MAX) sigma^2 or 1/sigma^2 is not a double, and the
   driver treats the state as diverged. */
static int linear_in_domain(const void *data, const double *w) {
  const linear_data *L = data;
  return fabs(w[L->p]) < 709.78;
}

/* mean log likelihood per datum and root mean squared error of x' beta,
   named in this order for R */
const char *const model_linear_metrics[] = {"test_loglik", "test_rmse", NULL};

static void linear_metrics(const void *data, const double *w, double *out, double *work) {
  (void) work;
  const linear_data *L = data;
  const int p = L->p;
  double ssr = 0.0;
  for (R_xlen_t i = 0; i < L->n; i++) {
    const double r = rows_residual(&L->X, i, w);
    ssr += r * r;
  }
  out[0] = -0.5 * (M_LN_2PI + w[p]) - 0.5 * exp(-w[p]) * ssr / (double) L->n;
  out[1] = sqrt(ssr / (double) L->n);
}

/* Local reparameterisation (sgld.h: grad_loglik_local): the mean x_i' beta
   of observation i drawn from its distribution under q, N(a_i, v_i) with
   a_i = x_i' mu and v_i = sum_j x_ij^2 sd_j^2, one normal per observation;
   gamma = log sigma^2 is no weight, so it is drawn once for the batch,
   gamma = mu_p + sd_p e. With r_i the residual and c_i = wt_i e^-gamma r_i,
   d/d mu_j = c_i x_ij, d/d sd_j = c_i e_i x_ij^2 sd_j / sqrt(v_i), and
   gamma's derivative G = sum_i wt_i (-1/2 + e^-gamma r_i^2 / 2) goes to mu_p
   and, times e, to sd_p. */
static double linear_grad_loglik_local(const void *data, const double *mu, const double *sd,
                                       const R_xlen_t *idx, int m, sgld_rng *rng,
                                       double *g_mu, double *g_sd, double *work) {
  (void) work;
  const linear_data *L = data;
  const int p = L->p;
  const double e_gamma = rng_norm(rng), gamma = mu[p] + sd[p] * e_gamma, prec = exp(-gamma);
  double ssr = 0.0, count = 0.0;
  for (int k = 0; k < m; k++) {
    const double wt = L->wt ? L->wt[idx[k]] : 1.0;
    double a, v;
    rows_moments(&L->X, idx[k], mu, sd, 0.0, &a, &v);
    const double s = sqrt(v), e = rng_norm(rng), r = rows_y(&L->X, idx[k]) - (a + s * e);
    const double c = wt * prec * r, f = s > 0 ? c * e / s : 0.0;
    rows_add_gradients(&L->X, idx[k], c, f, sd, g_mu, g_sd);
    ssr += wt * r * r;
    count += wt;
  }
  const double G = -0.5 * count + 0.5 * prec * ssr;
  g_mu[p] += G;
  g_sd[p] += G * e_gamma;
  return -0.5 * count * (M_LN_2PI + gamma) - 0.5 * prec * ssr;
}

/* The expectations under q = N(mu, diag(sd^2)) (sgld.h: expected_loglik,
   expected_logprior), in closed form: with kappa = E[e^-gamma] =
   e^(-mu_p + sd_p^2 / 2) and observation i's x_i' beta ~ N(a_i, v_i),
   E[(y_i - x_i' beta)^2] = (y_i - a_i)^2 + v_i, and every term of the log
   joint is linear in e^-gamma, gamma and that square. */
static double linear_expected_loglik(const void *data, const double *mu, const double *sd,
                                     const R_xlen_t *idx, int m, double *g_mu, double *g_sd,
                                     double *work) {
  (void) work;
  const linear_data *L = data;
  const int p = L->p;
  const double kappa = exp(-mu[p] + 0.5 * sd[p] * sd[p]);
  double ssr = 0.0, count = 0.0;
  for (int k = 0; k < m; k++) {
    const double wt = L->wt ? L->wt[idx[k]] : 1.0;
    double a, v;
    rows_moments(&L->X, idx[k], mu, sd, 0.0, &a, &v);
    const double r = rows_y(&L->X, idx[k]) - a, c = wt * kappa;
    rows_add_gradients(&L->X, idx[k], c * r, -c, sd, g_mu, g_sd);
    ssr += wt * (r * r + v);
    count += wt;
  }
  g_mu[p] += -0.5 * count + 0.5 * kappa * ssr;
  g_sd[p] -= 0.5 * kappa * ssr * sd[p];
  return -0.5 * count * (M_LN_2PI + mu[p]) - 0.5 * kappa * ssr;
}

static double linear_expected_logprior(const void *data, const double *mu, const double *sd,
                                       double *g_mu, double *g_sd) {
  const linear_data *L = data;
  const int p = L->p;
  if (!L->nig) {
    /* E[sigma] = E[e^(gamma/2)] = e^(mu_p / 2 + sd_p^2 / 8) */
    const double es = exp(0.5 * mu[p] + 0.125 * sd[p] * sd[p]);
    g_mu[p] += 0.5 * (1.0 - L->sigma_rate * es);
    g_sd[p] -= 0.25 * L->sigma_rate * es * sd[p];
    return coef_prior_expected(&L->coef, mu, sd, g_mu, g_sd) + log(L->sigma_rate)
           - L->sigma_rate * es + 0.5 * mu[p] - M_LN2;
  }
  const double kappa = exp(-mu[p] + 0.5 * sd[p] * sd[p]);
  double eq = linear_quad(L, mu, g_mu, kappa);   /* E[Q] = Q(mu) + sum_j (V^-1)_jj sd_j^2 */
  for (int j = 0; j < p; j++) {
    const double vjj = L->vinv_diag ? L->vinv[j] : L->vinv[j + j * p];
    eq += vjj * sd[j] * sd[j];
    g_sd[j] -= kappa * vjj * sd[j];
  }
  g_mu[p] += -0.5 * p + 0.5 * kappa * eq - (L->a + 1.0) + L->b * kappa + 1.0;
  g_sd[p] -= (0.5 * eq + L->b) * kappa * sd[p];
  return L->prior_const - 0.5 * p * mu[p] - 0.5 * kappa * eq - (L->a + 1.0) * mu[p]
         - L->b * kappa + mu[p];
}

/* Newton's pieces (sgld.h: hess_loglik) in (beta, gamma = log sigma^2).
   With r_i the residual, c_i the case weight and prec = e^-gamma, the log
   likelihood -1/2 sum c_i (log 2 pi + gamma) - prec/2 sum c_i r_i^2 has the
   Hessian -prec sum c_i x_i x_i' in beta, -prec sum c_i r_i x_i between beta
   and gamma, and -prec/2 sum c_i r_i^2 in gamma. work[0..p) holds
   sum c_i r_i x_i. */
static double linear_hess_loglik(const void *data, const double *w, const R_xlen_t *idx,
                                 R_xlen_t m, double *g, double *H, double *work) {
  const linear_data *L = data;
  const int p = L->p, d = p + 1, stride = p + 1;
  if (!idx) m = L->n;
  const double prec = exp(-w[p]);
  double *xr = work, ssr = 0.0, count = 0.0;
  for (int j = 0; j < p; j++) xr[j] = 0.0;
  for (R_xlen_t k = 0; k < m; k += 4) {
    const int rows = m - k < 4 ? (int) (m - k) : 4;
    const double *x[4];
    double h[4];
    for (int b = 0; b < rows; b++) {
      const R_xlen_t i = idx ? idx[k + b] : k + b;
      const double c = L->wt ? L->wt[i] : 1.0, r = rows_residual(&L->X, i, w);
      rows_axpy(&L->X, i, c * r, xr);
      ssr += c * r * r;
      count += c;
      h[b] = -prec * c;
      if (L->z) {
        x[b] = L->z + i * stride;
      } else {
        const R_xlen_t lo = (R_xlen_t) L->X.start[i], hi = (R_xlen_t) L->X.start[i + 1];
        hess_sparse_row(H, d, L->X.col + lo, L->X.val ? L->X.val + lo : NULL, hi - lo, h[b]);
      }
    }
    if (L->z) hess_rows(H, d, p, x, h, rows);
  }
  for (int j = 0; j < p; j++) {
    g[j] += prec * xr[j];
    H[j + (R_xlen_t) p * d] -= prec * xr[j];
  }
  g[p] += -0.5 * count + 0.5 * prec * ssr;
  H[p + (R_xlen_t) p * d] -= 0.5 * prec * ssr;
  hess_mirror(H, d);
  return -0.5 * count * (M_LN_2PI + w[p]) - 0.5 * prec * ssr;
}

/* the prior's Hessian: -prec V^-1 in beta, prec V^-1 (beta - mu) between
   beta and gamma, -prec (Q / 2 + b) in gamma (linear_logprior()) */
static int linear_hess_logprior(const void *data, const double *w, double *H) {
  const linear_data *L = data;
  const int p = L->p, d = p + 1;
  if (!L->nig) {
    coef_prior_hess(&L->coef, H, d);
    H[p + (R_xlen_t) p * d] -= 0.25 * L->sigma_rate * exp(0.5 * w[p]);
    return 1;
  }
  const double prec = exp(-w[p]);
  double q = 0.0;
  for (int i = 0; i < p; i++) {
    double s = 0.0;
    for (int j = 0; j < p; j++) {
      const double v = L->vinv_diag ? (i == j ? L->vinv[i] : 0.0) : L->vinv[i + j * p];
      s += v * (w[j] - L->mu[j]);
      H[i + (R_xlen_t) j * d] -= prec * v;
    }
    q += s * (w[i] - L->mu[i]);
    H[i + (R_xlen_t) p * d] += prec * s;
    H[p + (R_xlen_t) i * d] += prec * s;
  }
  H[p + (R_xlen_t) p * d] -= prec * (0.5 * q + L->b);
  return 1;
}

sgld_model model_linear_build(SEXP spec) {
  linear_data *L = (linear_data *) R_alloc(1, sizeof(linear_data));
  L->p = list_int(spec, "p");
  L->n = (R_xlen_t) list_real(spec, "n");
  if (L->p < 1 || L->n < 1) error("internal: linear model needs p >= 1 and n >= 1");
  rows_from_spec(&L->X, spec, L->p, L->n);
  L->z = L->X.z;
  L->wt = list_optional_doubles(spec, "obs_weight", L->n);
  /* a model saved before rstanarm's prior existed has the conjugate one */
  L->nig = list_optional(spec, "prior_nig") == R_NilValue ? 1 : list_int(spec, "prior_nig");
  if (L->nig) {
    L->mu = list_doubles(spec, "prior_mean", L->p);
    L->vinv_diag = list_int(spec, "prior_vinv_diag");
    L->vinv = list_doubles(spec, "prior_vinv", L->vinv_diag ? L->p : (R_xlen_t) L->p * L->p);
    L->a = list_real(spec, "prior_shape");
    L->b = list_real(spec, "prior_rate");
    L->prior_const = list_real(spec, "prior_const");
  } else {
    coef_prior_read(&L->coef, spec, L->p);
    L->sigma_rate = list_real(spec, "prior_sigma_rate");
    if (!(L->sigma_rate > 0 && R_FINITE(L->sigma_rate)))
      error("internal: 'prior_sigma_rate' must be positive and finite");
  }
  L->wide = dense_wide();
  L->ahead = L->z ? dense_ahead(L->p, (double) L->n, sizeof(double)) : 0;

  /* fields not named here (optional functions this model lacks) are zero */
  return (sgld_model) {
    .d = L->p + 1,
    .n = L->n,
    .data = L,
    .grad_loglik = linear_grad_loglik,
    .loglik = linear_loglik,
    .loglik_rows = linear_loglik_rows,
    .grad_logprior = linear_grad_logprior,
    .logprior = linear_logprior,
    .grad_logpost = linear_grad_logpost,
    .in_domain = linear_in_domain,
    .metrics = linear_metrics,
    .work_size = (size_t) L->p,
    .grad_loglik_local = linear_grad_loglik_local,
    .expected_loglik = linear_expected_loglik,
    .expected_logprior = linear_expected_logprior,
    .hess_loglik = linear_hess_loglik,
    .hess_logprior = linear_hess_logprior
  };
}
