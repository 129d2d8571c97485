/*
 * Gradient clipping. Both forms bias the sampler, which is why the driver
 * counts how often they fire and the fit reports it.
 */
#include "sgld.h"

int clip_gradient(double *g, int d, int type, double threshold) {
  if (type == CLIP_NORM) {
    double ss = 0.0;
    for (int j = 0; j < d; j++) ss += g[j] * g[j];
    double norm = sqrt(ss);
    if (norm <= threshold) return 0;
    double scale = threshold / norm;
    for (int j = 0; j < d; j++) g[j] *= scale;
    return 1;
  }
  if (type == CLIP_VALUE) {
    int fired = 0;
    for (int j = 0; j < d; j++) {
      if (g[j] > threshold) { g[j] = threshold; fired = 1; }
      else if (g[j] < -threshold) { g[j] = -threshold; fired = 1; }
    }
    return fired;
  }
  return 0;
}
