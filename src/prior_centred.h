/*
 * The regressions' coefficient prior (R/priors.R: resolve_coef_prior()):
 * independent normals N(loc_j, scale_j^2), where an infinite scale is a flat
 * prior, and optionally a normal prior on one linear combination u'w, the
 * intercept at centred predictors (u = 1 at the intercept, the columns'
 * means elsewhere), rstanarm's prior_intercept. The change of variables
 * from (alpha, beta) to (alpha + xbar'beta, beta) has Jacobian 1, so this
 * is that prior written on the raw coefficients: a Gaussian with a rank-one
 * term in its precision, whose log density and derivatives cost O(p), and
 * the design stays as the user gave it (sparse stays sparse).
 *
 * model_logistic.c keeps its own independent part (Laplace priors, its
 * vectorised paths) and adds the centred term; model_linear.c,
 * model_poisson.c and model_negbin.c use the whole.
 */
#ifndef SGLD_PRIOR_CENTRED_H
#define SGLD_PRIOR_CENTRED_H

#include <R.h>
#include <Rinternals.h>
#include <Rmath.h>
#include "sgld.h"

typedef struct coef_prior {
  int p;
  const double *loc, *scale;    /* per coefficient; scale may be +Inf (flat) */
  const double *centre;         /* u, length p, or NULL: no centred term */
  double centre_loc, centre_scale;
} coef_prior;

static inline void coef_prior_read(coef_prior *cp, SEXP spec, int p) {
  cp->p = p;
  cp->loc = list_doubles(spec, "prior_loc", p);
  cp->scale = list_doubles(spec, "prior_scale", p);
  for (int j = 0; j < p; j++)
    if (!(cp->scale[j] > 0)) error("internal: 'prior_scale' must be positive");
  cp->centre = list_optional_doubles(spec, "prior_centre", p);
  cp->centre_loc = cp->centre ? list_real(spec, "prior_centre_loc") : 0.0;
  cp->centre_scale = cp->centre ? list_real(spec, "prior_centre_scale") : 1.0;
  if (cp->centre && !(cp->centre_scale > 0 && R_FINITE(cp->centre_scale)))
    error("internal: 'prior_centre_scale' must be positive and finite");
}

/* (u'w - centre_loc) / centre_scale^2, the centred term's slope in u'w */
static inline double centred_slope(const coef_prior *cp, const double *w) {
  double a = 0.0;
  for (int j = 0; j < cp->p; j++) a += cp->centre[j] * w[j];
  return (a - cp->centre_loc) / (cp->centre_scale * cp->centre_scale);
}

/* log N(u'w; centre_loc, centre_scale^2), 0 without the term */
static inline double centred_logprior(const coef_prior *cp, const double *w) {
  if (!cp->centre) return 0.0;
  double a = 0.0;
  for (int j = 0; j < cp->p; j++) a += cp->centre[j] * w[j];
  const double z = (a - cp->centre_loc) / cp->centre_scale;
  return -0.5 * z * z - log(cp->centre_scale) - M_LN_SQRT_2PI;
}

/* g -= its gradient, c u with c = centred_slope() */
static inline void centred_grad(const coef_prior *cp, const double *w, double *g) {
  if (!cp->centre) return;
  const double c = centred_slope(cp, w);
  for (int j = 0; j < cp->p; j++) g[j] -= c * cp->centre[j];
}

/* H (leading dimension ld) -= u u' / centre_scale^2 */
static inline void centred_hess(const coef_prior *cp, double *H, int ld) {
  if (!cp->centre) return;
  const double prec = 1.0 / (cp->centre_scale * cp->centre_scale);
  for (int k = 0; k < cp->p; k++)
    for (int j = 0; j < cp->p; j++)
      H[j + (R_xlen_t) k * ld] -= prec * cp->centre[j] * cp->centre[k];
}

/* E_q under q = N(mu, diag(sd^2)): u'w ~ N(u'mu, sum_j u_j^2 sd_j^2), so
   E[(u'w - l)^2] = (u'mu - l)^2 + sum_j u_j^2 sd_j^2; gradients added */
static inline double centred_expected(const coef_prior *cp, const double *mu, const double *sd,
                                      double *g_mu, double *g_sd) {
  if (!cp->centre) return 0.0;
  const double s2 = cp->centre_scale * cp->centre_scale;
  double a = 0.0, v = 0.0;
  for (int j = 0; j < cp->p; j++) {
    a += cp->centre[j] * mu[j];
    v += cp->centre[j] * cp->centre[j] * sd[j] * sd[j];
  }
  const double delta = a - cp->centre_loc;
  for (int j = 0; j < cp->p; j++) {
    g_mu[j] -= delta / s2 * cp->centre[j];
    g_sd[j] -= cp->centre[j] * cp->centre[j] * sd[j] / s2;
  }
  return -0.5 * (delta * delta + v) / s2 - log(cp->centre_scale) - M_LN_SQRT_2PI;
}

/* ---- the whole normal prior ------------------------------------------------ */

static inline double coef_prior_log(const coef_prior *cp, const double *w) {
  double lp = 0.0;
  for (int j = 0; j < cp->p; j++) {
    const double s = cp->scale[j];
    if (!isfinite(s)) continue;   /* flat */
    const double z = (w[j] - cp->loc[j]) / s;
    lp += -0.5 * z * z - log(s) - M_LN_SQRT_2PI;
  }
  return lp + centred_logprior(cp, w);
}

/* g -= the prior's slopes (adds the gradient of the log prior) */
static inline void coef_prior_grad(const coef_prior *cp, const double *w, double *g) {
  for (int j = 0; j < cp->p; j++) {
    const double s = cp->scale[j];
    g[j] -= (w[j] - cp->loc[j]) / (s * s);   /* 0 for a flat prior */
  }
  centred_grad(cp, w, g);
}

static inline void coef_prior_hess(const coef_prior *cp, double *H, int ld) {
  for (int j = 0; j < cp->p; j++)
    H[j + (R_xlen_t) j * ld] -= 1.0 / (cp->scale[j] * cp->scale[j]);
  centred_hess(cp, H, ld);
}

static inline double coef_prior_expected(const coef_prior *cp, const double *mu,
                                         const double *sd, double *g_mu, double *g_sd) {
  double lp = 0.0;
  for (int j = 0; j < cp->p; j++) {
    const double s = cp->scale[j];
    if (!isfinite(s)) continue;
    const double s2 = s * s, delta = mu[j] - cp->loc[j];
    lp += -0.5 * (delta * delta + sd[j] * sd[j]) / s2 - log(s) - M_LN_SQRT_2PI;
    g_mu[j] -= delta / s2;
    g_sd[j] -= sd[j] / s2;
  }
  return lp + centred_expected(cp, mu, sd, g_mu, g_sd);
}

/* coefficient j's own prior at w_j = v, up to a constant: the centred term
   is the coordinate updates' (sgld.h: coord_centre) */
static inline double coef_prior_coordinate(const coef_prior *cp, int j, double v) {
  const double z = (v - cp->loc[j]) / cp->scale[j];
  return -0.5 * z * z;
}

#endif
