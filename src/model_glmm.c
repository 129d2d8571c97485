/*
 * Generalised linear mixed models (multilevel models): fixed effects and
 * group effects of K random-effect terms, as lme4's (1 + x | g).
 *
 *   eta_i = x_i' beta + o_i + sum_k u_ki' b_{k, g_k(i)},
 *   gaussian (identity): y_i ~ N(eta_i, sigma^2);
 *   binomial (logit):    y_i ~ Binomial(t_i, 1 / (1 + e^-eta_i)), y_i successes of t_i;
 *   poisson (log):       y_i ~ Poisson(e^eta_i);
 *   negbin (log):        y_i ~ NB2(mean mu_i = e^eta_i, size phi), Var = mu + mu^2 / phi,
 *                        as model_negbin() (src/model_negbin.c) and rstanarm's
 *                        neg_binomial_2 (its reciprocal_dispersion is phi).
 *
 * Optional prior weights c_i >= 0 multiply row i's log likelihood (its
 * normalising constant included), as rstanarm's `weights` are documented
 * (and as its log_lik() computes them): integer weights give the posterior
 * of the data with rows repeated. For gaussian this is not lme4's precision
 * weight (variance sigma^2 / c_i), whose log density has -log sigma once per
 * row, not c_i times. Binomial proportions with weights as trials are made
 * successes and trials on the R side (R/model-glmm.R).
 *
 * Term k has r_k coefficients per group (the columns u_ki of its model
 * matrix) and G_k groups; g_k(i) is row i's group. Group effects are stored
 * non-centred: b_kg = L_k z_kg with z_kg ~ N(0, I) a priori and L_k the lower
 * Cholesky factor of the term's covariance Sigma_k, so that the samplers
 * move whitened coordinates. L_k = diag(s_k) C_k, s_k the sds and C_k the
 * Cholesky factor of the correlation matrix, built from canonical partial
 * correlations (CPCs) tanh(y) as Stan's cholesky_factor_corr transform does:
 * row i of C_k is (z_i0 sqrt(r_0), z_i1 sqrt(r_1), ..., sqrt(r_i)) with
 * r_0 = 1, r_{j+1} = r_j - C_ij^2. The CPC z_ij (j < i) is the partial
 * correlation of coefficients i and j given 0..j-1 (a C-vine).
 *
 * Parameters, in order (all unconstrained):
 *   beta (p); z (sum_k r_k G_k; term by term, group by group within a term,
 *   the r_k coefficients of a group together); per term, log s_k (r_k) then
 *   the CPCs' y (r_k (r_k - 1) / 2, row by row: (1,0), (2,0), (2,1), ...);
 *   log sigma (gaussian) or log phi (negbin): the family's auxiliary
 *   parameter, absent for binomial and poisson.
 *
 * Priors: beta_j ~ N(loc_j, scale_j^2); sigma or phi ~ Exponential(aux_rate); z ~
 * N(0, I); Sigma_k ~ rstanarm's decov(regularization, concentration, shape,
 * scale): trace(Sigma_k) = r_k (tau_k c_k)^2 with tau_k ~ Gamma(shape, 1)
 * and c_k = scale_k disp (disp = sigma for gaussian, phi for negbin, 1
 * otherwise: rstanarm 2.21.3's count.stan hands make_theta_L() the
 * reciprocal dispersion as its dispersion, so stan_glmer.nb's group sds
 * scale with phi a priori, and this model does the same), the
 * variances' shares pi_k = s_k^2 / trace ~ Dirichlet(concentration), the
 * correlation matrix ~ LKJ(regularization), independently. On the
 * parameters above, with S = sum_j s_j^2, pi_j = s_j^2 / S and
 * tau = sqrt(S / r) / c, the density of the log sds is
 *   Dirichlet(pi; a) Gamma(tau; shape, 1) (d tau / d S) S^-(r-1) prod_j 2 s_j^2
 * (the shares and S map to the variances with Jacobian S^(r-1); tau to S
 * with d tau / d S = tau / (2 S); each variance to its log sd with 2 s_j^2),
 * and under LKJ(eta) the C-vine's partial correlations are independent,
 * z_ij ~ Beta(b_j, b_j) on (-1, 1) with b_j = eta + (r - 2 - j) / 2
 * (Lewandowski, Kurowicka and Joe 2009), each with Jacobian 1 - z^2 to y.
 * For r = 1 this is s ~ Exponential(rate 1 / c) at shape 1.
 *
 * This is decov() as rstanarm documents it, and as its Stan code
 * (make_theta_L) builds it for r <= 2. For r >= 3 rstanarm 2.21.3's onion
 * step scales row j+1's off-diagonal entries by row j's sd rather than its
 * own, so its variances' shares are not Dirichlet nor its correlations LKJ:
 * 20,000 draws at decov()'s defaults gave the third variance's share an sd
 * of 0.172 against the Dirichlet's 0.236 (Kolmogorov-Smirnov p < 1e-15;
 * 3e-9 and 7e-7 for the third coefficient's correlations;
 * bench/glmm-decov-rstanarm.R). So for terms of 3 or more coefficients
 * this model's posterior is the documented prior's, not stan_glmer's.
 *
 * The data: the fixed design as a p x n matrix (column i = x_i), the
 * response, the binomial trials, optional offsets; per row, its group in
 * each term (K x n, 0-based) and the term's columns u_ki together (R x n,
 * R = sum_k r_k): never a dense Z.
 *
 * Every group effect belongs to some rows, so a minibatch scaled by n/m
 * would give a wrong gradient for the z's of groups it missed: the model
 * says local_params, and the R side runs it on full data.
 */
#include <R.h>
#include <Rmath.h>
#include "sgld.h"

enum { GLMM_GAUSSIAN = 0, GLMM_BINOMIAL = 1, GLMM_POISSON = 2, GLMM_NEGBIN = 3 };
enum { MOVES_NONE = 0, MOVES_ALL = 1, MOVES_GROUPS = 2, MOVES_COVARIANCE = 3 };
#define GLMM_RMAX 32    /* most coefficients per group in a term (the R side says so) */
#define GLMM_TABLE_MAX 4096   /* largest negbin count whose lgamma steps are tabled */

typedef struct glmm_data {
  int family, p, K, R;        /* R = sum_k r_k */
  R_xlen_t n;
  const double *x;            /* p x n */
  const double *y, *trials;   /* per row; trials for binomial only */
  const double *offset;       /* per row, or NULL */
  const double *wt;           /* prior weights per row, or NULL (all 1) */
  const double *log_norm;     /* per row: log choose(t, y) or -log y! (poisson, negbin),
                                 0 for gaussian */
  const int *r, *G, *group;   /* group: K x n, 0-based */
  const double *u;            /* R x n */
  int *z_off, *u_off, *t_off, *l_off;   /* per term: start of z in w, of u in a row,
                                           of theta in w, of L in work */
  int nz, nl, i_aux, d;       /* z's length, sum_k r_k^2, the index of log sigma or log
                                 phi (-1: none) */
  const double *prior_loc, *prior_scale;
  double aux_rate;
  const double *reg, *conc, *shape, *scale;   /* decov, per term */
  int moves;                          /* which exact moves (MOVES_*) */
  int table_len;                      /* negbin: 1 + the largest count if tabled (else 0) */
  size_t table_off;                   /* where the tables start in the work buffer */
  R_xlen_t **grp_start, **grp_rows;   /* per term, its rows by group (exact moves only) */
} glmm_data;

/* log(1 + e^x) without overflow */
static inline double softplus(double x) {
  return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* log(1 - tanh(y)^2) = log 4 - 2|y| - 2 log(1 + e^-2|y|), accurate for large |y| */
static inline double log_sech2(double y) {
  const double a = fabs(y);
  return M_LN2 * 2.0 - 2.0 * a - 2.0 * log1p(exp(-2.0 * a));
}

/* A factor L = diag(s) C (r x r, row-major, zero above the diagonal) from
   its term's parameters theta = (log s, y). */
static void factor_of(int r, const double *theta, double *L) {
  const double *y = theta + r;
  int c = 0;
  for (int i = 0; i < r; i++) {
    const double s = exp(theta[i]);
    double rem = 1.0;
    for (int j = 0; j < i; j++) {
      const double cij = tanh(y[c++]) * sqrt(rem);
      L[i * r + j] = s * cij;
      rem -= cij * cij;
    }
    L[i * r + i] = s * sqrt(rem > 0 ? rem : 0.0);
    for (int j = i + 1; j < r; j++) L[i * r + j] = 0.0;
  }
}

/* term k's factor from w */
static void term_factor(const glmm_data *M, int k, const double *w, double *L) {
  factor_of(M->r[k], w + M->t_off[k], L);
}

/* b = L z for every group of every term, into b (nz), factors into L (nl) */
static void group_effects(const glmm_data *M, const double *w, double *b, double *L) {
  for (int k = 0; k < M->K; k++) {
    const int r = M->r[k];
    double *Lk = L + M->l_off[k];
    term_factor(M, k, w, Lk);
    const double *z = w + M->z_off[k];
    double *bk = b + (M->z_off[k] - M->p);
    for (int g = 0; g < M->G[k]; g++)
      for (int i = 0; i < r; i++) {
        double v = 0.0;
        for (int j = 0; j <= i; j++) v += Lk[i * r + j] * z[g * r + j];
        bk[g * r + i] = v;
      }
  }
}

static inline double fixed_eta(const glmm_data *M, R_xlen_t i, const double *w) {
  const double *xi = M->x + i * M->p;
  double eta = M->offset ? M->offset[i] : 0.0;
  for (int j = 0; j < M->p; j++) eta += xi[j] * w[j];
  return eta;
}

/* row i's linear predictor given every group effect b */
static inline double row_eta(const glmm_data *M, R_xlen_t i, const double *w, const double *b) {
  double eta = fixed_eta(M, i, w);
  const double *ui = M->u + i * M->R;
  const int *gi = M->group + i * M->K;
  for (int k = 0; k < M->K; k++) {
    const int r = M->r[k];
    const double *bg = b + (M->z_off[k] - M->p) + (R_xlen_t) gi[k] * r, *uk = ui + M->u_off[k];
    for (int j = 0; j < r; j++) eta += uk[j] * bg[j];
  }
  return eta;
}

/* The auxiliary parameter's per-pass quantities: u = log sigma (gaussian)
   or log phi (negbin), e^u, e^-u and, for negbin, lgamma(phi) and
   digamma(phi), computed once for a pass over the rows; optionally
   (aux_tables()) lgamma(k + phi) - lgamma(phi) and psi(k + phi) - psi(phi)
   for every count k below M->table_len. */
typedef struct glmm_aux {
  double u, value, inv, lgamma_phi, digamma_phi;
  const double *lgamma_steps, *digamma_steps;   /* NULL: call lgammafn(), digamma() */
} glmm_aux;

static inline glmm_aux aux_at(const glmm_data *M, double u) {
  glmm_aux A = {u, exp(u), exp(-u), 0.0, 0.0, NULL, NULL};
  if (M->family == GLMM_NEGBIN) {
    A.lgamma_phi = lgammafn(A.value);
    A.digamma_phi = digamma(A.value);
  }
  return A;
}

static inline glmm_aux aux_of(const glmm_data *M, const double *w) {
  return aux_at(M, M->i_aux >= 0 ? w[M->i_aux] : 0.0);
}

/* For a pass over m rows of a negbin model, the steps of lgamma and digamma
   from phi to k + phi for every count k below table_len, as sums of log(phi
   + j) and 1 / (phi + j) over j < k, into work (2 table_len): one log and
   one division per count instead of lgammafn() and digamma() per row
   (most of a row's time), where the rows outnumber half the counts. */
static void aux_tables(const glmm_data *M, glmm_aux *A, R_xlen_t m, double *work) {
  if (M->family != GLMM_NEGBIN || M->table_len < 2 || M->table_len > 2 * m) return;
  double *lg = work, *dg = work + M->table_len;
  lg[0] = dg[0] = 0.0;
  for (int k = 1; k < M->table_len; k++) {
    lg[k] = lg[k - 1] + log(A->value + (k - 1));
    dg[k] = dg[k - 1] + 1.0 / (A->value + (k - 1));
  }
  A->lgamma_steps = lg;
  A->digamma_steps = dg;
}

/* log(e^a + e^b) without overflow (no R API: threads run it) */
static inline double log_sum_exp2(double a, double b) {
  return fmax(a, b) + log1p(exp(-fabs(a - b)));
}

/* row i's log likelihood at eta with weight 1; with d non-NULL, its
   derivative in eta into d[0] and (gaussian, negbin) in the auxiliary
   parameter's log into d[1]. Negbin, with lse = log(phi + mu):
     lgamma(y + phi) - lgamma(phi) - log y! + phi (u - lse) + y (eta - lse),
     d/d eta = y - (y + phi) mu / (phi + mu),
     d/d u = phi [psi(y + phi) - psi(phi) + u - lse + 1 - (y + phi) / (phi + mu)]. */
static inline double row_loglik_unit(const glmm_data *M, R_xlen_t i, double eta,
                                     const glmm_aux *A, double *d) {
  const double y = M->y[i];
  switch (M->family) {
  case GLMM_GAUSSIAN: {
    const double e = (y - eta) * A->inv;
    if (d) {
      d[0] = e * A->inv;
      d[1] = e * e - 1.0;
    }
    return -A->u - M_LN_SQRT_2PI - 0.5 * e * e;
  }
  case GLMM_NEGBIN: {
    const double phi = A->value, lse = log_sum_exp2(A->u, eta);
    const int tabled = A->lgamma_steps && y < M->table_len;
    if (d) {
      const double share_mu = exp(eta - lse), ratio = (y + phi) * exp(-lse);  /* mu/(phi+mu) */
      d[0] = y - (y + phi) * share_mu;
      const double dg = tabled ? A->digamma_steps[(int) y] : digamma(y + phi) - A->digamma_phi;
      d[1] = phi * (dg + A->u - lse + 1.0 - ratio);
    }
    const double lg = tabled ? A->lgamma_steps[(int) y] : lgammafn(y + phi) - A->lgamma_phi;
    return lg + M->log_norm[i] + phi * (A->u - lse) + y * (eta - lse);
  }
  case GLMM_BINOMIAL: {
    const double t = M->trials[i];
    if (d) d[0] = y - t / (1.0 + exp(-eta));
    return y * eta - t * softplus(eta) + M->log_norm[i];
  }
  default: {
    const double mu = exp(eta);
    if (d) d[0] = y - mu;
    return y * eta - mu + M->log_norm[i];
  }
  }
}

/* row i's weighted log likelihood (and derivatives, as row_loglik_unit()) */
static inline double row_loglik(const glmm_data *M, R_xlen_t i, double eta, const glmm_aux *A,
                                double *d) {
  const double ll = row_loglik_unit(M, i, eta, A, d);
  if (!M->wt) return ll;
  const double c = M->wt[i];
  if (d) {
    d[0] *= c;
    d[1] *= c;
  }
  return c * ll;
}

static double glmm_loglik(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                          double *work) {
  const glmm_data *M = data;
  double *b = work, *L = work + M->nz;
  group_effects(M, w, b, L);
  if (!idx) m = M->n;
  glmm_aux A = aux_of(M, w);
  aux_tables(M, &A, m, work + M->table_off);
  double ll = 0.0;
  for (R_xlen_t t = 0; t < m; t++) {
    const R_xlen_t i = idx ? idx[t] : t;
    ll += row_loglik(M, i, row_eta(M, i, w, b), &A, NULL);
  }
  return ll;
}

/* Back from d/dL (gL, r x r lower, row-major) to term k's parameters: d/d
   log s_i = sum_j gL_ij L_ij; d/dC_ij = s_i gL_ij, then through each row's
   recursion r_{j+1} = r_j - C_ij^2, C_ij = tanh(y) sqrt(r_j), C_ii = sqrt(r_i)
   in reverse, and dz/dy = 1 - z^2. */
static void factor_gradient(const glmm_data *M, int k, const double *w, const double *L,
                            const double *gL, double *g) {
  const int r = M->r[k];
  const double *theta = w + M->t_off[k], *y = theta + r;
  double *g_theta = g + M->t_off[k], *g_y = g_theta + r;
  double rem[GLMM_RMAX + 1], zz[GLMM_RMAX];
  int c0 = 0;
  for (int i = 0; i < r; i++) {
    const double s = exp(theta[i]);
    double gs = 0.0;
    for (int j = 0; j <= i; j++) gs += gL[i * r + j] * L[i * r + j];
    g_theta[i] += gs;
    if (i == 0) continue;
    rem[0] = 1.0;
    for (int j = 0; j < i; j++) {
      zz[j] = tanh(y[c0 + j]);
      const double cij = zz[j] * sqrt(rem[j]);
      rem[j + 1] = rem[j] - cij * cij;
    }
    /* adjoint of r_i from C_ii = sqrt(r_i) */
    const double cii = sqrt(rem[i] > 0 ? rem[i] : 0.0);
    double a_rem = cii > 0 ? s * gL[i * r + i] / (2.0 * cii) : 0.0;
    for (int j = i - 1; j >= 0; j--) {
      const double sq = sqrt(rem[j] > 0 ? rem[j] : 0.0), cij = zz[j] * sq;
      const double a_c = s * gL[i * r + j] - 2.0 * cij * a_rem;
      g_y[c0 + j] += a_c * sq * (1.0 - zz[j] * zz[j]);
      if (sq > 0) a_rem += a_c * zz[j] / (2.0 * sq);
    }
    c0 += i;
  }
}

/* The log likelihood over idx[0..m) (idx NULL: all rows), its gradient added
   into g. work: b (nz), L (nl), d/db (nz), d/dL (nl). */
static double glmm_loglik_grad(const void *data, const double *w, const R_xlen_t *idx,
                               R_xlen_t m, double *g, double *work) {
  const glmm_data *M = data;
  const int p = M->p, K = M->K;
  double *b = work, *L = b + M->nz, *gb = L + M->nl, *gL = gb + M->nz;
  group_effects(M, w, b, L);
  for (int j = 0; j < M->nz; j++) gb[j] = 0.0;
  if (!idx) m = M->n;
  glmm_aux A = aux_of(M, w);
  aux_tables(M, &A, m, work + M->table_off);
  double ll = 0.0, g_ls = 0.0;
  for (R_xlen_t t = 0; t < m; t++) {
    const R_xlen_t i = idx ? idx[t] : t;
    double d[2] = {0.0, 0.0};
    ll += row_loglik(M, i, row_eta(M, i, w, b), &A, d);
    const double *xi = M->x + i * p, *ui = M->u + i * M->R;
    for (int j = 0; j < p; j++) g[j] += d[0] * xi[j];
    const int *gi = M->group + i * K;
    for (int k = 0; k < K; k++) {
      const int r = M->r[k];
      double *gbg = gb + (M->z_off[k] - p) + (R_xlen_t) gi[k] * r;
      const double *uk = ui + M->u_off[k];
      for (int j = 0; j < r; j++) gbg[j] += d[0] * uk[j];
    }
    if (M->i_aux >= 0) g_ls += d[1];
  }
  if (M->i_aux >= 0) g[M->i_aux] += g_ls;
  /* b_g = L z_g: d/dz_g = L' d/db_g, d/dL += d/db_g z_g' (lower triangle) */
  for (int k = 0; k < K; k++) {
    const int r = M->r[k];
    const double *Lk = L + M->l_off[k], *z = w + M->z_off[k], *gbk = gb + (M->z_off[k] - p);
    double *gLk = gL + M->l_off[k], *gz = g + M->z_off[k];
    for (int j = 0; j < r * r; j++) gLk[j] = 0.0;
    for (int grp = 0; grp < M->G[k]; grp++) {
      const double *zg = z + grp * r, *gbg = gbk + grp * r;
      for (int i = 0; i < r; i++) {
        if (gbg[i] == 0.0) continue;
        for (int j = 0; j <= i; j++) {
          gz[grp * r + j] += Lk[i * r + j] * gbg[i];
          gLk[i * r + j] += gbg[i] * zg[j];
        }
      }
    }
    factor_gradient(M, k, w, Lk, gLk, g);
  }
  return ll;
}

static void glmm_grad_loglik(const void *data, const double *w, const R_xlen_t *idx, int m,
                             double *g, double *work) {
  glmm_loglik_grad(data, w, idx, m, g, work);
}

/* Row by row, for log_lik() and loo(); threads share it, so no work buffer:
   each term's factor is rebuilt on the stack and the group effect of each
   row formed on the fly. */
static void glmm_loglik_rows(const void *data, const double *w, R_xlen_t from, R_xlen_t to,
                             double *out) {
  const glmm_data *M = data;
  double L[GLMM_RMAX * GLMM_RMAX];
  for (R_xlen_t i = from; i < to; i++) out[i - from] = fixed_eta(M, i, w);
  for (int k = 0; k < M->K; k++) {
    const int r = M->r[k];
    term_factor(M, k, w, L);
    const double *z = w + M->z_off[k];
    for (R_xlen_t i = from; i < to; i++) {
      const double *zg = z + (R_xlen_t) M->group[i * M->K + k] * r;
      const double *uk = M->u + i * M->R + M->u_off[k];
      double v = 0.0;
      for (int a = 0; a < r; a++) {
        double ba = 0.0;
        for (int j = 0; j <= a; j++) ba += L[a * r + j] * zg[j];
        v += uk[a] * ba;
      }
      out[i - from] += v;
    }
  }
  const glmm_aux A = aux_of(M, w);
  for (R_xlen_t i = from; i < to; i++) out[i - from] = row_loglik(M, i, out[i - from], &A, NULL);
}

/* The decov prior of term k's parameters given disp (see the top), with
   its gradient added into g (and d/d log disp into *g_log_disp) when g is
   not NULL. */
static double decov_logprior(const glmm_data *M, int k, const double *theta, double log_disp,
                             double *g_theta, double *g_log_disp) {
  const int r = M->r[k];
  const double *ls = theta, *y = ls + r;
  const double a = M->conc[k], shape = M->shape[k], eta = M->reg[k];
  /* S = sum_j s_j^2, computed relative to the largest for range */
  double mx = ls[0];
  for (int j = 1; j < r; j++) if (ls[j] > mx) mx = ls[j];
  double sum = 0.0, sum_ls = 0.0;
  for (int j = 0; j < r; j++) {
    sum += exp(2.0 * (ls[j] - mx));
    sum_ls += ls[j];
  }
  const double log_S = 2.0 * mx + log(sum);
  const double log_tau = 0.5 * (log_S - log((double) r)) - log(M->scale[k]) - log_disp;
  const double tau = exp(log_tau);
  double lp = lgammafn(r * a) - r * lgammafn(a) + (a - 1.0) * (2.0 * sum_ls - r * log_S)
              + shape * log_tau - tau - lgammafn(shape) - r * log_S + (r - 1) * M_LN2
              + 2.0 * sum_ls;
  if (g_theta) {
    for (int j = 0; j < r; j++) {
      const double pi = exp(2.0 * (ls[j] - mx)) / sum;
      g_theta[j] += 2.0 * a - 2.0 * r * a * pi + (shape - tau) * pi;
    }
    *g_log_disp += tau - shape;
  }
  /* the C-vine's partial correlations: Beta(b_j, b_j) on (-1, 1), b_j =
     eta + (r - 2 - j) / 2 for column j, with Jacobian 1 - z^2 */
  int c = 0;
  for (int i = 1; i < r; i++)
    for (int j = 0; j < i; j++, c++) {
      const double bj = eta + 0.5 * (r - 2 - j);
      lp += bj * log_sech2(y[c]) - (2.0 * bj - 1.0) * M_LN2 - lbeta(bj, bj);
      if (g_theta) g_theta[r + c] -= 2.0 * bj * tanh(y[c]);
    }
  return lp;
}

static double glmm_prior(const glmm_data *M, const double *w, double *g) {
  double lp = 0.0;
  for (int j = 0; j < M->p; j++) {
    const double s = M->prior_scale[j], v = (w[j] - M->prior_loc[j]) / s;
    lp += -0.5 * v * v - log(s) - M_LN_SQRT_2PI;
    if (g) g[j] -= v / s;
  }
  for (int j = M->p; j < M->p + M->nz; j++) {
    lp += -0.5 * w[j] * w[j] - M_LN_SQRT_2PI;
    if (g) g[j] -= w[j];
  }
  /* decov's dispersion: sigma (gaussian), phi (negbin, as rstanarm), else 1 */
  const double log_disp = M->i_aux >= 0 ? w[M->i_aux] : 0.0;
  double g_log_disp = 0.0;
  for (int k = 0; k < M->K; k++)
    lp += decov_logprior(M, k, w + M->t_off[k], log_disp, g ? g + M->t_off[k] : NULL,
                         &g_log_disp);
  if (M->i_aux >= 0) {
    /* sigma or phi ~ Exponential(rate), with Jacobian to its log */
    const double aux = exp(log_disp);
    lp += log(M->aux_rate) - M->aux_rate * aux + log_disp;
    if (g) g[M->i_aux] += g_log_disp + 1.0 - M->aux_rate * aux;
  }
  return lp;
}

static double glmm_logprior(const void *data, const double *w) {
  return glmm_prior(data, w, NULL);
}

static void glmm_grad_logprior(const void *data, const double *w, double *g) {
  glmm_prior(data, w, g);
}

/* ---------------------------------------------- the exact moves -- */
/*
 * Moves made after each Metropolis-adjusted step of the whole vector
 * (sgld.h: exact_moves), for non-gaussian families when the R side asks
 * (R/auto-glmm.R). The whole-vector steps move (beta, z, theta) with b = L z
 * in one fixed metric; along the funnel between a term's sd and its group
 * effects the scale of each z_g given the rest changes with the sd, which
 * one metric cannot follow (grouseticks: LOCATION's sd 25% off after
 * 250,000 iterations). Two kinds of exact moves follow, each leaving the
 * posterior invariant:
 *
 * (1) Each term's covariance parameters theta_k in the centred form (Yu and
 * Meng 2011, interweaving a sampler's two parameterisations;
 * Papaspiliopoulos, Roberts and Skold 2007 on which suits which groups):
 * theta_k drawn again with every b_kg = L_k z_kg held fixed and z_kg =
 * L_k^{-1} b_kg moving with it. In the coordinates (beta, b, theta) the
 * posterior is p(y | beta, b) prod_g N(b_g; 0, L L') p(theta) (the
 * Jacobian of z -> b turns N(z; 0, I) into N(b; 0, L L')), so theta's
 * conditional given b is free of the data,
 *   p(theta) |L|^-G exp(-tr(L^-1 S L^-T) / 2),  S = sum_g b_g b_g',
 * each coordinate drawn from it by slice sampling (Neal 2003: stepping out,
 * then shrinkage); each evaluation is O(r^3), no pass over the data.
 *
 * (2) Each group's z_g given everything else, term by term, by a
 * Metropolis-Hastings step whose proposal is Newton's (iteratively
 * reweighted least squares, Gamerman 1997 for GLMMs): with H(z) = I + L'
 * (sum_i w_i u_i u_i') L the conditional's negative Hessian (w_i the
 * binomial's t p (1 - p) or the Poisson's mean: the canonical links' Fisher
 * information, equal to the observed; the negative binomial's observed
 * information, row_weight()) and gz its gradient, z' ~ N(z +
 * H(z)^-1 gz, H(z)^-1), accepted with the reverse proposal's density
 * evaluated with the metric at z' (exact). A Gaussian conditional is drawn
 * exactly; the group's rows are read twice (at z and at z'), keeping each
 * row's linear predictor up to date, so a sweep of a term is two passes.
 *
 * Then one pass brings the cached log posterior and gradient up to date.
 */
enum { CENTRED_SLICE_STEPS = 32, CENTRED_SLICE_SHRINK = 200 };
#define CENTRED_SLICE_WIDTH 1.0   /* in log sd and in the CPCs' atanh */
#define GLMM_TMAX (GLMM_RMAX + GLMM_RMAX * (GLMM_RMAX - 1) / 2)

/* A = L^{-1}, L lower triangular with a positive diagonal (r x r, row-major) */
static void lower_inverse(int r, const double *L, double *A) {
  for (int j = 0; j < r; j++)
    for (int i = 0; i < r; i++) {
      if (i < j) {
        A[i * r + j] = 0.0;
        continue;
      }
      double v = i == j ? 1.0 : 0.0;
      for (int k = j; k < i; k++) v -= L[i * r + k] * A[k * r + j];
      A[i * r + j] = v / L[i * r + i];
    }
}

/* term k's theta's log conditional given S = sum_g b_g b_g' (up to a constant) */
static double centred_logpost(const glmm_data *M, int k, const double *theta, const double *S,
                              double log_disp, double *L, double *A) {
  const int r = M->r[k], nc = r * (r - 1) / 2;
  for (int j = 0; j < r; j++) if (fabs(theta[j]) > 300.0) return -INFINITY;
  for (int j = 0; j < nc; j++) if (fabs(theta[r + j]) > 15.0) return -INFINITY;
  factor_of(r, theta, L);
  double log_det = 0.0;
  for (int i = 0; i < r; i++) {
    if (!(L[i * r + i] > 0.0)) return -INFINITY;
    log_det += log(L[i * r + i]);
  }
  lower_inverse(r, L, A);
  double quad = 0.0;   /* tr(A S A') */
  for (int i = 0; i < r; i++)
    for (int a = 0; a <= i; a++) {
      double v = 0.0;
      for (int b = 0; b <= i; b++) v += S[a * r + b] * A[i * r + b];
      quad += A[i * r + a] * v;
    }
  double unused = 0.0;
  const double f = decov_logprior(M, k, theta, log_disp, NULL, &unused) - M->G[k] * log_det -
                   0.5 * quad;
  return isnan(f) ? -INFINITY : f;
}

/* one slice-sampling update of theta[c] (theta is left holding the result) */
static void centred_slice(const glmm_data *M, int k, double *theta, int c, const double *S,
                          double log_disp, sgld_rng *rng, double *L, double *A) {
  const double x0 = theta[c];
  const double f0 = centred_logpost(M, k, theta, S, log_disp, L, A);
  if (!isfinite(f0)) return;
  const double level = f0 + log(rng_unif(rng));
  double lo = x0 - CENTRED_SLICE_WIDTH * rng_unif(rng), hi = lo + CENTRED_SLICE_WIDTH;
  int left = (int) (CENTRED_SLICE_STEPS * rng_unif(rng)), right = CENTRED_SLICE_STEPS - 1 - left;
  for (; left > 0; left--) {
    theta[c] = lo;
    if (!(centred_logpost(M, k, theta, S, log_disp, L, A) > level)) break;
    lo -= CENTRED_SLICE_WIDTH;
  }
  for (; right > 0; right--) {
    theta[c] = hi;
    if (!(centred_logpost(M, k, theta, S, log_disp, L, A) > level)) break;
    hi += CENTRED_SLICE_WIDTH;
  }
  for (int t = 0; t < CENTRED_SLICE_SHRINK; t++) {
    const double x1 = lo + (hi - lo) * rng_unif(rng);
    theta[c] = x1;
    if (centred_logpost(M, k, theta, S, log_disp, L, A) > level) return;
    if (x1 < x0) lo = x1; else hi = x1;
  }
  theta[c] = x0;   /* not reached for a finite f0: x0 itself lies in the slice */
}


/* row i's curvature: the negative second derivative of its weighted log
   likelihood in eta (negbin: (y + phi) mu phi / (phi + mu)^2, the observed
   information, positive for every y, where the log link is not canonical) */
static inline double row_weight(const glmm_data *M, R_xlen_t i, double eta, const glmm_aux *A) {
  const double c = M->wt ? M->wt[i] : 1.0;
  if (M->family == GLMM_BINOMIAL) {
    const double p = 1.0 / (1.0 + exp(-eta));
    return c * M->trials[i] * p * (1.0 - p);
  }
  if (M->family == GLMM_NEGBIN) {
    const double lse = log_sum_exp2(A->u, eta);
    return c * (M->y[i] + A->value) * exp(eta + A->u - 2.0 * lse);
  }
  return c * exp(eta);
}

/* row i's weighted log likelihood up to terms free of eta, and its
   derivative in eta into d[0]: for the group moves, whose ratios cancel
   those terms (negbin: lgamma(y + phi) - lgamma(phi) - log y!, and no
   derivative in log phi, whose digamma would cost most of the row) */
static inline double row_loglik_eta(const glmm_data *M, R_xlen_t i, double eta,
                                    const glmm_aux *A, double *d) {
  if (M->family != GLMM_NEGBIN) return row_loglik(M, i, eta, A, d);
  const double y = M->y[i], phi = A->value, lse = log_sum_exp2(A->u, eta);
  const double c = M->wt ? M->wt[i] : 1.0;
  d[0] = c * (y - (y + phi) * exp(eta - lse));
  return c * (phi * (A->u - lse) + y * (eta - lse));
}

/* in place: the lower Cholesky factor of the r x r symmetric positive
   definite H (row-major, lower triangle read); 0 if not positive definite */
static int cholesky_lower(int r, double *H) {
  for (int j = 0; j < r; j++) {
    double v = H[j * r + j];
    for (int k = 0; k < j; k++) v -= H[j * r + k] * H[j * r + k];
    if (!(v > 0.0)) return 0;
    H[j * r + j] = sqrt(v);
    for (int i = j + 1; i < r; i++) {
      double x = H[i * r + j];
      for (int k = 0; k < j; k++) x -= H[i * r + k] * H[j * r + k];
      H[i * r + j] = x / H[j * r + j];
    }
  }
  return 1;
}

/* x = (C C')^{-1} v for C lower triangular */
static void cholesky_solve(int r, const double *C, const double *v, double *x) {
  for (int i = 0; i < r; i++) {
    double t = v[i];
    for (int k = 0; k < i; k++) t -= C[i * r + k] * x[k];
    x[i] = t / C[i * r + i];
  }
  for (int i = r - 1; i >= 0; i--) {
    double t = x[i];
    for (int k = i + 1; k < r; k++) t -= C[k * r + i] * x[k];
    x[i] = t / C[i * r + i];
  }
}

/* Group grp of term k at z (its rows' linear predictors eta + u'db): the
   conditional's log density (up to a constant), its gradient in z into gz,
   the Newton mean z + H^-1 gz into mean and H's Cholesky factor into C. 0
   when H is not positive definite or a value is not finite. */
static int group_newton(const glmm_data *M, int k, int grp, const double *L, const double *z,
                        const double *db, const double *eta, const glmm_aux *aux, double *f,
                        double *gz, double *mean, double *C) {
  const int r = M->r[k];
  const R_xlen_t *rows = M->grp_rows[k];
  double s[GLMM_RMAX], A[GLMM_RMAX * GLMM_RMAX];
  for (int j = 0; j < r; j++) s[j] = 0.0;
  for (int j = 0; j < r * r; j++) A[j] = 0.0;
  double ll = 0.0;
  for (R_xlen_t t = M->grp_start[k][grp]; t < M->grp_start[k][grp + 1]; t++) {
    const R_xlen_t i = rows[t];
    const double *u = M->u + i * M->R + M->u_off[k];
    double e = eta[i];
    if (db) for (int j = 0; j < r; j++) e += u[j] * db[j];
    double d[2] = {0.0, 0.0};
    ll += row_loglik_eta(M, i, e, aux, d);
    const double wt = row_weight(M, i, e, aux);
    for (int a = 0; a < r; a++) {
      s[a] += d[0] * u[a];
      for (int b = 0; b <= a; b++) A[a * r + b] += wt * u[a] * u[b];
    }
  }
  double zz = 0.0;
  for (int j = 0; j < r; j++) zz += z[j] * z[j];
  *f = ll - 0.5 * zz;
  /* gz = L' s - z; H = I + L' A L (A's lower triangle, symmetric) */
  for (int a = 0; a < r; a++) {
    double v = 0.0;
    for (int i = a; i < r; i++) v += L[i * r + a] * s[i];
    gz[a] = v - z[a];
  }
  double AL[GLMM_RMAX * GLMM_RMAX];   /* A L */
  for (int i = 0; i < r; i++)
    for (int b = 0; b < r; b++) {
      double v = 0.0;
      for (int j = b; j < r; j++) v += (j <= i ? A[i * r + j] : A[j * r + i]) * L[j * r + b];
      AL[i * r + b] = v;
    }
  for (int a = 0; a < r; a++)
    for (int b = 0; b <= a; b++) {
      double v = a == b ? 1.0 : 0.0;
      for (int i = a; i < r; i++) v += L[i * r + a] * AL[i * r + b];
      C[a * r + b] = v;
    }
  if (!isfinite(*f) || !cholesky_lower(r, C)) return 0;
  cholesky_solve(r, C, gz, mean);
  for (int j = 0; j < r; j++) {
    mean[j] += z[j];
    if (!isfinite(mean[j])) return 0;
  }
  return 1;
}

/* log N(x; mean, (C C')^-1) up to a constant: -|C'(x - mean)|^2 / 2 + log|C| */
static double newton_log_density(int r, const double *C, const double *mean, const double *x) {
  double q = 0.0, log_det = 0.0;
  for (int a = 0; a < r; a++) {
    double v = 0.0;
    for (int i = a; i < r; i++) v += C[i * r + a] * (x[i] - mean[i]);
    q += v * v;
    log_det += log(C[a * r + a]);
  }
  return -0.5 * q + log_det;
}

/* one Metropolis-Hastings step with Newton's proposal for every group of
   term k; eta (every row's linear predictor) kept up to date */
static void group_sweep(const glmm_data *M, int k, double *w, double *eta, sgld_rng *rng) {
  const int r = M->r[k];
  double L[GLMM_RMAX * GLMM_RMAX], C0[GLMM_RMAX * GLMM_RMAX], C1[GLMM_RMAX * GLMM_RMAX];
  double g0[GLMM_RMAX], g1[GLMM_RMAX], m0[GLMM_RMAX], m1[GLMM_RMAX], z1[GLMM_RMAX];
  double dz[GLMM_RMAX], db[GLMM_RMAX];
  term_factor(M, k, w, L);
  const glmm_aux aux = aux_of(M, w);
  for (int grp = 0; grp < M->G[k]; grp++) {
    double *z0 = w + M->z_off[k] + (R_xlen_t) grp * r;
    double f0, f1;
    if (!group_newton(M, k, grp, L, z0, NULL, eta, &aux, &f0, g0, m0, C0)) continue;
    /* z1 = m0 + C0'^-1 e: covariance (C0 C0')^-1 */
    for (int j = 0; j < r; j++) dz[j] = rng_norm(rng);
    for (int i = r - 1; i >= 0; i--) {
      double t = dz[i];
      for (int a = i + 1; a < r; a++) t -= C0[a * r + i] * z1[a];
      z1[i] = t / C0[i * r + i];
    }
    for (int j = 0; j < r; j++) z1[j] += m0[j];
    for (int j = 0; j < r; j++) dz[j] = z1[j] - z0[j];
    for (int i = 0; i < r; i++) {
      db[i] = 0.0;
      for (int j = 0; j <= i; j++) db[i] += L[i * r + j] * dz[j];
    }
    const int ok = group_newton(M, k, grp, L, z1, db, eta, &aux, &f1, g1, m1, C1);
    const double u = rng_unif(rng);
    if (!ok) continue;
    const double log_ratio = f1 - f0 + newton_log_density(r, C1, m1, z0) -
                             newton_log_density(r, C0, m0, z1);
    if (!(log(u) < log_ratio)) continue;
    for (R_xlen_t t = M->grp_start[k][grp]; t < M->grp_start[k][grp + 1]; t++) {
      const R_xlen_t i = M->grp_rows[k][t];
      const double *uk = M->u + i * M->R + M->u_off[k];
      for (int j = 0; j < r; j++) eta[i] += uk[j] * db[j];
    }
    for (int j = 0; j < r; j++) z0[j] = z1[j];
  }
}

/* (1) term k's theta in the centred form, z following with b fixed */
static void centred_move(const glmm_data *M, int k, double *w, sgld_rng *rng) {
  const int r = M->r[k], G = M->G[k], nt = r + r * (r - 1) / 2;
  double L0[GLMM_RMAX * GLMM_RMAX], L1[GLMM_RMAX * GLMM_RMAX], A[GLMM_RMAX * GLMM_RMAX];
  double S[GLMM_RMAX * GLMM_RMAX], b[GLMM_RMAX];
  double *theta = w + M->t_off[k], *z = w + M->z_off[k];
  factor_of(r, theta, L0);
  for (int j = 0; j < r * r; j++) S[j] = 0.0;
  for (int grp = 0; grp < G; grp++) {
    const double *zg = z + (R_xlen_t) grp * r;
    for (int i = 0; i < r; i++) {
      b[i] = 0.0;
      for (int j = 0; j <= i; j++) b[i] += L0[i * r + j] * zg[j];
    }
    for (int i = 0; i < r; i++)
      for (int j = 0; j < r; j++) S[i * r + j] += b[i] * b[j];
  }
  const double log_disp = M->i_aux >= 0 ? w[M->i_aux] : 0.0;
  for (int c = 0; c < nt; c++) centred_slice(M, k, theta, c, S, log_disp, rng, L1, A);
  factor_of(r, theta, L1);
  for (int grp = 0; grp < G; grp++) {
    double *zg = z + (R_xlen_t) grp * r;
    for (int i = 0; i < r; i++) {
      b[i] = 0.0;
      for (int j = 0; j <= i; j++) b[i] += L0[i * r + j] * zg[j];
    }
    for (int i = 0; i < r; i++) {   /* z = L1^-1 b, row by row */
      double v = b[i];
      for (int j = 0; j < i; j++) v -= L1[i * r + j] * zg[j];
      zg[i] = v / L1[i * r + i];
    }
  }
}


static void glmm_exact_moves(const void *data, double *w, double *log_post, double *g,
                             sgld_rng *rng, double *work) {
  const glmm_data *M = data;
  if (M->moves != MOVES_GROUPS) for (int k = 0; k < M->K; k++) centred_move(M, k, w, rng);
  /* every row's linear predictor, after the work the full pass below uses */
  double *eta = work + 2 * ((size_t) M->nz + (size_t) M->nl);
  group_effects(M, w, work, work + M->nz);
  for (R_xlen_t i = 0; i < M->n; i++) eta[i] = row_eta(M, i, w, work);
  if (M->moves != MOVES_COVARIANCE) for (int k = 0; k < M->K; k++) group_sweep(M, k, w, eta, rng);
  for (int j = 0; j < M->d; j++) g[j] = 0.0;
  const double ll = glmm_loglik_grad(M, w, NULL, M->n, g, work);
  *log_post = ll + glmm_prior(M, w, g);
}

/* a finite w whose correlations round to +-1 leaves a singular factor */
static int glmm_in_domain(const void *data, const double *w) {
  const glmm_data *M = data;
  for (int k = 0; k < M->K; k++) {
    const int r = M->r[k], nc = r * (r - 1) / 2;
    const double *theta = w + M->t_off[k];
    for (int j = 0; j < r; j++) if (fabs(theta[j]) > 300.0) return 0;
    for (int j = 0; j < nc; j++) if (fabs(theta[r + j]) > 15.0) return 0;
  }
  return M->i_aux < 0 || fabs(w[M->i_aux]) < 300.0;
}

static const int *list_ints(SEXP spec, const char *name, R_xlen_t len) {
  SEXP x = list_elt(spec, name);
  if (TYPEOF(x) != INTSXP || XLENGTH(x) != len)
    error("internal: '%s' must be an integer vector of length %lld", name, (long long) len);
  return INTEGER(x);
}

/* Each term's rows by group (a counting sort), for the group-wise moves:
   group g of term k holds rows grp_rows[k][grp_start[k][g] .. grp_start[k][g + 1]). */
static void glmm_index_groups(glmm_data *M) {
  const int K = M->K;
  const R_xlen_t n = M->n;
  M->grp_start = (R_xlen_t **) R_alloc(K, sizeof(R_xlen_t *));
  M->grp_rows = (R_xlen_t **) R_alloc(K, sizeof(R_xlen_t *));
  for (int k = 0; k < K; k++) {
    R_xlen_t *start = (R_xlen_t *) R_alloc((size_t) M->G[k] + 1, sizeof(R_xlen_t));
    R_xlen_t *rows = (R_xlen_t *) R_alloc((size_t) n, sizeof(R_xlen_t));
    for (int g = 0; g <= M->G[k]; g++) start[g] = 0;
    for (R_xlen_t i = 0; i < n; i++) start[M->group[i * K + k] + 1]++;
    for (int g = 0; g < M->G[k]; g++) start[g + 1] += start[g];
    for (R_xlen_t i = 0; i < n; i++) {
      const int g = M->group[i * K + k];
      rows[start[g]++] = i;
    }
    for (int g = M->G[k]; g > 0; g--) start[g] = start[g - 1];
    start[0] = 0;
    M->grp_start[k] = start;
    M->grp_rows[k] = rows;
  }
}

/* each row's normalising term of its log likelihood (free of the parameters) */
static double *row_log_norm(const glmm_data *M) {
  double *ln = (double *) R_alloc((size_t) M->n, sizeof(double));
  for (R_xlen_t i = 0; i < M->n; i++)
    ln[i] = M->family == GLMM_BINOMIAL ? lchoose(M->trials[i], M->y[i])
            : M->family != GLMM_GAUSSIAN ? -lgammafn(M->y[i] + 1.0) : 0.0;
  return ln;
}

/* the negative binomial's lgamma and digamma tables' length (aux_tables()):
   one entry a count up to the largest, if below GLMM_TABLE_MAX; 0 otherwise */
static int count_table_len(const glmm_data *M) {
  if (M->family != GLMM_NEGBIN) return 0;
  double top = 0.0;
  for (R_xlen_t i = 0; i < M->n; i++) {
    /* the tables are indexed by the count (R/model-glmm.R checks) */
    if (!(M->y[i] >= 0.0) || M->y[i] != floor(M->y[i]))
      error("internal: glmm negbin counts must be whole numbers >= 0");
    if (M->y[i] > top) top = M->y[i];
  }
  return top < GLMM_TABLE_MAX ? (int) top + 1 : 0;
}

sgld_model model_glmm_build(SEXP spec) {
  glmm_data *M = (glmm_data *) R_alloc(1, sizeof(glmm_data));
  M->family = list_int(spec, "family_code");
  M->p = list_int(spec, "p");
  M->K = list_int(spec, "K");
  M->n = (R_xlen_t) list_real(spec, "n");
  if (M->family < 0 || M->family > GLMM_NEGBIN || M->p < 0 || M->K < 1 || M->n < 1)
    error("internal: malformed glmm model");
  const int K = M->K;
  M->r = list_ints(spec, "r", K);
  M->G = list_ints(spec, "G", K);
  int *z_off = (int *) R_alloc(K, sizeof(int)), *u_off = (int *) R_alloc(K, sizeof(int));
  int *t_off = (int *) R_alloc(K, sizeof(int)), *l_off = (int *) R_alloc(K, sizeof(int));
  int pos = M->p, R = 0, nl = 0;
  for (int k = 0; k < K; k++) {
    if (M->r[k] < 1 || M->r[k] > GLMM_RMAX || M->G[k] < 1)
      error("internal: term %d has %d coefficients and %d groups", k + 1, M->r[k], M->G[k]);
    z_off[k] = pos;
    pos += M->r[k] * M->G[k];
    u_off[k] = R;
    R += M->r[k];
    l_off[k] = nl;
    nl += M->r[k] * M->r[k];
  }
  M->nz = pos - M->p;
  for (int k = 0; k < K; k++) {
    t_off[k] = pos;
    pos += M->r[k] + M->r[k] * (M->r[k] - 1) / 2;
  }
  M->i_aux = M->family == GLMM_GAUSSIAN || M->family == GLMM_NEGBIN ? pos++ : -1;
  M->d = pos;
  if (M->d != list_int(spec, "d")) error("internal: glmm model's d does not add up");
  M->R = R;
  M->nl = nl;
  M->z_off = z_off;
  M->u_off = u_off;
  M->t_off = t_off;
  M->l_off = l_off;
  const R_xlen_t n = M->n;
  M->x = list_doubles(spec, "x", (R_xlen_t) M->p * n);
  M->u = list_doubles(spec, "u", (R_xlen_t) R * n);
  M->group = list_ints(spec, "group", (R_xlen_t) K * n);
  for (R_xlen_t i = 0; i < (R_xlen_t) K * n; i++)
    if (M->group[i] < 0 || M->group[i] >= M->G[i % K])
      error("internal: glmm group index out of range");
  M->y = list_doubles(spec, "y", n);
  M->trials = M->family == GLMM_BINOMIAL ? list_doubles(spec, "trials", n) : NULL;
  M->offset = list_optional_doubles(spec, "obs_offset", n);
  M->wt = list_optional_doubles(spec, "obs_weight", n);
  if (M->wt)
    for (R_xlen_t i = 0; i < n; i++)
      if (!(M->wt[i] >= 0.0) || !isfinite(M->wt[i])) error("internal: glmm weights must be finite and >= 0");
  M->log_norm = row_log_norm(M);
  M->prior_loc = list_doubles(spec, "prior_loc", M->p);
  M->prior_scale = list_doubles(spec, "prior_scale", M->p);
  M->aux_rate = M->i_aux >= 0 ? list_real(spec, "aux_rate") : 1.0;
  M->reg = list_doubles(spec, "decov_regularization", K);
  M->conc = list_doubles(spec, "decov_concentration", K);
  M->shape = list_doubles(spec, "decov_shape", K);
  M->scale = list_doubles(spec, "decov_scale", K);
  /* the exact moves, when the R side asks for them (R/auto-glmm.R): 1 both
     kinds, 2 the group effects' only, 3 the covariances' only (for tests) */
  SEXP moves = list_optional(spec, "exact_moves");
  M->moves = moves == R_NilValue ? MOVES_NONE : asInteger(moves);
  if (M->moves == NA_INTEGER || M->moves < MOVES_NONE || M->moves > MOVES_COVARIANCE)
    error("internal: 'exact_moves' must be 0 to 3");
  const int any_moves = M->moves != MOVES_NONE;
  if (any_moves && M->family == GLMM_GAUSSIAN)
    error("internal: the exact moves are for non-gaussian families");
  M->grp_start = NULL;
  M->grp_rows = NULL;
  if (any_moves) glmm_index_groups(M);
  /* negbin's tables lie past the work the rest uses */
  M->table_len = count_table_len(M);
  M->table_off = (size_t) 2 * ((size_t) M->nz + (size_t) nl) + (any_moves ? (size_t) n : 0);

  return (sgld_model) {
    .d = M->d,
    .n = n,
    .data = M,
    .grad_loglik = glmm_grad_loglik,
    .loglik = glmm_loglik,
    .loglik_grad = glmm_loglik_grad,
    .loglik_rows = glmm_loglik_rows,
    .grad_logprior = glmm_grad_logprior,
    .logprior = glmm_logprior,
    .in_domain = glmm_in_domain,
    /* the exact moves keep every row's linear predictor after the rest */
    .work_size = M->table_off + (size_t) 2 * (size_t) M->table_len,
    .local_params = 1,
    .exact_moves = any_moves ? glmm_exact_moves : NULL
  };
}
