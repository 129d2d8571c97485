/*
 * Learning-rate schedules. The R side resolves every user-facing schedule
 * (lr_constant, lr_poly, lr_range, lr_piecewise, lr_exp, lr_cyclical) into
 * one of the shapes named in codes.c, and passes that name as spec$type.
 * A schedule also says at which iterations draws may be kept
 * (schedule_sampling()): all of them, except in the exploring part of a
 * cycle of a cyclical schedule, which runs at gamma times the run's
 * temperature (schedule_temperature(): 0 optimises, 1 samples).
 */
#include <R.h>          /* M_PI */
#include "sgld.h"

sgld_schedule schedule_build(SEXP spec) {
  sgld_schedule s;
  s.type = list_code(spec, "type", CODES_SCHEDULE);
  s.a = list_real(spec, "a");
  s.b = list_real(spec, "b");
  s.gamma = list_real(spec, "gamma");
  s.t0 = list_real(spec, "t0");
  s.t1 = list_real(spec, "t1");
  s.floor = list_real(spec, "floor");
  if (s.type == SCHEDULE_CYCLICAL && !(s.t1 >= 1.0 && s.t1 <= 4503599627370496.0))
    error("internal: a cyclical schedule's cycle length 't1' must be a count from 1");
  if (s.type == SCHEDULE_CYCLICAL && !(s.gamma >= 0.0 && s.gamma <= 1.0))
    error("internal: a cyclical schedule's exploring temperature 'gamma' must be in [0, 1]");
  return s;
}

/* a cyclical schedule's r in [0, 1): how far iteration t is into its cycle
   of t1 iterations (whole numbers, so fmod is exact) */
static double cycle_position(const sgld_schedule *s, double t) {
  return fmod(t - 1.0, s->t1) / s->t1;
}

double schedule_eta(const sgld_schedule *s, double t) {
  double eta;
  switch (s->type) {
  case SCHEDULE_POLY:
    eta = s->a * pow(s->b + t, -s->gamma);
    break;
  case SCHEDULE_EXP:
    eta = s->a * pow(s->b, s->t1 > 1 ? (t - 1.0) / (s->t1 - 1.0) : 0.0);
    break;
  case SCHEDULE_PIECEWISE:
    if (t <= s->t0) eta = s->a;
    else eta = s->a * pow((t < s->t1 ? t : s->t1) - s->t0, -s->gamma);
    break;
  case SCHEDULE_CYCLICAL:
    eta = 0.5 * s->a * (cos(M_PI * cycle_position(s, t)) + 1.0);
    break;
  default:
    return s->a;
  }
  return eta < s->floor ? s->floor : eta;
}

int schedule_sampling(const sgld_schedule *s, double t) {
  return s->type != SCHEDULE_CYCLICAL || cycle_position(s, t) >= s->b;
}

double schedule_temperature(const sgld_schedule *s, double t, double tau) {
  return schedule_sampling(s, t) ? tau : s->gamma * tau;
}

/* The largest learning rate after iteration t: every schedule but the
   cyclical one decays or stays constant. */
static double schedule_bound_after(const sgld_schedule *s, double t) {
  if (s->type == SCHEDULE_CYCLICAL) return s->a > s->floor ? s->a : s->floor;
  return schedule_eta(s, t + 1);
}

/* The learning rates of iterations t (for users and plots) or, with t of
   length 1 and total = TRUE, the sum of eta over 1..t, or an upper bound on
   it beyond 10^7 iterations (to size outputs). */
SEXP sgld_schedule_values(SEXP spec, SEXP t_, SEXP total_) {
  sgld_schedule s = schedule_build(spec);
  if (TYPEOF(t_) != REALSXP) error("internal: 't' must be a double vector");
  const double *t = REAL(t_);
  if (asLogical(total_) == TRUE) {
    if (XLENGTH(t_) != 1 || !R_FINITE(t[0]) || t[0] > 4503599627370496.0)
      error("internal: 't' must be one finite number for a total");
    /* exact over the first 10^7 iterations; beyond, the rest is bounded by
       the largest learning rate still to come times the count: an upper
       bound, which is what sizing needs */
    const double exact = t[0] < 1e7 ? floor(t[0]) : 1e7;
    double sum = 0.0;
    for (double k = 1; k <= exact; k++) sum += schedule_eta(&s, k);
    if (floor(t[0]) > exact) sum += (floor(t[0]) - exact) * schedule_bound_after(&s, exact);
    return ScalarReal(sum);
  }
  SEXP out = PROTECT(allocVector(REALSXP, XLENGTH(t_)));
  for (R_xlen_t i = 0; i < XLENGTH(t_); i++) REAL(out)[i] = schedule_eta(&s, t[i]);
  UNPROTECT(1);
  return out;
}
