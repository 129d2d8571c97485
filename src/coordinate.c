/*
 * Coordinate updates. After each step of the update rule, each coordinate of
 * a given set is drawn again alone, given all the others, by slice sampling
 * (Neal 2003, Ann. Statist. 31: stepping out with a limit of m widths split
 * at random, then shrinkage), which leaves its full conditional, and so the
 * posterior, exactly invariant whatever the conditional's shape.
 *
 * What it is for (R/auto.R chooses the set): a regression coefficient whose
 * column is non-zero on a few rows only and whose posterior is far from
 * Gaussian (a rare factor level whose rows hold no events). The rule's
 * unadjusted steps are biased along such a coordinate unless the step is
 * small for every coordinate; drawn here exactly, it no longer sets the step.
 * Each evaluation reads only the coordinate's own rows
 * (model->logpost_coordinate), so a sweep costs microseconds where a step
 * costs a pass over the data.
 */
#include <math.h>
#include "run.h"

enum {
  SLICE_STEPS = 64,    /* stepping out: at most this many widths in all */
  SLICE_SHRINK = 200   /* shrinkage: the interval halves about every other try */
};

/* the log conditional of w[j] at v: the model's part, and the centred
   prior term (sgld.h: coord_centre) from a = u'w, kept by the sweep */
static inline double logpost(const sgld_model *model, const double *w, int j, double v,
                             const R_xlen_t *rows, R_xlen_t m, double a) {
  double f = model->logpost_coordinate(model->data, w, j, v, rows, m);
  if (model->coord_centre) {
    const double z = (a + model->coord_centre[j] * (v - w[j]) - model->coord_centre_loc) /
                     model->coord_centre_scale;
    f -= 0.5 * z * z;
  }
  return isnan(f) ? -INFINITY : f;
}

/* one slice-sampling update of w[j] */
static double slice(const sgld_model *model, const double *w, int j, const R_xlen_t *rows,
                    R_xlen_t m, double width, double a, sgld_rng *rng) {
  const double x0 = w[j];
  const double f0 = logpost(model, w, j, x0, rows, m, a);
  if (!isfinite(f0)) return x0;
  const double level = f0 + log(rng_unif(rng));   /* f0 minus an exponential */
  double lo = x0 - width * rng_unif(rng), hi = lo + width;
  int left = (int) (SLICE_STEPS * rng_unif(rng)), right = SLICE_STEPS - 1 - left;
  while (left-- > 0 && logpost(model, w, j, lo, rows, m, a) > level) lo -= width;
  while (right-- > 0 && logpost(model, w, j, hi, rows, m, a) > level) hi += width;
  for (int k = 0; k < SLICE_SHRINK; k++) {
    const double x1 = lo + (hi - lo) * rng_unif(rng);
    if (logpost(model, w, j, x1, rows, m, a) > level) return x1;
    if (x1 < x0) lo = x1; else hi = x1;
  }
  return x0;   /* not reached for a finite f0: x0 itself lies in the slice */
}

void coordinate_sweep(const sgld_model *model, const run_settings *s, double *w,
                      sgld_rng *rng) {
  const double *u = model->coord_centre;
  double a = 0.0;   /* u'w: once a sweep, then updated with each coordinate */
  if (u) for (int j = 0; j < model->d; j++) a += u[j] * w[j];
  for (int k = 0; k < s->n_coord; k++) {
    const R_xlen_t from = s->coord_start[k];
    const int j = s->coord[k];
    const double x1 = slice(model, w, j, s->coord_rows + from, s->coord_start[k + 1] - from,
                            s->coord_width[k], a, rng);
    if (u) a += u[j] * (x1 - w[j]);
    w[j] = x1;
  }
}
