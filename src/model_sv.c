/*
 * Stochastic volatility: one latent per day, a few global parameters.
 *
 * The returns y_1..y_T are items; the latent path x_1..x_T (h for the AR(1)
 * model, s for the random walk) has one coordinate per item. Two variants:
 *
 *   "ar1" (stochvol's model):  y_t ~ N(0, e^{h_t})  or  e^{h_t/2} times a
 *       standardised Student t_nu (variance 1, nu > 2);
 *       h_1 ~ N(mu, sigma^2 / (1 - phi^2)),
 *       h_t | h_{t-1} ~ N(mu + phi (h_{t-1} - mu), sigma^2);
 *       mu ~ N(m, s^2), (phi + 1)/2 ~ Beta(a, b), sigma ~ |N(0, B^2)|,
 *       nu - 2 ~ Exp(lambda).
 *   "rw" (Keng's, after the PyMC example): y_t ~ t_nu(0, scale e^{s_t}) (or
 *       N(0, e^{2 s_t})); s_1 ~ N(0, s1^2), s_t | s_{t-1} ~ N(s_{t-1}, sigma^2);
 *       sigma ~ Exp(lambda_sigma), nu ~ Exp(lambda_nu).
 *
 * Sampler scale: w = (globals, x_1..x_T) with the globals unconstrained:
 * ar1: (mu, psi, omega[, kappa]) with phi = tanh psi, sigma = e^omega,
 * nu = 2 + e^kappa; rw: (omega[, kappa]) with nu = e^kappa. The latent path
 * is centred (x itself, not its innovations): see R/model-sv.R for the
 * measurement behind that choice.
 *
 * Both observation models are one family: y_t ~ t_nu(0, e^{a x_t} c), with
 * a = 1/2 (ar1) or 1 (rw), c^2 nu = D(nu) = nu - 2 (standardised) or nu; the
 * normal is the limit. With q_t = y_t^2 e^{-2 a x_t} / D:
 *   log f = lgamma((nu+1)/2) - lgamma(nu/2) - log(pi D)/2 - a x_t
 *           - (nu+1)/2 log1p(q_t).
 * In both parameterisations d nu / d kappa = D, which the gradient uses.
 *
 * The observation densities are the likelihood (scaled by n/m by the
 * engine, which is why the R side allows only full batches); the latent
 * process and the globals' priors are the prior. Everything is O(T): the
 * process couples neighbours only, so no T x T matrix is ever formed.
 */
#include <limits.h>
#include <R.h>
#include <Rmath.h>
#include "sgld.h"

enum { SV_AR1 = 0, SV_RW = 1 };

typedef struct sv_data {
  int type;              /* SV_AR1 or SV_RW */
  int t_errors;          /* Student t (1) or normal (0) observations */
  int k;                 /* globals before the path */
  int i_nu;              /* index of kappa in w, or -1 */
  R_xlen_t n;            /* T */
  const double *y2;      /* squared returns */
  double mu_mean, mu_sd, phi_a, phi_b, sigma_scale;   /* ar1 priors */
  double sigma_rate, s1_sd;                           /* rw priors */
  double nu_rate;
  double a;              /* the latent's factor in the log scale: 1/2 or 1 */
  const double *centre;  /* a rough path (smoothed log squared returns), for path_gaussian */
  int level;             /* ar1: mu joins the path's Gaussian block (path_level) */
} sv_data;

/* log(1 + e^x) without overflow */
static inline double softplus(double x) {
  return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* nu and D(nu) = d nu / d kappa from kappa */
static inline double sv_nu(const sv_data *S, double kappa, double *D) {
  const double e = exp(kappa);
  *D = e;
  return S->type == SV_AR1 ? 2.0 + e : e;
}

/* the terms of the t density, per item, that depend on nu only */
static inline double t_const(double nu, double D) {
  return lgammafn(0.5 * (nu + 1.0)) - lgammafn(0.5 * nu) - 0.5 * log(M_PI * D);
}

static double sv_loglik(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                        double *work) {
  (void) work;
  const sv_data *S = data;
  const double *x = w + S->k, a = S->a;
  if (!idx) m = S->n;
  double ll = 0.0;
  if (S->t_errors) {
    double D;
    const double nu = sv_nu(S, w[S->i_nu], &D), half = 0.5 * (nu + 1.0), invD = 1.0 / D;
    for (R_xlen_t j = 0; j < m; j++) {
      const R_xlen_t t = idx ? idx[j] : j;
      const double q = S->y2[t] * exp(-2.0 * a * x[t]) * invD;
      ll -= a * x[t] + half * log1p(q);
    }
    ll += (double) m * t_const(nu, D);
  } else {
    for (R_xlen_t j = 0; j < m; j++) {
      const R_xlen_t t = idx ? idx[j] : j;
      ll -= a * x[t] + 0.5 * S->y2[t] * exp(-2.0 * a * x[t]);
    }
    ll -= 0.5 * M_LN_2PI * (double) m;
  }
  return ll;
}

/* each day's density given its latent, for log_lik() (sgld.h: loglik_rows):
   the terms of sv_loglik for one day */
static void sv_loglik_rows(const void *data, const double *w, R_xlen_t from, R_xlen_t to,
                           double *out) {
  const sv_data *S = data;
  const double *x = w + S->k, a = S->a;
  if (S->t_errors) {
    double D;
    const double nu = sv_nu(S, w[S->i_nu], &D), half = 0.5 * (nu + 1.0), invD = 1.0 / D;
    const double c = t_const(nu, D);
    for (R_xlen_t t = from; t < to; t++)
      out[t - from] = c - a * x[t] - half * log1p(S->y2[t] * exp(-2.0 * a * x[t]) * invD);
  } else {
    for (R_xlen_t t = from; t < to; t++)
      out[t - from] = -0.5 * M_LN_2PI - a * x[t] - 0.5 * S->y2[t] * exp(-2.0 * a * x[t]);
  }
}

static void sv_grad_loglik(const void *data, const double *w, const R_xlen_t *idx, int m,
                           double *g, double *work) {
  (void) work;
  const sv_data *S = data;
  const double *x = w + S->k, a = S->a;
  double *gx = g + S->k;
  if (S->t_errors) {
    double D;
    const double nu = sv_nu(S, w[S->i_nu], &D), half = 0.5 * (nu + 1.0), invD = 1.0 / D;
    double sum_log1p = 0.0, sum_frac = 0.0;
    for (int j = 0; j < m; j++) {
      const R_xlen_t t = idx[j];
      const double q = S->y2[t] * exp(-2.0 * a * x[t]) * invD, frac = q / (1.0 + q);
      gx[t] += a * (2.0 * half * frac - 1.0);
      sum_log1p += log1p(q);
      sum_frac += frac;
    }
    /* d/dkappa of the per-item terms: D (d/dnu), with dq/dnu = -q / D */
    g[S->i_nu] += (double) m * (0.5 * D * (digamma(half) - digamma(0.5 * nu)) - 0.5)
                  - 0.5 * D * sum_log1p + half * sum_frac;
  } else {
    for (int j = 0; j < m; j++) {
      const R_xlen_t t = idx[j];
      gx[t] += a * (S->y2[t] * exp(-2.0 * a * x[t]) - 1.0);
    }
  }
}

/* log prior of the globals (with the Jacobians of their transforms) and of
   the latent process; with g, also add its gradient */
static double sv_prior(const sv_data *S, const double *w, double *g) {
  const R_xlen_t T = S->n;
  const double *x = w + S->k;
  double lp = 0.0;
  if (S->t_errors) {
    /* nu - 2 or nu ~ Exp(lambda), i.e. e^kappa, with Jacobian e^kappa */
    const double kappa = w[S->i_nu], e = exp(kappa);
    lp += log(S->nu_rate) - S->nu_rate * e + kappa;
    if (g) g[S->i_nu] += 1.0 - S->nu_rate * e;
  }
  if (S->type == SV_AR1) {
    const double mu = w[0], psi = w[1], omega = w[2];
    const double phi = tanh(psi), sig2 = exp(2.0 * omega), isig2 = 1.0 / sig2;
    /* log((1+phi)/2) = -softplus(-2 psi), log((1-phi)/2) = -softplus(2 psi):
       accurate where phi rounds to +-1 */
    const double lp1 = -softplus(-2.0 * psi), lm1 = -softplus(2.0 * psi);
    const double one_m_phi2 = 4.0 * exp(lp1 + lm1);
    /* mu ~ N(m, s^2) */
    const double zmu = (mu - S->mu_mean) / S->mu_sd;
    lp += -0.5 * zmu * zmu - log(S->mu_sd) - 0.5 * M_LN_2PI;
    /* (phi+1)/2 ~ Beta(a, b), with Jacobian (1 - phi^2)/2:
       a log((1+phi)/2) + b log((1-phi)/2) + log 2 - lbeta(a, b) */
    lp += S->phi_a * lp1 + S->phi_b * lm1 + M_LN2 - lbeta(S->phi_a, S->phi_b);
    /* sigma ~ |N(0, B^2)|, with Jacobian sigma */
    lp += M_LN2 - 0.5 * M_LN_2PI - log(S->sigma_scale)
          - 0.5 * sig2 / (S->sigma_scale * S->sigma_scale) + omega;
    /* the stationary AR(1) path */
    const double c1 = x[0] - mu;
    double ss = one_m_phi2 * c1 * c1, cross = 0.0;
    for (R_xlen_t t = 1; t < T; t++) {
      const double cprev = x[t - 1] - mu, e = (x[t] - mu) - phi * cprev;
      ss += e * e;
      cross += e * cprev;
    }
    lp += -(double) T * (omega + 0.5 * M_LN_2PI) + 0.5 * (M_LN2 * 2.0 + lp1 + lm1)
          - 0.5 * ss * isig2;
    if (g) {
      double *gx = g + S->k, sum_gx = 0.0;
      /* d/dx_t: -e_t / sigma^2 + phi e_{t+1} / sigma^2, with e_1 = (1 - phi^2) c_1 */
      double e_next = T > 1 ? (x[1] - mu) - phi * c1 : 0.0;
      double gt = (-one_m_phi2 * c1 + (T > 1 ? phi * e_next : 0.0)) * isig2;
      gx[0] += gt;
      sum_gx += gt;
      for (R_xlen_t t = 1; t < T; t++) {
        const double e = e_next;
        e_next = t + 1 < T ? (x[t + 1] - mu) - phi * (x[t] - mu) : 0.0;
        gt = (-e + phi * e_next) * isig2;
        gx[t] += gt;
        sum_gx += gt;
      }
      /* the process depends on x - mu only */
      g[0] += -sum_gx - zmu / S->mu_sd;
      /* phi: -phi / (1 - phi^2) + (phi c_1^2 + sum e_t c_{t-1}) / sigma^2, times
         d phi / d psi = 1 - phi^2; Beta prior and Jacobian: a (1-phi) - b (1+phi) */
      g[1] += -phi + one_m_phi2 * (phi * c1 * c1 + cross) * isig2
              + S->phi_a * (1.0 - phi) - S->phi_b * (1.0 + phi);
      g[2] += -(double) T + ss * isig2 - sig2 / (S->sigma_scale * S->sigma_scale) + 1.0;
    }
  } else {
    const double omega = w[0], sigma = exp(omega), isig2 = exp(-2.0 * omega);
    /* sigma ~ Exp(lambda), with Jacobian sigma */
    lp += log(S->sigma_rate) - S->sigma_rate * sigma + omega;
    const double z1 = x[0] / S->s1_sd;
    double ss = 0.0;
    for (R_xlen_t t = 1; t < T; t++) {
      const double e = x[t] - x[t - 1];
      ss += e * e;
    }
    lp += -0.5 * z1 * z1 - log(S->s1_sd) - 0.5 * M_LN_2PI
          - (double) (T - 1) * (omega + 0.5 * M_LN_2PI) - 0.5 * ss * isig2;
    if (g) {
      double *gx = g + S->k;
      gx[0] -= z1 / S->s1_sd;
      for (R_xlen_t t = 1; t < T; t++) {
        const double e = (x[t] - x[t - 1]) * isig2;
        gx[t] -= e;
        gx[t - 1] += e;
      }
      g[0] += -(double) (T - 1) + ss * isig2 + 1.0 - S->sigma_rate * sigma;
    }
  }
  return lp;
}

static double sv_logprior(const void *data, const double *w) {
  return sv_prior(data, w, NULL);
}

static void sv_grad_logprior(const void *data, const double *w, double *g) {
  sv_prior(data, w, g);
}

/* The data's Fisher information per day about its latent, c(nu) =
   a^2 2 nu / (nu + 3) for a t scale (2 a^2 for the normal), and its
   derivative in kappa */
static double sv_day_info(const sv_data *S, const double *w, double *dkappa) {
  const double a2 = S->a * S->a;
  *dkappa = 0.0;
  if (!S->t_errors) return 2.0 * a2;
  double D;
  const double nu = sv_nu(S, w[S->i_nu], &D);
  *dkappa = a2 * 6.0 / ((nu + 3.0) * (nu + 3.0)) * D;
  return a2 * 2.0 * nu / (nu + 3.0);
}

/* path_gaussian (sgld.h; the "whiten" rule): given the globals, the path is
   approximately normal with precision M = (the process's precision) + c I,
   c the data's information per day, and M^{-1} b = the process's mean
   smoothed towards the fixed rough path `centre` (b = Q m + c centre, m the
   process's mean: mu for ar1, 0 for rw). For ar1 with the level in the
   block (S->level), mu joins the path: the block (x, mu) has the prior
   precision [[Q, -Q 1], [-1'Q, 1'Q 1 + 1/s^2]] and b = (c centre, m/s^2),
   so M and b no longer depend on mu. j < 0: M and b; j >= 0: their
   derivatives in the j-th global. */
static void sv_path_gaussian(const void *data, const double *w, int j, double *diag, double *off,
                             double *b, double *border) {
  const sv_data *S = data;
  const R_xlen_t T = S->n;
  double dc;
  const double c = sv_day_info(S, w, &dc);
  if (j >= 0 && j == S->i_nu) {          /* kappa: through c only */
    for (R_xlen_t t = 0; t < T; t++) {
      diag[t] = dc;
      b[t] = dc * S->centre[t];
    }
    for (R_xlen_t t = 0; t + 1 < T; t++) off[t] = 0.0;
    if (S->level)
      for (R_xlen_t t = 0; t < T + 2; t++) border[t] = 0.0;
    return;
  }
  if (S->type == SV_RW) {
    /* Q = D'D / sigma^2 + e_1 e_1' / s1^2; omega = log sigma scales the first term by -2 */
    const double isig2 = exp(-2.0 * w[0]), f = j < 0 ? 1.0 : -2.0;
    for (R_xlen_t t = 0; t < T; t++) {
      diag[t] = f * 2.0 * isig2 + (j < 0 ? c : 0.0);
      b[t] = j < 0 ? c * S->centre[t] : 0.0;
    }
    diag[0] -= f * isig2;
    diag[T - 1] -= f * isig2;
    if (j < 0) diag[0] += 1.0 / (S->s1_sd * S->s1_sd);
    for (R_xlen_t t = 0; t + 1 < T; t++) off[t] = -f * isig2;
    return;
  }
  /* ar1: Q = (1/sigma^2) tridiag(-phi; 1, 1 + phi^2, ..., 1 + phi^2, 1; -phi), and
     Q 1 = (1/sigma^2) (1 - phi, (1 - phi)^2, ..., (1 - phi)^2, 1 - phi): the
     process's part of M (qd_*, q_off) and Q 1 (q1_*), with their derivatives */
  const double mu = S->level ? 0.0 : w[0], phi = tanh(w[1]), J = 1.0 - phi * phi;
  const double isig2 = exp(-2.0 * w[2]);
  double qd_end, qd_mid, q_off, q1_end, q1_mid, cc = 0.0;
  if (j < 0 || j == 2) {       /* values; omega scales every term by -2 */
    const double f = j < 0 ? 1.0 : -2.0;
    qd_end = f * isig2;
    qd_mid = f * (1.0 + phi * phi) * isig2;
    q_off = -f * phi * isig2;
    q1_end = f * (1.0 - phi) * isig2;
    q1_mid = f * (1.0 - phi) * (1.0 - phi) * isig2;
    if (j < 0) cc = c;
  } else if (j == 0) {         /* mu outside the block: b only */
    qd_end = qd_mid = q_off = 0.0;
    q1_end = (1.0 - phi) * isig2;
    q1_mid = (1.0 - phi) * (1.0 - phi) * isig2;
  } else {                     /* psi = atanh(phi): d phi / d psi = 1 - phi^2 */
    qd_end = 0.0;
    qd_mid = 2.0 * phi * J * isig2;
    q_off = -J * isig2;
    q1_end = -J * isig2;
    q1_mid = -2.0 * (1.0 - phi) * J * isig2;
  }
  const double bm = j == 0 ? 1.0 : mu;     /* b = mu Q 1 + c centre */
  for (R_xlen_t t = 0; t < T; t++) {
    diag[t] = qd_mid + cc;
    b[t] = bm * q1_mid + cc * S->centre[t];
  }
  diag[0] = diag[T - 1] = qd_end + cc;
  b[0] = bm * q1_end + cc * S->centre[0];
  b[T - 1] = bm * q1_end + cc * S->centre[T - 1];
  for (R_xlen_t t = 0; t + 1 < T; t++) off[t] = q_off;
  if (S->level) {
    /* the level's column -Q 1, its diagonal 1'Q 1 + 1/s^2 and its b, m/s^2 */
    for (R_xlen_t t = 0; t < T; t++) border[t] = -q1_mid;
    border[0] = border[T - 1] = -q1_end;
    border[T] = 2.0 * q1_end + (double) (T - 2) * q1_mid;
    border[T + 1] = 0.0;
    if (j < 0) {
      border[T] += 1.0 / (S->mu_sd * S->mu_sd);
      border[T + 1] = S->mu_mean / (S->mu_sd * S->mu_sd);
    }
  }
}

/* Beyond these the transforms leave the doubles (e^{2 omega}, e^kappa) and
   the chain is treated as diverged rather than drifting with meaningless
   finite numbers. The path is not checked here (an O(T) pass per step): a
   latent far enough out to overflow gives a non-finite gradient, which the
   driver catches. */
static int sv_in_domain(const void *data, const double *w) {
  const sv_data *S = data;
  for (int j = 0; j < S->k; j++)
    if (!(fabs(w[j]) < 300.0)) return 0;
  return 1;
}

sgld_model model_sv_build(SEXP spec) {
  sv_data *S = (sv_data *) R_alloc(1, sizeof(sv_data));
  S->type = list_int(spec, "sv_type");
  S->t_errors = list_int(spec, "t_errors");
  S->n = (R_xlen_t) list_real(spec, "n");
  if (S->n < 2 || (S->type != SV_AR1 && S->type != SV_RW) ||
      (S->t_errors != 0 && S->t_errors != 1))
    error("internal: stochastic volatility model needs T >= 2, a known type and t_errors 0 or 1");
  S->y2 = list_doubles(spec, "y2", S->n);
  S->centre = list_doubles(spec, "path_centre", S->n);
  S->k = (S->type == SV_AR1 ? 3 : 1) + S->t_errors;
  S->i_nu = S->t_errors ? S->k - 1 : -1;
  S->a = S->type == SV_AR1 ? 0.5 : 1.0;
  S->level = S->type == SV_AR1 ? list_int(spec, "path_level") : 0;
  if (S->level != 0 && S->level != 1) error("internal: path_level must be 0 or 1");
  S->mu_mean = list_real(spec, "mu_mean");
  S->mu_sd = list_real(spec, "mu_sd");
  S->phi_a = list_real(spec, "phi_a");
  S->phi_b = list_real(spec, "phi_b");
  S->sigma_scale = list_real(spec, "sigma_scale");
  S->sigma_rate = list_real(spec, "sigma_rate");
  S->s1_sd = list_real(spec, "s1_sd");
  S->nu_rate = list_real(spec, "nu_rate");
  if (!(S->mu_sd > 0 && S->phi_a > 0 && S->phi_b > 0 && S->sigma_scale > 0 &&
        S->sigma_rate > 0 && S->s1_sd > 0 && S->nu_rate > 0))
    error("internal: stochastic volatility priors must be positive");
  if ((double) S->n + S->k > (double) INT_MAX)
    error("internal: stochastic volatility model has too many parameters");

  return (sgld_model) {
    .d = S->k + (int) S->n,
    .n = S->n,
    .data = S,
    .grad_loglik = sv_grad_loglik,
    .loglik = sv_loglik,
    .loglik_rows = sv_loglik_rows,
    .grad_logprior = sv_grad_logprior,
    .logprior = sv_logprior,
    .in_domain = sv_in_domain,
    .local_params = 1,
    .path_gaussian = sv_path_gaussian,
    .path_k = S->k,
    .path_level = S->level
  };
}
