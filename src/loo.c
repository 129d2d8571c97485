/* Leave-one-out cross-validation by Pareto-smoothed importance sampling
   (Vehtari, Gelman and Gabry 2017; Vehtari, Simpson, Gelman, Yao and Gabry
   2024), column by column of a draws x observations log likelihood matrix,
   as the loo package computes it, with each column's relative efficiency of
   exp(log likelihood) (Geyer's initial monotone sequence over the chains).

   For each observation i with log likelihoods l_s (s = 1..S, the chains one
   after the other, of equal length):
   - the relative efficiency r_i: the effective sample size of exp(l_s) over
     S, from the chains' autocovariances summed while successive pairs stay
     positive, made monotone;
   - the log importance ratios -l_s; the M = ceil(min(S/5, 3 sqrt(S/r_i)))
     largest are replaced by the expected order statistics of a generalised
     Pareto fitted to their excess over the next largest (Zhang and
     Stephens 2009, with the weakly informative prior on k), capped at the
     largest raw ratio; k is the Pareto k diagnostic;
   - elpd_loo_i = log sum_s w_s exp(l_s) with the normalised weights,
     p_loo_i = lpd_i - elpd_loo_i, the weights' effective size r_i / sum w^2,
     and the Monte Carlo error of elpd_loo_i from loo's normal approximation
     of exp(elpd_loo_i) at the quantiles `zn`.

   The loo package computes the autocovariances by FFT with a padding that
   scales them by M/n (M the FFT length, the next 2-3-5 number at least n);
   the same scale is applied here so that the efficiencies, and so the tail
   lengths and every result, agree with loo's to rounding. Columns are
   independent: OpenMP threads take them in turn, with scratch allocated
   before the parallel region; nothing in it calls R. */
#include <R.h>
#include <Rinternals.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* loo's FFT length for n samples: the next integer with no prime factor above 5 */
static double fft_good_size(int n) {
  if (n <= 2) return 2;
  for (long N = n;; N++) {
    long m = N;
    while (m % 2 == 0) m /= 2;
    while (m % 3 == 0) m /= 3;
    while (m % 5 == 0) m /= 5;
    if (m <= 1) return (double) N;
  }
}

/* R's mean(): a long double sum, then one correcting pass */
static double mean_corrected(const double *x, int n) {
  long double s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  s /= n;
  if (isfinite((double) s)) {
    long double t = 0;
    for (int i = 0; i < n; i++) t += x[i] - s;
    s += t / n;
  }
  return (double) s;
}

static double log_sum_exp(const double *x, int n) {
  double m = -INFINITY;
  for (int i = 0; i < n; i++) if (x[i] > m) m = x[i];
  if (!isfinite(m)) return m;
  long double s = 0;
  for (int i = 0; i < n; i++) s += exp(x[i] - m);
  return m + log((double) s);
}

typedef struct {
  const double *x;   /* exp(log lik), the column */
  double *centred;   /* n x chains, centred by each chain's mean */
  int n, chains;
  double scale;      /* loo's M / n^2 */
} acov_data;

/* the mean over chains of the lag-t autocovariance, as loo's (scaled) */
static double mean_acov(const acov_data *a, int t) {
  double total = 0;
  for (int c = 0; c < a->chains; c++) {
    const double *y = a->centred + (size_t) c * a->n;
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int m = a->n - t, i = 0;
    for (; i + 4 <= m; i += 4) {
      s0 += y[i] * y[i + t];
      s1 += y[i + 1] * y[i + 1 + t];
      s2 += y[i + 2] * y[i + 2 + t];
      s3 += y[i + 3] * y[i + 3 + t];
    }
    for (; i < m; i++) s0 += y[i] * y[i + t];
    total += ((s0 + s1) + (s2 + s3)) * a->scale;
  }
  return total / a->chains;
}

/* The relative efficiency of the column x (S = n * chains values), loo's
   ess_rfun() / S. rho: n doubles of scratch. */
static double relative_efficiency(const double *x, int n, int chains, double *centred,
                                  double *rho, double *chain_means) {
  acov_data a = {x, centred, n, chains, fft_good_size(n) / ((double) n * n)};
  double chain_mean_sum = 0;
  for (int c = 0; c < chains; c++) {
    const double *xc = x + (size_t) c * n;
    double m = mean_corrected(xc, n);
    chain_means[c] = m;
    chain_mean_sum += m;
    for (int i = 0; i < n; i++) centred[(size_t) c * n + i] = xc[i] - m;
  }
  double acov0 = mean_acov(&a, 0);
  double mean_var = acov0 * n / (n - 1.0);
  double var_plus = mean_var * (n - 1.0) / n;
  if (chains > 1) {
    double mu = chain_mean_sum / chains, v = 0;
    for (int c = 0; c < chains; c++) v += (chain_means[c] - mu) * (chain_means[c] - mu);
    var_plus += v / (chains - 1);
  }
  for (int i = 0; i < n; i++) rho[i] = 0;
  int t = 0;
  double even = 1, odd = 1 - (mean_var - mean_acov(&a, 1)) / var_plus;
  rho[0] = even;
  rho[1] = odd;
  while (t < n - 5 && !isnan(even + odd) && even + odd > 0) {
    t += 2;
    even = 1 - (mean_var - mean_acov(&a, t)) / var_plus;
    odd = 1 - (mean_var - mean_acov(&a, t + 1)) / var_plus;
    if (even + odd >= 0) {
      rho[t] = even;
      rho[t + 1] = odd;
    }
  }
  int max_t = t;
  if (even > 0) rho[max_t] = even;
  t = 0;
  while (t <= max_t - 4) {
    t += 2;
    if (rho[t] + rho[t + 1] > rho[t - 2] + rho[t - 1]) {
      rho[t] = (rho[t - 2] + rho[t - 1]) / 2;
      rho[t + 1] = rho[t];
    }
  }
  double total = (double) chains * n, sum = 0;
  /* R's rho_hat_t[1:max_t]: with max_t = 0 that is the first entry alone */
  if (max_t == 0) sum = rho[0];
  else for (int i = 0; i < max_t; i++) sum += rho[i];
  double tau = -1 + 2 * sum + rho[max_t];
  double floor_tau = 1 / log10(total);
  if (!(tau >= floor_tau)) tau = isnan(tau) ? tau : floor_tau;
  return total / tau / total;
}

/* (value, position) order: a stable ascending sort's order, as R's
   sort.int(index.return = TRUE) gives */
static int before(const double *v, int a, int b) {
  return v[a] < v[b] || (v[a] == v[b] && a < b);
}

/* The k-th smallest of v[0..n-1] (0-based), reordering v (quickselect). */
static double kth_smallest(double *v, int n, int k) {
  int lo = 0, hi = n - 1;
  while (hi > lo) {
    double a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
    double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    int i = lo, j = hi;
    while (i <= j) {
      while (v[i] < pivot) i++;
      while (pivot < v[j]) j--;
      if (i <= j) { double t = v[i]; v[i] = v[j]; v[j] = t; i++; j--; }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return v[k];
  }
  return v[k];
}

/* heap sort of idx[0..len-1] in (value, position) order (a total order, so
   any correct sort gives the same result) */
static void sift_down(const double *v, int *idx, int root, int len) {
  for (;;) {
    int child = 2 * root + 1;
    if (child >= len) return;
    if (child + 1 < len && before(v, idx[child], idx[child + 1])) child++;
    if (!before(v, idx[root], idx[child])) return;
    int s = idx[root]; idx[root] = idx[child]; idx[child] = s;
    root = child;
  }
}

static void sort_tail(const double *v, int *idx, int len) {
  for (int i = len / 2 - 1; i >= 0; i--) sift_down(v, idx, i, len);
  for (int end = len - 1; end > 0; end--) {
    int s = idx[0]; idx[0] = idx[end]; idx[end] = s;
    sift_down(v, idx, 0, end);
  }
}

/* Zhang and Stephens' generalised Pareto fit to the ascending excesses x
   (loo's gpdfit() with its weakly informative prior); k = Inf if undefined. */
static void gpd_fit(const double *x, int N, double *theta, double *l, double *k_out,
                    double *sigma_out, double *tmp) {
  const double prior = 3;
  int M = 30 + (int) floor(sqrt((double) N));
  double xstar = x[(int) floor(N / 4.0 + 0.5) - 1];
  for (int j = 0; j < M; j++) {
    theta[j] = 1 / x[N - 1] + (1 - sqrt(M / (j + 1 - 0.5))) / prior / xstar;
    /* the hot loop of loo(): M x N log1p a column */
    double s0 = 0, s1 = 0;
    int i = 0;
    for (; i + 2 <= N; i += 2) {
      s0 += log1p(-theta[j] * x[i]);
      s1 += log1p(-theta[j] * x[i + 1]);
    }
    if (i < N) s0 += log1p(-theta[j] * x[i]);
    double k = (s0 + s1) / N;
    l[j] = N * (log(-theta[j] / k) - k - 1);
  }
  double lse = log_sum_exp(l, M), theta_hat = 0;
  for (int j = 0; j < M; j++) theta_hat += theta[j] * exp(l[j] - lse);
  for (int i = 0; i < N; i++) tmp[i] = log1p(-theta_hat * x[i]);
  double k = mean_corrected(tmp, N);
  double sigma = -k / theta_hat;
  k = k * N / (N + 10.0) + 10 * 0.5 / (N + 10.0);
  if (isnan(k)) k = INFINITY;
  *k_out = k;
  *sigma_out = sigma;
}

typedef struct {
  int *idx;
  double *lw, *rho, *centred, *lik, *theta, *l, *tmp, *tail, *chain_means;
} column_scratch;

/* One column: returns its results in out[0..5] = elpd_loo, mcse, p_loo,
   pareto_k, n_eff, r_eff; its normalised log weights into lw_out if not NULL.
   flags: 1 = too few tail draws, 2 = tail values all equal.
   Two exponentials a draw: the likelihood relative to its largest value
   (which the relative efficiency, lpd and elpd_loo all use: the first is
   invariant to the scale, the others add the log of the scale back) and the
   smoothed weights relative to theirs. */
static int psis_column(const double *ll, int S, int chains, double r_eff_given,
                       const double *zn, int n_zn, column_scratch *w, double *out,
                       double *lw_out) {
  int flags = 0, n = S / chains;
  double *lik = w->lik, max_ll = -INFINITY;
  for (int s = 0; s < S; s++) if (ll[s] > max_ll) max_ll = ll[s];
  double lik_sum = 0;
  for (int s = 0; s < S; s++) {
    lik[s] = exp(ll[s] - max_ll);
    lik_sum += lik[s];
  }
  double r_eff = isnan(r_eff_given) ? relative_efficiency(lik, n, chains, w->centred, w->rho,
                                                         w->chain_means)
                                   : r_eff_given;
  double *lw = w->lw;
  /* log ratios -ll relative to their largest, -min(ll) */
  double min_ll = INFINITY;
  for (int s = 0; s < S; s++) if (ll[s] < min_ll) min_ll = ll[s];
  double max_ratio = -min_ll;
  for (int s = 0; s < S; s++) lw[s] = -ll[s] - max_ratio;
  double khat = INFINITY;
  double tail_cap = 0.2 * S, tail_sqrt = 3 * sqrt(S / r_eff);
  int tail_len = (int) ceil(tail_sqrt < tail_cap ? tail_sqrt : tail_cap);
  if (tail_len >= 5 && tail_len < S) {
    /* the tail: the tail_len largest in a stable ascending sort, so among
       values equal to the cutoff the later draws; positions first..S-1 */
    int *idx = w->idx, first = S - tail_len;
    double *copy = w->tail;
    for (int s = 0; s < S; s++) copy[s] = lw[s];
    double cutoff = kth_smallest(copy, S, first - 1);
    int above = 0;
    for (int s = 0; s < S; s++) if (lw[s] > cutoff) idx[first + above++] = s;
    for (int s = S - 1; s >= 0 && above < tail_len; s--)
      if (lw[s] == cutoff) idx[first + above++] = s;
    sort_tail(lw, idx + first, tail_len);
    double lo = lw[idx[first]], hi = lw[idx[S - 1]];
    if (fabs(hi - lo) < DBL_EPSILON / 100) flags |= 2;
    else {
      double exp_cutoff = exp(cutoff), *x = w->tail, sigma;
      for (int j = 0; j < tail_len; j++) x[j] = exp(lw[idx[first + j]]) - exp_cutoff;
      gpd_fit(x, tail_len, w->theta, w->l, &khat, &sigma, w->tmp);
      if (isfinite(khat)) {
        for (int j = 0; j < tail_len; j++) {
          double p = (j + 1 - 0.5) / tail_len;
          double q = (isnan(sigma) || sigma <= 0) ? NAN
                     : sigma * expm1(-khat * log1p(-p)) / khat;
          lw[idx[first + j]] = log(q + exp_cutoff);
        }
      }
    }
  } else if (tail_len < 5) flags |= 1;
  /* the weights, truncated at the largest raw ratio (lw <= 0 here), then
     normalised: w_s = exp(lw_s) / sum exp(lw) */
  double *wt = w->tmp, max_lw = -INFINITY;
  for (int s = 0; s < S; s++) {
    if (lw[s] > 0) lw[s] = 0;
    if (lw[s] > max_lw) max_lw = lw[s];
  }
  double z_sum = 0;
  for (int s = 0; s < S; s++) {
    wt[s] = exp(lw[s] - max_lw);
    z_sum += wt[s];
  }
  double sum_w2 = 0, w_lik = 0;
  for (int s = 0; s < S; s++) {
    wt[s] /= z_sum;
    sum_w2 += wt[s] * wt[s];
    w_lik += wt[s] * lik[s];
  }
  /* elpd_loo: log sum_s w_s exp(l_s); lpd: log mean_s exp(l_s) */
  double elpd = max_ll + log(w_lik);
  double lpd = max_ll + log(lik_sum) - log((double) S);
  /* loo's mcse_elpd(): the variance of log z over normal quantiles z of
     exp(elpd_loo), positive z only; on the likelihood's scale (log z moves
     by a constant) */
  double var_epd = 0;
  for (int s = 0; s < S; s++) {
    double e = lik[s] - w_lik;
    var_epd += wt[s] * wt[s] * e * e;
  }
  double sd_epd = sqrt(var_epd);
  double *logz = w->tail;
  int pos = 0;
  for (int r = 0; r < n_zn; r++) {
    double z = w_lik + sd_epd * zn[r];
    if (z > 0) logz[pos++] = log(z);
  }
  double var_elpd = NAN;
  if (pos > 1) {
    double m = mean_corrected(logz, pos), ss = 0;
    for (int r = 0; r < pos; r++) ss += (logz[r] - m) * (logz[r] - m);
    var_elpd = ss / (pos - 1);
  }
  out[0] = elpd;
  out[1] = sqrt(var_elpd / r_eff);
  out[2] = lpd - elpd;
  out[3] = khat;
  out[4] = r_eff / sum_w2;
  out[5] = r_eff;
  if (lw_out) {
    double log_z = max_lw + log(z_sum);
    for (int s = 0; s < S; s++) lw_out[s] = lw[s] - log_z;
  }
  return flags;
}

/* .Call(C_sgld_psis_loo, ll, chains, r_eff, zn, weights, threads):
   ll an S x N matrix (draws of `chains` equal chains one after the other),
   r_eff NULL or N numbers, zn loo's normal quantiles. Returns a list:
   `pointwise` (N x 6: elpd_loo, mcse_elpd_loo, p_loo, pareto_k, n_eff,
   r_eff), `flags` (per column), `log_weights` (S x N, normalised) or NULL. */
SEXP sgld_psis_loo(SEXP ll, SEXP chains_, SEXP r_eff_, SEXP zn_, SEXP weights_,
                   SEXP threads_) {
  if (!isReal(ll) || !isMatrix(ll)) error("`ll` must be a numeric matrix");
  int S = nrows(ll), N = ncols(ll), chains = asInteger(chains_);
  int threads = asInteger(threads_), want_weights = asLogical(weights_);
  if (chains == NA_INTEGER || chains < 1) error("`chains` must be a positive whole number");
  if (S % chains != 0 || S / chains < 4)
    error("the draws must be %d chains of equal length, at least 4 each", chains);
  if (!isNull(r_eff_) && (!isReal(r_eff_) || XLENGTH(r_eff_) != N))
    error("`r_eff` must be NULL or %d numbers", N);
  if (!isReal(zn_)) error("`zn` must be numeric");
  const double *ll_values = REAL(ll);
  for (R_xlen_t j = 0; j < XLENGTH(ll); j++)
    if (!isfinite(ll_values[j])) error("the log likelihood must be finite; entry %lld is not",
                                       (long long) j + 1);
  if (threads > N) threads = N;   /* a thread per column at most, so scratch stays small */
  if (threads > 64) threads = 64;
  if (threads < 1) threads = 1;
  const double *L = REAL(ll), *zn = REAL(zn_);
  const double *r_eff = isNull(r_eff_) ? NULL : REAL(r_eff_);
  int n_zn = LENGTH(zn_);
  SEXP pointwise = PROTECT(allocMatrix(REALSXP, N, 6));
  SEXP flags = PROTECT(allocVector(INTSXP, N));
  SEXP lw = PROTECT(want_weights == TRUE ? allocMatrix(REALSXP, S, N) : R_NilValue);
  double *P = REAL(pointwise), *LW = want_weights == TRUE ? REAL(lw) : NULL;
  int *F = INTEGER(flags);
  /* per thread: positions, weights, rho, centred, lik, tail, tmp, the grid */
  int big = S > n_zn ? S : n_zn;
  size_t grid = 32 + (size_t) sqrt((double) S);   /* gpd_fit()'s M */
  size_t per = (size_t) 6 * big + 2 * grid + chains;
  column_scratch *scratch = (column_scratch *) R_alloc(threads, sizeof(column_scratch));
  for (int t = 0; t < threads; t++) {
    scratch[t].idx = (int *) R_alloc(S, sizeof(int));
    double *d = (double *) R_alloc(per, sizeof(double));
    scratch[t].lw = d;
    scratch[t].rho = d + big;
    scratch[t].centred = d + 2 * (size_t) big;
    scratch[t].lik = d + 3 * (size_t) big;
    scratch[t].tail = d + 4 * (size_t) big;
    scratch[t].tmp = d + 5 * (size_t) big;
    scratch[t].theta = d + 6 * (size_t) big;
    scratch[t].l = d + 6 * (size_t) big + grid;
    scratch[t].chain_means = d + 6 * (size_t) big + 2 * grid;
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 16) if (threads > 1)
  for (int i = 0; i < N; i++) {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    double out[6];
    F[i] = psis_column(L + (size_t) i * S, S, chains, r_eff ? r_eff[i] : NAN, zn, n_zn,
                       &scratch[t], out, LW ? LW + (size_t) i * S : NULL);
    for (int j = 0; j < 6; j++) P[i + (size_t) j * N] = out[j];
  }
  SEXP result = PROTECT(allocVector(VECSXP, 3));
  SET_VECTOR_ELT(result, 0, pointwise);
  SET_VECTOR_ELT(result, 1, flags);
  SET_VECTOR_ELT(result, 2, lw);
  SEXP names = PROTECT(allocVector(STRSXP, 3));
  SET_STRING_ELT(names, 0, mkChar("pointwise"));
  SET_STRING_ELT(names, 1, mkChar("flags"));
  SET_STRING_ELT(names, 2, mkChar("log_weights"));
  setAttrib(result, R_NamesSymbol, names);
  UNPROTECT(5);
  return result;
}
