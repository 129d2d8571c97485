/*
 * Running moments of every parameter over every iteration after burn-in (in
 * a schedule's sampling phases), whatever `pars` and `thin` keep: thinning
 * only decides what is stored, so the means and sds lose nothing to it.
 * The moments are the plain mean and the sum of squared deviations by Welford's
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
  res->moment_n = 0;
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

/* parameter j's three running moments, given its value u on its scale */
static inline void moment_update(double *restrict mean, double *restrict m2,
                                 double *restrict wmean, int j, double u, double inv_k,
                                 double share) {
  const double delta = u - mean[j];
  mean[j] += delta * inv_k;
  m2[j] += delta * (u - mean[j]);
  wmean[j] += share * (u - wmean[j]);
}

/* add the state w, reached at learning rate eta, as the res->moment_n-th
   (res->moment_n already counts it); scale NULL: every parameter as it is.
   That case runs under `omp simd` (the updates of a parameter touch nothing
   of another's, so the bits are the same): at d = 2000 the loop took 72k
   instructions per draw (callgrind) with the scale looked up per parameter,
   a large part of an iteration once the gradient was vectorised; in AVX2
   where the processor has it (SGLD_WIDE). */
SGLD_WIDE void moments_add(chain_output *out, chain_result *res, const double *w, double eta,
                 const int *scale, int d) {
  const double inv_k = 1.0 / (double) res->moment_n;
  res->weight += eta;
  const double share = res->weight > 0 ? eta / res->weight : inv_k;
  double *mean = out->mean, *m2 = out->m2, *wmean = out->wmean;
  if (!scale) {
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int j = 0; j < d; j++) moment_update(mean, m2, wmean, j, w[j], inv_k, share);
    return;
  }
  for (int j = 0; j < d; j++)
    moment_update(mean, m2, wmean, j, moment_value(w[j], scale[j]), inv_k, share);
}
