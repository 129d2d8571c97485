/*
 * Independence Metropolis-Hastings for lr = "auto" (R/auto-imh.R): one
 * chain's batch of K proposals w = location + R^T x, x ~ t_df(0, I) (R
 * upper triangular, df a whole number: the chi-square is a sum of df
 * squared normals), their log posteriors over the full data (the model's
 * log likelihood and prior, no gradient) and log importance weights
 * lw = log p(w) + (df + d) / 2 log(1 + |x|^2 / df) (the t density up to
 * its constant), and the accept/reject scan from the chain's state, all
 * from the chain's own stream; the proposals are returned too (the pilot's
 * weighted moments). Per proposal, in this order: d normals for
 * x, df normals for the chi-square, one uniform for the scan. The
 * proposals go in blocks of loglik_points_max, whose log likelihoods a
 * model with loglik_points() (the negative binomial) evaluates in one pass
 * over its rows.
 */
#include <R.h>
#include <Rinternals.h>
#include <math.h>
#include <string.h>
#include "sgld.h"

static const double *imh_vector(SEXP x, R_xlen_t len, const char *what) {
  if (TYPEOF(x) != REALSXP || XLENGTH(x) != len)
    error("internal: '%s' must be a double vector of length %lld", what, (long long) len);
  for (R_xlen_t i = 0; i < len; i++)
    if (!R_FINITE(REAL(x)[i])) error("internal: '%s' must be finite", what);
  return REAL(x);
}

SEXP sgld_imh_batch(SEXP model_spec, SEXP location_, SEXP factor_, SEXP df_, SEXP K_,
                    SEXP from_w_, SEXP from_lw_, SEXP stream_) {
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  const double *location = imh_vector(location_, d, "location");
  const double *R = imh_vector(factor_, (R_xlen_t) d * d, "factor");
  const double *from_w = imh_vector(from_w_, d, "from_w");
  if (TYPEOF(df_) != REALSXP || XLENGTH(df_) != 1 || !R_FINITE(REAL(df_)[0]) ||
      REAL(df_)[0] < 1 || REAL(df_)[0] > 1000 || REAL(df_)[0] != floor(REAL(df_)[0]))
    error("internal: 'df' must be a whole number from 1 to 1000");
  const int df = (int) REAL(df_)[0];
  if (TYPEOF(K_) != REALSXP || XLENGTH(K_) != 1 || !R_FINITE(REAL(K_)[0]) ||
      REAL(K_)[0] < 1 || REAL(K_)[0] > 1e7 || REAL(K_)[0] != floor(REAL(K_)[0]))
    error("internal: 'K' must be a whole number from 1 to 1e7");
  const R_xlen_t K = (R_xlen_t) REAL(K_)[0];
  if (TYPEOF(from_lw_) != REALSXP || XLENGTH(from_lw_) != 1 || ISNAN(REAL(from_lw_)[0]))
    error("internal: 'from_lw' must be a number");
  if (TYPEOF(stream_) != RAWSXP || XLENGTH(stream_) != (R_xlen_t) sizeof(sgld_rng))
    error("internal: 'stream' must be a raw vector of length %d", (int) sizeof(sgld_rng));
  sgld_rng r;
  memcpy(&r, RAW(stream_), sizeof r);
  if ((r.s[0] | r.s[1] | r.s[2] | r.s[3]) == 0) error("internal: 'stream' is all zero");

  const char *names[] = {"draws", "log_weight", "log_post", "accepted", "last_lw", "stream",
                         "proposals", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SEXP draws = allocMatrix(REALSXP, (int) K, d);
  SET_VECTOR_ELT(out, 0, draws);
  SEXP lw_ = allocVector(REALSXP, K);
  SET_VECTOR_ELT(out, 1, lw_);
  SEXP lp_ = allocVector(REALSXP, K);
  SET_VECTOR_ELT(out, 2, lp_);
  SEXP proposals = allocMatrix(REALSXP, (int) K, d);
  SET_VECTOR_ELT(out, 6, proposals);
  double *D = REAL(draws), *P = REAL(proposals), *LW = REAL(lw_), *LP = REAL(lp_);
  for (R_xlen_t k = 0; k < K; k++) LW[k] = LP[k] = NA_REAL;
  for (R_xlen_t k = 0; k < K * d; k++) D[k] = P[k] = NA_REAL;   /* a failed model stops early */
  double *work = (double *) R_alloc(model.work_size + 1, sizeof(double));
  double *x = (double *) R_alloc(d, sizeof(double));
  double *cur = (double *) R_alloc(d, sizeof(double));
  /* a block of proposals: their points (column by column), the random
     numbers' |x|^2 and uniforms, which of them are in the model's domain
     (packed, for loglik_points()) and their log likelihoods */
  enum { block = loglik_points_max };
  double *Wb = (double *) R_alloc((size_t) d * block, sizeof(double));
  double *Win = (double *) R_alloc((size_t) d * block, sizeof(double));
  double x2[block], unif[block], ll[block];
  int inside[block];
  memcpy(cur, from_w, d * sizeof(double));
  double cur_lw = REAL(from_lw_)[0];
  int accepted = 0, failed = 0;
  for (R_xlen_t k0 = 0; k0 < K && !failed; k0 += block) {
    const int B = (int) (K - k0 < block ? K - k0 : block);
    /* the random numbers in the order of one proposal after another */
    for (int b = 0; b < B; b++) {
      double chi2 = 0.0, s2 = 0.0;
      for (int j = 0; j < d; j++) x[j] = rng_norm(&r);
      for (int j = 0; j < df; j++) {
        const double z = rng_norm(&r);
        chi2 += z * z;
      }
      const double s = sqrt(df / chi2);
      for (int j = 0; j < d; j++) {
        x[j] *= s;
        s2 += x[j] * x[j];
      }
      x2[b] = s2;
      double *w = Wb + (R_xlen_t) d * b;
      for (int j = 0; j < d; j++) {   /* w = location + R^T x */
        double v = location[j];
        for (int i = 0; i <= j; i++) v += R[i + (R_xlen_t) d * j] * x[i];
        w[j] = v;
        P[k0 + b + K * j] = v;
      }
      unif[b] = rng_unif(&r);
    }
    /* their log likelihoods: B points in one pass where the model can */
    int m = 0;
    for (int b = 0; b < B; b++) {
      inside[b] = !model.in_domain || model.in_domain(model.data, Wb + (R_xlen_t) d * b);
      if (inside[b]) memcpy(Win + (R_xlen_t) d * m++, Wb + (R_xlen_t) d * b, d * sizeof(double));
    }
    if (model.loglik_points && m > 0) model.loglik_points(model.data, Win, m, ll, work);
    else for (int q = 0; q < m; q++) {
      ll[q] = model.loglik(model.data, Win + (R_xlen_t) d * q, NULL, model.n, work);
      if (model.failed && model.failed(model.data) != MODEL_OK) {
        failed = 1;
        break;
      }
    }
    if (failed) break;
    /* the scan */
    for (int b = 0, q = 0; b < B; b++) {
      const R_xlen_t k = k0 + b;
      const double *w = Wb + (R_xlen_t) d * b;
      double lp = R_NegInf;
      if (inside[b]) {
        lp = ll[q++] + model.logprior(model.data, w);
        if (ISNAN(lp)) lp = R_NegInf;   /* outside the model's range: never accepted */
      }
      LP[k] = lp;
      LW[k] = lp + 0.5 * (df + d) * log1p(x2[b] / df);
      if (log(unif[b]) < LW[k] - cur_lw) {
        memcpy(cur, w, d * sizeof(double));
        cur_lw = LW[k];
        accepted++;
      }
      for (int j = 0; j < d; j++) D[k + K * j] = cur[j];
    }
    if (((k0 / block) & 7) == 7) R_CheckUserInterrupt();
  }
  SET_VECTOR_ELT(out, 3, ScalarInteger(accepted));
  SET_VECTOR_ELT(out, 4, ScalarReal(cur_lw));
  SEXP st = allocVector(RAWSXP, sizeof r);
  SET_VECTOR_ELT(out, 5, st);
  memcpy(RAW(st), &r, sizeof r);
  UNPROTECT(1);
  return out;
}
