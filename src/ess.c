/*
 * coda::effectiveSize() of each column of one chain's draws (R/fit.R:
 * ess_ar(), which documents the method): the spectral density at 0 of an
 * autoregression fitted by Yule-Walker, its order chosen by AIC up to
 * 10 log10 N (spectrum0.ar(), ar()), N times the variance over it; 0 for
 * a column that is a straight line in time to all.equal()'s tolerance; NA
 * where R's version leaves the column to coda (a non-finite draw, a tie
 * in AIC). Here rather than in R, where the autoregressions' R calls and
 * FFTs were a third of the default call on datasets::warpbreaks
 * (bench/imh.md). The autocovariances are the direct sums (the FFT's
 * numbers to rounding), each column on its own.
 */
#include <R.h>
#include <Rinternals.h>
#include <math.h>

static double ess_column(const double *x, int N, double *xc, double *r, double *phi,
                         double *next, double *v, double *coefs) {
  double mean = 0.0;
  for (int t = 0; t < N; t++) mean += x[t];
  mean /= N;
  double ss = 0.0, zx = 0.0, zz = 0.0;
  for (int t = 0; t < N; t++) {
    xc[t] = x[t] - mean;
    ss += xc[t] * xc[t];
    const double z = (t + 1) - (N + 1) / 2.0;
    zx += z * xc[t];
    zz += z * z;
  }
  if (!R_FINITE(ss)) return NA_REAL;
  /* the residual sd of a straight line in time */
  const double slope = zx / zz;
  double res = 0.0;
  for (int t = 0; t < N; t++) {
    const double e = xc[t] - ((t + 1) - (N + 1) / 2.0) * slope;
    res += e * e;
  }
  if (sqrt(res / (N - 1)) <= 1.5e-8) return 0.0;
  int L = (int) floor(10 * log10((double) N));
  if (L > N - 1) L = N - 1;
  for (int l = 0; l <= L; l++) {
    /* four partial sums, so that the additions overlap (a single chain of
       additions waits on each one) */
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int t = 0;
    for (; t + 3 + l < N; t += 4) {
      s0 += xc[t] * xc[t + l];
      s1 += xc[t + 1] * xc[t + 1 + l];
      s2 += xc[t + 2] * xc[t + 2 + l];
      s3 += xc[t + 3] * xc[t + 3 + l];
    }
    for (; t + l < N; t++) s0 += xc[t] * xc[t + l];
    r[l] = ((s0 + s1) + (s2 + s3)) / N;
  }
  /* Durbin-Levinson: phi[1..m] the order-m coefficients, v[m] the
     prediction variance, coefs[m] their sum */
  v[0] = r[0];
  for (int m = 1; m <= L; m++) {
    double acc = r[m];
    for (int j = 1; j < m; j++) acc -= phi[j] * r[m - j];
    const double a = acc / v[m - 1];
    for (int j = 1; j < m; j++) next[j] = phi[j] - a * phi[m - j];
    for (int j = 1; j < m; j++) phi[j] = next[j];
    phi[m] = a;
    v[m] = v[m - 1] * (1 - a * a);
    double sum = 0.0;
    for (int j = 1; j <= m; j++) sum += phi[j];
    coefs[m] = sum;
  }
  /* AIC's order: the unique smallest, else coda's own answer (NA here) */
  int best = -1, ties = 0;
  double least = R_PosInf;
  for (int l = 0; l <= L; l++) {
    const double aic = N * log(v[l]) + 2.0 * l;
    if (!R_FINITE(aic)) return NA_REAL;
    if (aic < least) {
      least = aic;
      best = l;
      ties = 0;
    } else if (aic == least) ties++;
  }
  if (ties) return NA_REAL;
  const double var_pred = v[best] * N / (N - (best + 1));
  const double ar_sum = best > 0 ? coefs[best] : 0.0;
  const double spec = var_pred / ((1 - ar_sum) * (1 - ar_sum));
  return N * (ss / (N - 1)) / spec;
}

SEXP sgld_ess_ar(SEXP x_) {
  if (TYPEOF(x_) != REALSXP || !isMatrix(x_))
    error("internal: 'x' must be a double matrix");
  const int N = nrows(x_), k = ncols(x_);
  SEXP out = PROTECT(allocVector(REALSXP, k));
  double *o = REAL(out);
  for (int j = 0; j < k; j++) o[j] = NA_REAL;
  if (N >= 3) {
    const int L = (int) floor(10 * log10((double) N)) + 1;
    double *xc = (double *) R_alloc(N, sizeof(double));
    double *work = (double *) R_alloc(5 * (size_t) (L + 1), sizeof(double));
    for (int j = 0; j < k; j++)
      o[j] = ess_column(REAL(x_) + (R_xlen_t) N * j, N, xc, work, work + (L + 1),
                        work + 2 * (L + 1), work + 3 * (L + 1), work + 4 * (L + 1));
  }
  UNPROTECT(1);
  return out;
}
