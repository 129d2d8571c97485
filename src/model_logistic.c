/*
 * Bayesian logistic regression: p(y_i | x_i, beta) = sigma(y_i x_i' beta),
 * y_i in {-1, +1}, with an independent normal or Laplace prior on each
 * coefficient (an infinite scale is flat) and optionally a normal prior on
 * the intercept at centred predictors (prior_centred.h).
 *
 * The data are one (p + 1) x n matrix whose column i is (x_i, y_i), or, for a
 * design that is mostly zeros, each observation's non-zeros. Every
 * exponential is taken of a non-positive number, so nothing overflows however
 * large |x_i' beta| is.
 *
 * Optionally, per observation, an offset o_i and weighted counts of events a_i
 * and non-events b_i (case weights, binomial trials): the log likelihood of
 * observation i is then a_i log sigma(eta_i) + b_i log sigma(-eta_i) with
 * eta_i = x_i' beta + o_i, and y_i is not used.
 */
#include <R.h>
#include <Rmath.h>
#include "sgld.h"
#include "dense.h"
#include "rows.h"
#include "prior_centred.h"

enum { PRIOR_NORMAL = 0, PRIOR_LAPLACE = 1 };

typedef struct logistic_data {
  int p;
  R_xlen_t n;
  const double *z;         /* dense: (p + 1) x n, covariates then y in {-1, +1} */
  /* storage = "float": z's single-precision copy, read by the plain
     minibatch gradient (the log likelihood, metrics and the gradient with
     offsets or counts read z); NULL otherwise */
  const float *zf;
  /* sparse (mostly-zero designs such as one-hot features): observation i has
     the non-zeros val[k], in columns col[k], for k in start[i] .. start[i+1]-1;
     val is NULL when every non-zero is 1 (indicator columns) */
  const double *start, *val, *y;
  const int *col;
  const int *prior_type;   /* per coefficient */
  const double *prior_loc, *prior_scale;
  const double *prior_inv_scale;   /* 1 / prior_scale */
  coef_prior centred;      /* its centred term (prior_centred.h), if any */
  /* per observation, or NULL: offsets; weighted counts of events and non-events */
  const double *offset, *events, *nonevents;
  int wide;                /* the dense kernels' AVX2 build (dense.h: dense_wide()) */
  int prior_all;           /* PRIOR_NORMAL or PRIOR_LAPLACE for every coefficient, or -1 */
  int ahead;               /* rows prefetched ahead (dense.h: dense_ahead()) */
  int spread;              /* zf's next block's rows prefetched line by line (dense_spread()) */
  design_rows rows;        /* the same rows, for rows.h's accessors */
} logistic_data;

/* log sigma(u) = -log(1 + e^-u) */
static inline double log_sigmoid(double u) {
  return u > 0 ? -log1p(exp(-u)) : u - log1p(exp(u));
}

/* sigma(-u) = 1 / (1 + e^u), as e^-u / (1 + e^-u) for u > 0 so that nothing
   overflows. Written without a branch (the numerator is a select), with the
   same bits as the two-branch form (for u <= 0, -|u| is u): the sign of
   y_i x_i' beta is a coin toss for a model far from fitting its data, and a
   branch on it was mispredicted half the time. Measured with sgld() (d = 5,
   thin = 1, medians of 5 runs, two rounds interleaved, idle machine),
   microseconds per iteration, branch -> select: n = 10^3, batch 100:
   1.70 -> 1.61; n = 10^6, batch 1000: 17.35 -> 16.55; Adult (sparse,
   batch 10): no change. Float rows at d = 5 (the blocked kernel),
   bench/speed.R before and after: 588k -> 870k iterations/s at batch 100,
   57.8k -> 82.6k at batch 1000. */
static inline double sigmoid_neg(double u) {
  const double e = exp(-fabs(u));
  return (u > 0 ? e : 1.0) / (1.0 + e);
}

static inline double linear_predictor(const double *zi, const double *w, int p) {
  double eta = 0.0;
  for (int j = 0; j < p; j++) eta += zi[j] * w[j];
  return eta;
}

/* the linear predictor of observation i, whichever the storage (rows.h) */
static inline double eta_of(const logistic_data *L, R_xlen_t i, const double *w) {
  return rows_dot(&L->rows, i, w, 0.0);
}

static inline double y_of(const logistic_data *L, R_xlen_t i) {
  return rows_y(&L->rows, i);
}

/* observation i's linear predictor, offset included */
static inline double eta_offset(const logistic_data *L, R_xlen_t i, const double *w) {
  return eta_of(L, i, w) + (L->offset ? L->offset[i] : 0.0);
}

/* observation i's log likelihood at the linear predictor eta (offset included) */
static inline double loglik_at(const logistic_data *L, R_xlen_t i, double eta) {
  if (!L->events) return log_sigmoid(y_of(L, i) * eta);
  double ll = 0.0;
  if (L->events[i] != 0.0) ll += L->events[i] * log_sigmoid(eta);
  if (L->nonevents[i] != 0.0) ll += L->nonevents[i] * log_sigmoid(-eta);
  return ll;
}

/* observation i's log likelihood */
static inline double row_loglik(const logistic_data *L, R_xlen_t i, const double *w) {
  return loglik_at(L, i, eta_offset(L, i, w));
}

/* x_ij, whichever the storage (a sparse row's non-zeros are few: a scan) */
static inline double x_of(const logistic_data *L, R_xlen_t i, int j) {
  return rows_entry(&L->rows, i, j);
}

/* g += c x_i, whichever the storage */
static inline void add_row(const logistic_data *L, R_xlen_t i, double c, double *g) {
  rows_axpy(&L->rows, i, c, g);
}

/* The gradient with offsets or counts, for either storage: one row at a time,
   the derivative of its log likelihood in eta times x_i. (The plain paths
   below stay as they were: most models have neither.) */
static void counts_grad_loglik(const void *data, const double *w, const R_xlen_t *idx,
                               int m, double *g, double *work) {
  (void) work;
  const logistic_data *L = data;
  for (int k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    const double eta = eta_offset(L, i, w);
    double c;
    if (L->events) {
      c = L->events[i] * sigmoid_neg(eta) - L->nonevents[i] * sigmoid_neg(-eta);
    } else {
      const double y = y_of(L, i);
      c = y * sigmoid_neg(y * eta);
    }
    add_row(L, i, c, g);
  }
}

/* Minibatch rows sit at random places in a data set larger than the cache, so
   the time goes to waiting for memory: ask for the rows' offsets, then their
   entries, before using them, so the waits overlap. In chunks of
   SPARSE_CHUNK rows, the next chunk's offsets asked for while this one's
   entries are: asked for all at once, a whole pass's lines (Adult: 32,561
   rows, three lines each) had left L1 long before they were used, and the
   asking took two more passes over the batch. Four rows at a time, their
   dot products interleaved: each is the same sum in the same order as
   alone (the same bits), but the four chains of additions overlap, where
   one row's waited on each addition in turn. */
#define SPARSE_CHUNK 64
static inline void sparse_ask_starts(const logistic_data *L, const R_xlen_t *idx, int from,
                                     int to) {
  for (int k = from; k < to; k++) DENSE_PREFETCH(L->start + idx[k]);
}

static inline void sparse_ask_rows(const logistic_data *L, const R_xlen_t *idx, int from,
                                   int to) {
  for (int k = from; k < to; k++) {
    const R_xlen_t lo = (R_xlen_t) L->start[idx[k]];
    DENSE_PREFETCH(L->col + lo);
    if (L->val) DENSE_PREFETCH(L->val + lo);
    DENSE_PREFETCH(L->y + idx[k]);
  }
}

/* x_i' w over row i's non-zeros, in order */
static inline double sparse_dot(const logistic_data *L, R_xlen_t lo, R_xlen_t hi,
                                const double *w) {
  double eta = 0.0;
  if (L->val) for (R_xlen_t q = lo; q < hi; q++) eta += L->val[q] * w[L->col[q]];
  else for (R_xlen_t q = lo; q < hi; q++) eta += w[L->col[q]];
  return eta;
}

static inline void sparse_add(const logistic_data *L, R_xlen_t lo, R_xlen_t hi, double c,
                              double *g) {
  if (L->val) for (R_xlen_t q = lo; q < hi; q++) g[L->col[q]] += c * L->val[q];
  else for (R_xlen_t q = lo; q < hi; q++) g[L->col[q]] += c;
}

static void sparse_grad_loglik(const void *data, const double *w, const R_xlen_t *idx,
                               int m, double *g, double *work) {
  (void) work;
  const logistic_data *L = data;
  sparse_ask_starts(L, idx, 0, m < SPARSE_CHUNK ? m : SPARSE_CHUNK);
  for (int k0 = 0; k0 < m; k0 += SPARSE_CHUNK) {
    const int k1 = m - k0 < SPARSE_CHUNK ? m : k0 + SPARSE_CHUNK;
    sparse_ask_starts(L, idx, k1, m - k1 < SPARSE_CHUNK ? m : k1 + SPARSE_CHUNK);
    sparse_ask_rows(L, idx, k0, k1);
    int k = k0;
    /* the dot products of four rows, the non-binary or ragged rest alone */
    if (!L->val) {
      for (; k + 4 <= k1; k += 4) {
        const R_xlen_t i0 = idx[k], i1 = idx[k + 1], i2 = idx[k + 2], i3 = idx[k + 3];
        const R_xlen_t lo0 = (R_xlen_t) L->start[i0], hi0 = (R_xlen_t) L->start[i0 + 1],
          lo1 = (R_xlen_t) L->start[i1], hi1 = (R_xlen_t) L->start[i1 + 1],
          lo2 = (R_xlen_t) L->start[i2], hi2 = (R_xlen_t) L->start[i2 + 1],
          lo3 = (R_xlen_t) L->start[i3], hi3 = (R_xlen_t) L->start[i3 + 1];
        R_xlen_t len = hi0 - lo0;
        if (hi1 - lo1 < len) len = hi1 - lo1;
        if (hi2 - lo2 < len) len = hi2 - lo2;
        if (hi3 - lo3 < len) len = hi3 - lo3;
        /* the first `len` non-zeros of the four rows side by side (four
           sums in registers), then each row's remainder: every row's sum
           in its own order */
        const int *c0 = L->col + lo0, *c1 = L->col + lo1, *c2 = L->col + lo2,
          *c3 = L->col + lo3;
        double e0 = 0.0, e1 = 0.0, e2 = 0.0, e3 = 0.0;
        for (R_xlen_t q = 0; q < len; q++) {
          e0 += w[c0[q]];
          e1 += w[c1[q]];
          e2 += w[c2[q]];
          e3 += w[c3[q]];
        }
        for (R_xlen_t q = lo0 + len; q < hi0; q++) e0 += w[L->col[q]];
        for (R_xlen_t q = lo1 + len; q < hi1; q++) e1 += w[L->col[q]];
        for (R_xlen_t q = lo2 + len; q < hi2; q++) e2 += w[L->col[q]];
        for (R_xlen_t q = lo3 + len; q < hi3; q++) e3 += w[L->col[q]];
        const double y0 = L->y[i0], y1 = L->y[i1], y2 = L->y[i2], y3 = L->y[i3];
        const double a0 = y0 * sigmoid_neg(y0 * e0), a1 = y1 * sigmoid_neg(y1 * e1),
          a2 = y2 * sigmoid_neg(y2 * e2), a3 = y3 * sigmoid_neg(y3 * e3);
        for (R_xlen_t q = lo0; q < hi0; q++) g[L->col[q]] += a0;
        for (R_xlen_t q = lo1; q < hi1; q++) g[L->col[q]] += a1;
        for (R_xlen_t q = lo2; q < hi2; q++) g[L->col[q]] += a2;
        for (R_xlen_t q = lo3; q < hi3; q++) g[L->col[q]] += a3;
      }
    }
    for (; k < k1; k++) {
      const R_xlen_t i = idx[k];
      const R_xlen_t lo = (R_xlen_t) L->start[i], hi = (R_xlen_t) L->start[i + 1];
      const double y = L->y[i];
      sparse_add(L, lo, hi, y * sigmoid_neg(y * sparse_dot(L, lo, hi, w)), g);
    }
  }
}

/* Many covariates: the batch in blocks of rows, vectorised (dense.h).
   Measured on this machine (sgld(), batch 100, medians of 3 runs, before /
   after, under a load average of 8-9 on 2 cores, so only the ratio means
   much): d = 2000, n = 10^3: 1.0k -> 4.5k iterations/s; d = 1000, n = 10^5:
   1.3k -> 4.3k. The wide (AVX2) build against the baseline (thin = 1,
   medians of 3 runs, interleaved, load 2.3-4.5): d = 2000, n = 10^3,
   batch 100: 17.6k-19.9k -> 25.3k-25.9k iterations/s (the kernel's
   instructions per iteration, by callgrind: 790k -> 247k); d = 1000,
   n = 10^5, batch 100: 10.3k-10.7k -> 22.4k-24.5k with float rows,
   10.3k-10.6k -> 15.2k-15.9k with doubles.
   The same kernel reads the rows of doubles (z) or their single-precision
   copy (zf, storage = "float"); T is the element type and S the suffix of
   dense.h's kernels for it. LOGISTIC_BLOCK is one block of B rows from item
   k, its dot products by DOTS(B, dots, dots_spread): LOGISTIC_DOTS, or for
   rows of floats LOGISTIC_DOTS_F, which takes `dots_spread` (asking for the
   next block's rows as it sums) when L->spread; LOGISTIC_BLOCKED the batch,
   in blocks of 4 (dot products by `dots4` or `dots4_spread`) after
   `wide_blocks` (empty, or the wide build's blocks of 8), then single rows. */
#define LOGISTIC_DOTS(B, dots, dots_spread) dots(z, NULL, w, p, c);
#define LOGISTIC_DOTS_F(B, dots, dots_spread)                                        \
  if (L->spread) {                                                                   \
    const float *zn[B];                                                              \
    dots_spread(z, dense_next_rows_f(L->zf, idx, k, B, m, stride, z, zn), w, p, c);  \
  } else {                                                                           \
    dots(z, NULL, w, p, c);                                                          \
  }
#define LOGISTIC_BLOCK(T, S, rows, B, DOTS, dots, dots_spread, axpy)                 \
  {                                                                                  \
    const T *z[B];                                                                   \
    double c[B];                                                                     \
    if (ahead) dense_prefetch_rows##S(rows, idx, k + ahead, k + ahead + (B), m, stride); \
    for (int b = 0; b < (B); b++) z[b] = rows + idx[k + b] * stride;                 \
    DOTS(B, dots, dots_spread)                                                       \
    for (int b = 0; b < (B); b++) {                                                  \
      const double y = z[b][p];                                                      \
      c[b] = y * sigmoid_neg(y * c[b]);                                              \
    }                                                                                \
    axpy(g, z, c, p);                                                                \
  }
#define LOGISTIC_BLOCKED(T, S, rows, ahead_rows, DOTS, dots4, dots4_spread, wide_blocks) \
  const int p = L->p, stride = p + 1, ahead = ahead_rows;                            \
  dense_prefetch_rows##S(rows, idx, 0, ahead, m, stride);                            \
  int k = 0;                                                                         \
  wide_blocks                                                                        \
  for (; k + DENSE_BLOCK <= m; k += DENSE_BLOCK)                                     \
    LOGISTIC_BLOCK(T, S, rows, DENSE_BLOCK, DOTS, dots4, dots4_spread, dense_axpy4##S) \
  for (; k < m; k++) {                                                               \
    const T *zi = rows + idx[k] * stride;                                            \
    const double y = zi[p];                                                          \
    dense_axpy##S(g, zi, y * sigmoid_neg(y * dense_dot##S(zi, w, p)), p);            \
  }

static void blocked_grad_loglik(const logistic_data *L, const double *w, const R_xlen_t *idx,
                                int m, double *g) {
  LOGISTIC_BLOCKED(double, , L->z, L->ahead, LOGISTIC_DOTS, dense_dots4, , )
}

static void float_blocked_grad_loglik(const logistic_data *L, const double *w,
                                      const R_xlen_t *idx, int m, double *g) {
  LOGISTIC_BLOCKED(float, _f, L->zf, L->ahead, LOGISTIC_DOTS_F, dense_dots4_f, dense_dots4p_f, )
}

#ifdef DENSE_WIDE_BUILD
#define LOGISTIC_WIDE_BLOCKS(T, S, rows, DOTS, dots8_spread)                         \
  for (; k + DENSE_WIDE_BLOCK <= m; k += DENSE_WIDE_BLOCK)                           \
    LOGISTIC_BLOCK(T, S, rows, DENSE_WIDE_BLOCK, DOTS, dense_dots8w##S, dots8_spread, \
                   dense_axpy8w##S)
DENSE_WIDE static void blocked_grad_loglik_wide(const logistic_data *L, const double *w,
                                                const R_xlen_t *idx, int m, double *g) {
  LOGISTIC_BLOCKED(double, , L->z, L->ahead, LOGISTIC_DOTS, dense_dots4w, ,
                   LOGISTIC_WIDE_BLOCKS(double, , L->z, LOGISTIC_DOTS, ))
}
DENSE_WIDE static void float_blocked_grad_loglik_wide(const logistic_data *L, const double *w,
                                                      const R_xlen_t *idx, int m, double *g) {
  LOGISTIC_BLOCKED(float, _f, L->zf, L->ahead, LOGISTIC_DOTS, dense_dots4w_f, ,
                   LOGISTIC_WIDE_BLOCKS(float, _f, L->zf, LOGISTIC_DOTS_F, dense_dots8wp_f))
}
#else
#define blocked_grad_loglik_wide blocked_grad_loglik
#define float_blocked_grad_loglik_wide float_blocked_grad_loglik
#endif

/* storage = "float": every p, as the scalar loop below has no float twin */
static void float_grad_loglik(const void *data, const double *w, const R_xlen_t *idx,
                              int m, double *g, double *work) {
  (void) work;
  const logistic_data *L = data;
  if (L->wide) float_blocked_grad_loglik_wide(L, w, idx, m, g);
  else float_blocked_grad_loglik(L, w, idx, m, g);
}

/* row k's term of the gradient, for a few covariates */
#define LOGISTIC_SCALAR_ROW(k)                                                       \
  {                                                                                  \
    const double *zi = L->z + idx[k] * stride;                                       \
    const double y = zi[p];                                                          \
    const double c = y * sigmoid_neg(y * linear_predictor(zi, w, p));                \
    for (int j = 0; j < p; j++) g[j] += c * zi[j];                                   \
  }

static void logistic_grad_loglik(const void *data, const double *w, const R_xlen_t *idx,
                                 int m, double *g, double *work) {
  (void) work;
  const logistic_data *L = data;
  const int p = L->p, stride = p + 1;
  if (p >= DENSE_MIN_P) {
    if (L->wide) blocked_grad_loglik_wide(L, w, idx, m, g);
    else blocked_grad_loglik(L, w, idx, m, g);
    return;
  }
  /* as model_linear.c's linear_sums_small(): rows that prefetch, then rows
     that do not */
  const int ahead = L->ahead, last = ahead < m ? m - ahead : 0;
  int k = 0;
  if (ahead) {
    dense_prefetch_rows(L->z, idx, 0, ahead, m, stride);
    for (; k < last; k++) {
      dense_prefetch_row(L->z + idx[k + ahead] * stride, stride);
      LOGISTIC_SCALAR_ROW(k)
    }
  }
  for (; k < m; k++) LOGISTIC_SCALAR_ROW(k)
}

static double logistic_loglik(const void *data, const double *w, const R_xlen_t *idx,
                              R_xlen_t m, double *work) {
  (void) work;
  const logistic_data *L = data;
  if (!idx) m = L->n;
  double ll = 0.0;
  for (R_xlen_t k = 0; k < m; k++) {
    const R_xlen_t i = idx ? idx[k] : k;
    ll += row_loglik(L, i, w);
  }
  return ll;
}

static void logistic_loglik_rows(const void *data, const double *w, R_xlen_t from,
                                 R_xlen_t to, double *out) {
  const logistic_data *L = data;
  for (R_xlen_t i = from; i < to; i++) out[i - from] = row_loglik(L, i, w);
}

static double logistic_logprior(const void *data, const double *w) {
  const logistic_data *L = data;
  double lp = 0.0;
  for (int j = 0; j < L->p; j++) {
    const double s = L->prior_scale[j], u = (w[j] - L->prior_loc[j]) / s;
    if (!isfinite(s)) continue;   /* flat: the intercept's prior is the centred term */
    if (L->prior_type[j] == PRIOR_LAPLACE) lp += -fabs(u) - log(2.0 * s);
    else lp += -0.5 * u * u - log(s) - M_LN_SQRT_2PI;
  }
  return lp + centred_logprior(&L->centred, w);
}

/* coefficient j's log prior at v, up to a constant */
static inline double coef_logprior(const logistic_data *L, int j, double v) {
  const double u = (v - L->prior_loc[j]) / L->prior_scale[j];
  return L->prior_type[j] == PRIOR_LAPLACE ? -fabs(u) : -0.5 * u * u;
}

/* the log posterior along coefficient j (sgld.h), but for the centred term
   (coord_centre): the rows idx[0..m) with
   beta_j = v, whose linear predictors move by x_ij (v - beta_j) */
static double logistic_logpost_coordinate(const void *data, const double *w, int j, double v,
                                          const R_xlen_t *idx, R_xlen_t m) {
  const logistic_data *L = data;
  double lp = coef_logprior(L, j, v);
  for (R_xlen_t k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    lp += loglik_at(L, i, eta_offset(L, i, w) + x_of(L, i, j) * (v - w[j]));
  }
  return lp;
}

/* minus the derivative of coefficient j's log prior; the Laplace prior's is
   taken as 0 at its kink */
static inline double prior_slope(const logistic_data *L, int j, double wj) {
  const double s = L->prior_scale[j], u = wj - L->prior_loc[j];
  if (L->prior_type[j] == PRIOR_LAPLACE) return (double) ((u > 0) - (u < 0)) / s;
  return u / (s * s);
}

/* g[j] <- g[j] * scale - prior_slope(L, j, w[j]) for every coefficient
   (scale 1: g minus the slopes, as g * 1 is g). When every coefficient has
   the same kind of prior (L->prior_all) the loop has no branch and
   vectorises: a division per coefficient, one at a time, took most of the
   pass (callgrind, d = 2000: 44k instructions per gradient). The Laplace
   sign is written as copysign(|u| > 0, u) + 0, which is prior_slope()'s
   (u > 0) - (u < 0) for every u, zeros and NaN included (the + 0 turns -0
   into 0); GCC 12 does not vectorise the comparisons' difference. And as
   the sign is -1, 0 or 1, sign / s is exactly sign * (1 / s): the Laplace
   pass multiplies by the reciprocals, computed once (L->prior_inv_scale),
   and divides nothing (Adult, d = 124, batch 10: 1394 -> 1046 instructions
   per iteration). In AVX2 where the processor has it (SGLD_WIDE). */
SGLD_WIDE static void add_prior_slopes(const logistic_data *L, const double *w, double scale, double *g) {
  const int p = L->p;
  const double *loc = L->prior_loc, *sc = L->prior_scale;
  if (L->prior_all == PRIOR_LAPLACE) {
    const double *inv = L->prior_inv_scale;
    DENSE_SIMD
    for (int j = 0; j < p; j++) {
      const double u = w[j] - loc[j];
      g[j] = g[j] * scale - (copysign((double) (fabs(u) > 0), u) + 0.0) * inv[j];
    }
  } else if (L->prior_all == PRIOR_NORMAL) {
    DENSE_SIMD
    for (int j = 0; j < p; j++) g[j] = g[j] * scale - (w[j] - loc[j]) / (sc[j] * sc[j]);
  } else {
    for (int j = 0; j < p; j++) g[j] = g[j] * scale - prior_slope(L, j, w[j]);
  }
  centred_grad(&L->centred, w, g);
}

static void logistic_grad_logprior(const void *data, const double *w, double *g) {
  add_prior_slopes(data, w, 1.0, g);
}

/* the likelihood sum, scaled, and the prior in one pass over the parameters
   (the same operations as grad_loglik then grad_logprior, so the same bits) */
static void logistic_grad_logpost(const void *data, const double *w, const R_xlen_t *idx,
                                  int m, double scale, double *g, double *work) {
  const logistic_data *L = data;
  for (int j = 0; j < L->p; j++) g[j] = 0.0;
  if (L->offset || L->events) counts_grad_loglik(data, w, idx, m, g, work);
  else if (L->zf) float_grad_loglik(data, w, idx, m, g, work);
  else if (L->z) logistic_grad_loglik(data, w, idx, m, g, work);
  else sparse_grad_loglik(data, w, idx, m, g, work);
  add_prior_slopes(L, w, scale, g);
}

/* mean log likelihood per datum and accuracy (the sign of x' beta), named
   in this order for R */
const char *const model_logistic_metrics[] = {"test_loglik", "test_accuracy", NULL};

static void logistic_metrics(const void *data, const double *w, double *out, double *work) {
  (void) work;
  const logistic_data *L = data;
  double ll = 0.0, correct = 0.0;
  for (R_xlen_t i = 0; i < L->n; i++) {
    const double u = y_of(L, i) * eta_of(L, i, w);
    ll += log_sigmoid(u);
    correct += u > 0;
  }
  out[0] = ll / (double) L->n;
  out[1] = correct / (double) L->n;
}

/* Under q = N(mu, diag(sd^2)) observation i's linear predictor (offset
   included) is N(a, v): a = x_i' mu, v = sum_j x_ij^2 sd_j^2, any storage */
static inline void row_moments(const logistic_data *L, R_xlen_t i, const double *mu,
                               const double *sd, double *a, double *v) {
  rows_moments(&L->rows, i, mu, sd, L->offset ? L->offset[i] : 0.0, a, v);
}

/* g_mu += c x_i and g_sd += f x_i^2 sd (elementwise), any storage */
static inline void add_row_gradients(const logistic_data *L, R_xlen_t i, double c, double f,
                                     const double *sd, double *g_mu, double *g_sd) {
  rows_add_gradients(&L->rows, i, c, f, sd, g_mu, g_sd);
}

/* Local reparameterisation (sgld.h: grad_loglik_local). Under q = N(mu,
   diag(sd^2)) observation i's linear predictor x_i' w is N(a_i, v_i) with
   a_i = x_i' mu and v_i = sum_j x_ij^2 sd_j^2; draw it as a_i + sqrt(v_i) e_i,
   one e_i per observation, and with c_i the derivative of the row's log
   likelihood there, d/d mu_j = c_i x_ij and d/d sd_j = c_i e_i x_ij^2 sd_j /
   sqrt(v_i). Two passes over each row (the moments, then the gradients), any
   storage, offsets and counts included. */
static double logistic_grad_loglik_local(const void *data, const double *mu, const double *sd,
                                         const R_xlen_t *idx, int m, sgld_rng *rng,
                                         double *g_mu, double *g_sd, double *work) {
  (void) work;
  const logistic_data *L = data;
  double ll = 0.0;
  for (int k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    double a, v;
    row_moments(L, i, mu, sd, &a, &v);
    const double s = sqrt(v), e = rng_norm(rng), eta = a + s * e;
    double c;
    if (L->events) {
      c = L->events[i] * sigmoid_neg(eta) - L->nonevents[i] * sigmoid_neg(-eta);
      if (L->events[i] != 0.0) ll += L->events[i] * log_sigmoid(eta);
      if (L->nonevents[i] != 0.0) ll += L->nonevents[i] * log_sigmoid(-eta);
    } else {
      const double y = y_of(L, i);
      c = y * sigmoid_neg(y * eta);
      ll += log_sigmoid(y * eta);
    }
    const double f = s > 0 ? c * e / s : 0.0;   /* v = 0: nothing depends on sd */
    add_row_gradients(L, i, c, f, sd, g_mu, g_sd);
  }
  return ll;
}

/* The expectation under q = N(mu, diag(sd^2)) (sgld.h: expected_loglik):
   observation i's linear predictor is N(a_i, v_i), a_i = x_i' mu (plus the
   offset), v_i = sum_j x_ij^2 sd_j^2, and with E, E1, E2 the expectations
   of logistic_normal() at (y_i a_i, v_i), its expected log likelihood is E,
   whose derivative in a_i is y_i E1 and in v_i -E2 / 2: d/d mu_j = y_i E1
   x_ij, d/d sd_j = -E2 x_ij^2 sd_j. With counts, events e_i and non-events
   b_i: e_i E(a_i) + b_i E(-a_i). Any storage. */
static double logistic_expected_loglik(const void *data, const double *mu, const double *sd,
                                       const R_xlen_t *idx, int m, double *g_mu, double *g_sd,
                                       double *work) {
  (void) work;
  const logistic_data *L = data;
  double ll = 0.0;
  for (int k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    double a, v;
    row_moments(L, i, mu, sd, &a, &v);
    double c, h, e[3];   /* d/d a_i and -2 d/d v_i */
    if (L->events) {
      c = h = 0.0;
      if (L->events[i] != 0.0) {
        logistic_normal(a, v, e);
        ll += L->events[i] * e[0];
        c += L->events[i] * e[1];
        h += L->events[i] * e[2];
      }
      if (L->nonevents[i] != 0.0) {
        logistic_normal(-a, v, e);
        ll += L->nonevents[i] * e[0];
        c -= L->nonevents[i] * e[1];
        h += L->nonevents[i] * e[2];
      }
    } else {
      const double y = y_of(L, i);
      logistic_normal(y * a, v, e);
      ll += e[0];
      c = y * e[1];
      h = e[2];
    }
    add_row_gradients(L, i, c, -h, sd, g_mu, g_sd);
  }
  return ll;
}

/* Newton's pieces (sgld.h: hess_loglik). Per row, with eta its linear
   predictor (offset included) and pi = sigma(eta): the log likelihood, its
   derivative in eta (y sigma(-y eta), or a (1 - pi) - b pi with counts a and
   b) into g times x_i, and its second derivative -pi (1 - pi) (times a + b)
   into H times x_i x_i'. pi (1 - pi) = e / (1 + e)^2 with e = exp(-|eta|),
   which neither overflows nor cancels. Dense rows four at a time
   (hessian.c), sparse ones by their non-zeros. */
static double row_newton(const logistic_data *L, R_xlen_t i, const double *w, double *c,
                         double *h) {
  const double eta = eta_offset(L, i, w), e = exp(-fabs(eta)), v = e / ((1.0 + e) * (1.0 + e));
  if (L->events) {
    const double a = L->events[i], b = L->nonevents[i];
    *c = a * sigmoid_neg(eta) - b * sigmoid_neg(-eta);
    *h = -(a + b) * v;
    return (a != 0.0 ? a * log_sigmoid(eta) : 0.0) + (b != 0.0 ? b * log_sigmoid(-eta) : 0.0);
  }
  const double y = y_of(L, i);
  *c = y * sigmoid_neg(y * eta);
  *h = -v;
  return log_sigmoid(y * eta);
}

static double logistic_hess_loglik(const void *data, const double *w, const R_xlen_t *idx,
                                   R_xlen_t m, double *g, double *H, double *work) {
  (void) work;
  const logistic_data *L = data;
  const int p = L->p;
  if (!idx) m = L->n;
  double ll = 0.0;
  for (R_xlen_t k = 0; k < m; k += 4) {
    const int rows = m - k < 4 ? (int) (m - k) : 4;
    const double *x[4];
    double h[4];
    for (int b = 0; b < rows; b++) {
      const R_xlen_t i = idx ? idx[k + b] : k + b;
      double c;
      ll += row_newton(L, i, w, &c, &h[b]);
      add_row(L, i, c, g);
      if (L->z) {
        x[b] = L->z + i * (p + 1);
      } else {
        const R_xlen_t lo = (R_xlen_t) L->start[i], hi = (R_xlen_t) L->start[i + 1];
        hess_sparse_row(H, p, L->col + lo, L->val ? L->val + lo : NULL, hi - lo, h[b]);
      }
    }
    if (L->z) hess_rows(H, p, p, x, h, rows);
  }
  hess_mirror(H, p);
  return ll;
}

/* the normal prior's Hessian, -1 / scale^2 on the diagonal; a Laplace
   prior has none at its kink */
static int logistic_hess_logprior(const void *data, const double *w, double *H) {
  (void) w;
  const logistic_data *L = data;
  for (int j = 0; j < L->p; j++) if (L->prior_type[j] != PRIOR_NORMAL) return 0;
  for (int j = 0; j < L->p; j++)
    H[j + (R_xlen_t) j * L->p] -= 1.0 / (L->prior_scale[j] * L->prior_scale[j]);
  centred_hess(&L->centred, H, L->p);
  return 1;
}

/* The log likelihood and its gradient in one pass (sgld.h: loglik_grad),
   for mala(): each row's linear predictor once, and one exponential,
   e = exp(-|u|) with u = y eta, for both log sigma(u) = -log1p(e) (+ u
   where u < 0) and the derivative y sigma(-u) = y e / (1 + e) (y / (1 + e)
   where u < 0). Offsets and counts go through row_newton(). Measured with
   mala() on the nearly separated simulation of test-auto.R (n = 1300,
   d = 12): 81 us a step with the two passes. */
static double logistic_loglik_grad(const void *data, const double *w, const R_xlen_t *idx,
                                   R_xlen_t m, double *g, double *work) {
  (void) work;
  const logistic_data *L = data;
  if (!idx) m = L->n;
  double ll = 0.0;
  for (R_xlen_t k = 0; k < m; k++) {
    const R_xlen_t i = idx ? idx[k] : k;
    double c;
    if (L->offset || L->events) {
      double h;
      ll += row_newton(L, i, w, &c, &h);
    } else {
      const double y = y_of(L, i), u = y * eta_of(L, i, w), e = exp(-fabs(u)), l = log1p(e);
      ll += u > 0 ? -l : u - l;
      c = y * (u > 0 ? e : 1.0) / (1.0 + e);
    }
    add_row(L, i, c, g);
  }
  return ll;
}

/* E_q[log prior]: for a normal prior with location l and scale s,
   -((mu - l)^2 + sd^2) / (2 s^2) - log s - log sqrt(2 pi); for a Laplace
   prior -E|w - l| / s - log 2s with E|w - l| = sd sqrt(2/pi) e^(-u^2/2) +
   delta (1 - 2 Phi(-u)), delta = mu - l, u = delta / sd, whose derivatives
   are 2 Phi(u) - 1 in mu and 2 phi(u) in sd. */
static double logistic_expected_logprior(const void *data, const double *mu, const double *sd,
                                         double *g_mu, double *g_sd) {
  const logistic_data *L = data;
  double lp = 0.0;
  for (int j = 0; j < L->p; j++) {
    const double s = L->prior_scale[j], delta = mu[j] - L->prior_loc[j];
    if (!isfinite(s)) continue;   /* flat */
    if (L->prior_type[j] == PRIOR_LAPLACE) {
      const double u = delta / sd[j], dens = exp(-0.5 * u * u) / sqrt(2.0 * M_PI);
      const double below = 0.5 * erfc(u / M_SQRT2);         /* Phi(-u) */
      lp += -(2.0 * sd[j] * dens + delta * (1.0 - 2.0 * below)) / s - log(2.0 * s);
      g_mu[j] -= (1.0 - 2.0 * below) / s;
      g_sd[j] -= 2.0 * dens / s;
    } else {
      lp += -0.5 * (delta * delta + sd[j] * sd[j]) / (s * s) - log(s) - M_LN_SQRT_2PI;
      g_mu[j] -= delta / (s * s);
      g_sd[j] -= sd[j] / (s * s);
    }
  }
  return lp + centred_expected(&L->centred, mu, sd, g_mu, g_sd);
}

sgld_model model_logistic_build(SEXP spec) {
  logistic_data *L = (logistic_data *) R_alloc(1, sizeof(logistic_data));
  L->p = list_int(spec, "p");
  L->n = (R_xlen_t) list_real(spec, "n");
  if (L->p < 1 || L->n < 1) error("internal: logistic model needs p >= 1 and n >= 1");
  const int sparse = list_int(spec, "sparse");
  rows_from_spec(&L->rows, spec, L->p, L->n);   /* rows.h: read and checked there */
  L->z = L->rows.z;
  L->start = L->rows.start;
  L->val = L->rows.val;
  L->y = L->rows.y;
  L->col = L->rows.col;
  L->zf = list_optional_floats(spec, "zf", (R_xlen_t) (L->p + 1) * L->n);
  huge_pages(L->zf, (size_t) (L->p + 1) * (size_t) L->n * sizeof(float));
  SEXP type = list_elt(spec, "prior_type");
  if (TYPEOF(type) != INTSXP || XLENGTH(type) != L->p)
    error("internal: 'prior_type' must be an integer vector of length p");
  L->prior_type = INTEGER(type);
  L->prior_loc = list_doubles(spec, "prior_loc", L->p);
  L->prior_scale = list_doubles(spec, "prior_scale", L->p);
  L->prior_all = L->prior_type[0];
  for (int j = 1; j < L->p; j++)
    if (L->prior_type[j] != L->prior_all) L->prior_all = -1;
  double *inv = (double *) R_alloc(L->p, sizeof(double));
  for (int j = 0; j < L->p; j++) inv[j] = 1.0 / L->prior_scale[j];
  L->prior_inv_scale = inv;
  coef_prior_read(&L->centred, spec, L->p);
  L->offset = list_optional_doubles(spec, "obs_offset", L->n);
  L->events = list_optional_doubles(spec, "obs_events", L->n);
  L->nonevents = L->events ? list_doubles(spec, "obs_nonevents", L->n) : NULL;
  const int counts = L->offset || L->events;
  L->wide = dense_wide();
  L->ahead = sparse ? 0 : dense_ahead(L->p, (double) L->n,
                                      L->zf ? sizeof(float) : sizeof(double));
  L->spread = L->zf && dense_spread(L->p, (double) L->n);

  /* fields not named here (optional functions this model lacks) are zero */
  return (sgld_model) {
    .d = L->p,
    .n = L->n,
    .data = L,
    .grad_loglik = counts ? counts_grad_loglik : L->zf ? float_grad_loglik
                   : sparse ? sparse_grad_loglik : logistic_grad_loglik,
    .loglik = logistic_loglik,
    .loglik_rows = logistic_loglik_rows,
    .grad_logprior = logistic_grad_logprior,
    .logprior = logistic_logprior,
    .grad_logpost = logistic_grad_logpost,
    .metrics = logistic_metrics,
    .grad_loglik_local = logistic_grad_loglik_local,
    .expected_loglik = logistic_expected_loglik,
    .expected_logprior = logistic_expected_logprior,
    .hess_loglik = logistic_hess_loglik,
    .hess_logprior = logistic_hess_logprior,
    .loglik_grad = logistic_loglik_grad,
    .logpost_coordinate = logistic_logpost_coordinate,
    .coord_centre = L->centred.centre,
    .coord_centre_loc = L->centred.centre_loc,
    .coord_centre_scale = L->centred.centre_scale
  };
}
