/*
 * Running moments of every parameter over a chain's kept draws, whatever
 * `pars` keeps: the plain mean and the sum of squared deviations by Welford's
 * update (stable for long chains whose mean is far from 0), and the
 * step-weighted mean sum(eta_k u_k) / sum(eta_k) (West's weighted form of the
 * same update). Each parameter is taken on the user's scale when the model's
 * transform is coordinate-wise (sigma2 = exp(log sigma2)), so that a summary
 * from moments agrees with one from draws.
 */
#include "run.h"

void moments_reset(chain_output *out, chain_result *res, int d) {
  for (int j = 0; j < d; j++) out->mean[j] = out->m2[j] = out->wmean[j] = 0.0;
  res->weight = 0.0;
}

/* a parameter on the scale its moments are kept on */
static inline double moment_value(double w, int scale) {
  switch (scale) {
  case MOMENT_EXP: return exp(w);
  case MOMENT_TANH: return tanh(w);
  case MOMENT_EXP_PLUS2: return 2.0 + exp(w);
  default: return w;
  }
}

/* add the draw w, kept at learning rate eta, as the res->kept-th draw
   (res->kept already counts it) */
void moments_add(chain_output *out, chain_result *res, const double *w, double eta,
                 const int *scale, int d) {
  const double inv_k = 1.0 / (double) res->kept;
  res->weight += eta;
  const double share = res->weight > 0 ? eta / res->weight : inv_k;
  for (int j = 0; j < d; j++) {
    const double u = scale ? moment_value(w[j], scale[j]) : w[j];
    const double delta = u - out->mean[j];
    out->mean[j] += delta * inv_k;
    out->m2[j] += delta * (u - out->mean[j]);
    out->wmean[j] += share * (u - out->wmean[j]);
  }
}
