/*
 * Bayesian neural network: a multilayer perceptron with L >= 0 hidden layers
 * of ReLU or tanh units and a linear output layer,
 *
 *   a_0 = x,  a_l = act(W_l a_{l-1} + b_l) (l = 1..L),  f = W_{L+1} a_L + b_{L+1},
 *
 * and a Gaussian (y ~ N(f, sigma^2), log sigma^2 sampled), Bernoulli
 * (P(y = 1) = 1 / (1 + e^-f)) or categorical (softmax of K outputs) likelihood.
 *
 * Parameters, in order: for each layer l = 1..L+1 its weights W_l
 * (out x in, stored unit by unit: the incoming weights of a unit are
 * contiguous, so the forward pass is one dot product per unit and the
 * backward pass reads the same rows) and then its biases b_l; with the
 * hierarchical prior, one log precision per layer; for the Gaussian family,
 * log sigma^2 last.
 *
 * Priors: every weight and bias of layer l is N(0, s_l^2) with s_l fixed, or
 * N(0, 1 / lambda_l) with lambda_l ~ Gamma(shape, rate) sampled as its
 * logarithm (Jacobian included); the noise precision 1 / sigma^2 ~
 * Gamma(shape, rate), i.e. sigma^2 ~ IG(shape, rate).
 *
 * The data are one (p + 1) x n matrix whose column i is (x_i, y_i), the
 * inputs already standardised by R; y is the (standardised) response, 0/1, or
 * the class 0..K-1. Gradients are by backpropagation, in blocks of
 * observations (below, "Blocked passes") through the chain's work buffer.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <R.h>
#include <Rmath.h>
#include "sgld.h"
#include "model_mlp.h"

/* log sigma(u) = -log(1 + e^-u), without overflow */
static inline double mlp_log_sigmoid(double u) {
  return u > 0 ? -log1p(exp(-u)) : u - log1p(exp(u));
}

/* Log likelihood of one observation given its outputs f; when df is not
   NULL also d loglik / d f (and, Gaussian, d / d log sigma^2 into *dnoise). */
static double output_loglik(const mlp_data *M, const double *f, double y, double log_s2,
                            double *df, double *dnoise) {
  switch (M->family) {
  case FAMILY_GAUSSIAN: {
    const double r = y - f[0], prec = exp(-log_s2);
    if (df) {
      df[0] = r * prec;
      *dnoise += -0.5 + 0.5 * r * r * prec;
    }
    return -0.5 * (M_LN_2PI + log_s2) - 0.5 * r * r * prec;
  }
  case FAMILY_BINOMIAL: {
    /* y f - log(1 + e^f) = log sigma(f) if y = 1, log sigma(-f) if y = 0 */
    const double u = y > 0.5 ? f[0] : -f[0];
    if (df) {
      /* y - sigma(f) */
      const double e = exp(-fabs(f[0])), sig = f[0] > 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
      df[0] = y - sig;
    }
    return mlp_log_sigmoid(u);
  }
  default: {
    const int K = M->width[M->layers], c = (int) y;
    double mx = f[0];
    for (int k = 1; k < K; k++) if (f[k] > mx) mx = f[k];
    double s = 0.0;
    for (int k = 0; k < K; k++) s += exp(f[k] - mx);
    const double lse = mx + log(s);
    if (df) for (int k = 0; k < K; k++) df[k] = (k == c) - exp(f[k] - lse);
    return f[c] - lse;
  }
  }
}

/* for model_mlp_local.c (model_mlp.h) */
double mlp_output_loglik(const mlp_data *M, const double *f, double y, double log_s2,
                         double *df, double *dnoise) {
  return output_loglik(M, f, y, log_s2, df, dnoise);
}

/*
 * Blocked passes. A minibatch goes through the network MLP_BLOCK observations
 * at a time, each layer's activations of the block stored feature-major
 * (a[j * MLP_BLOCK + i]: unit j, observation i), so that every weight is read
 * once per block instead of once per observation and the innermost loops run
 * over the block's observations, a fixed count the compiler turns into
 * vector instructions without reordering any sum (R's CFLAGS are plain -O2,
 * no -ffast-math: a dot product over the inputs would stay scalar). The
 * padding observations of a last, partial block have zero inputs and zero
 * back-propagated errors, so they add nothing.
 *
 * The work buffer (mlp_work_size()): the input block (p x B), the
 * activations of every layer (units x B), two error blocks
 * (max_width x B each), a row-major copy of a hidden layer's activations for
 * the weight gradient (B x max_width) and one observation's outputs and
 * their errors (2 x max_width).
 */
#define MLP_BLOCK 16

/* The two hot functions are also compiled for AVX2 (sgld.h: SGLD_WIDE). */

static size_t mlp_work_size(const mlp_data *M) {
  return (size_t) MLP_BLOCK * ((size_t) M->p + M->units + 3 * (size_t) M->max_width) +
    2 * (size_t) M->max_width;
}

/* where layer l's block of activations starts (layer 0: the input block) */
static inline double *block_acts(const mlp_data *M, double *work, int l) {
  double *a = work;
  for (int q = 0; q < l; q++) a += (size_t) M->width[q] * MLP_BLOCK;
  return a;
}

/* One layer, n_in x B feature-major in, n_out x B out: two units at a time,
   so each loaded input vector serves two accumulators. */
SGLD_WIDE static void layer_forward(const double *restrict W, const double *restrict b,
                          const double *restrict in, double *restrict out,
                          int n_in, int n_out, int hidden, int act) {
  enum { B = MLP_BLOCK };
  int j = 0;
  for (; j + 1 < n_out; j += 2) {
    const double *W0 = W + (size_t) j * n_in, *W1 = W0 + n_in;
    double s0[B], s1[B];
    for (int i = 0; i < B; i++) { s0[i] = b[j]; s1[i] = b[j + 1]; }
    for (int k = 0; k < n_in; k++) {
      const double *a = in + (size_t) k * B, w0 = W0[k], w1 = W1[k];
      for (int i = 0; i < B; i++) { s0[i] += w0 * a[i]; s1[i] += w1 * a[i]; }
    }
    double *o0 = out + (size_t) j * B, *o1 = o0 + B;
    for (int i = 0; i < B; i++) { o0[i] = s0[i]; o1[i] = s1[i]; }
  }
  for (; j < n_out; j++) {
    const double *W0 = W + (size_t) j * n_in;
    double s0[B];
    for (int i = 0; i < B; i++) s0[i] = b[j];
    for (int k = 0; k < n_in; k++) {
      const double *a = in + (size_t) k * B, w0 = W0[k];
      for (int i = 0; i < B; i++) s0[i] += w0 * a[i];
    }
    double *o0 = out + (size_t) j * B;
    for (int i = 0; i < B; i++) o0[i] = s0[i];
  }
  if (hidden) {
    const size_t len = (size_t) n_out * B;
    if (act == ACT_RELU) {
      for (size_t q = 0; q < len; q++) out[q] = out[q] > 0 ? out[q] : 0.0;
    } else {
      for (size_t q = 0; q < len; q++) out[q] = tanh(out[q]);
    }
  }
}

/* Forward pass of observations rows[0..nb) (nb <= B; pointers to their
   columns of z): fills every layer's block; returns the output block. */
static const double *block_forward(const mlp_data *M, const double *w,
                                   const double *const *rows, int nb, double *work) {
  enum { B = MLP_BLOCK };
  double *in = work;
  const int p = M->p;
  for (int i = 0; i < nb; i++) {
    const double *x = rows[i];
    for (int k = 0; k < p; k++) in[(size_t) k * B + i] = x[k];
  }
  for (int i = nb; i < B; i++)
    for (int k = 0; k < p; k++) in[(size_t) k * B + i] = 0.0;
  for (int l = 1; l <= M->layers; l++) {
    const int n_in = M->width[l - 1], n_out = M->width[l];
    const double *W = w + M->offset[l], *b = W + (size_t) n_out * n_in;
    double *out = in + (size_t) n_in * B;
    layer_forward(W, b, in, out, n_in, n_out, l < M->layers, M->act);
    in = out;
  }
  return in;
}

/* observation i's outputs, copied out of the output block */
static inline void block_outputs(const mlp_data *M, const double *out, int i, double *f) {
  const int K = M->width[M->layers];
  for (int k = 0; k < K; k++) f[k] = out[(size_t) k * MLP_BLOCK + i];
}

SGLD_WIDE static void mlp_grad_loglik(const void *data, const double *w, const R_xlen_t *idx, int m,
                            double *g, double *work) {
  enum { B = MLP_BLOCK };
  const mlp_data *M = data;
  const int stride = M->p + 1, L = M->layers, K = M->width[L];
  double *delta = block_acts(M, work, L + 1), *delta_prev = delta + (size_t) M->max_width * B;
  double *rowmajor = delta_prev + (size_t) M->max_width * B;
  double *f = rowmajor + (size_t) M->max_width * B, *df = f + M->max_width;
  const double log_s2 = M->family == FAMILY_GAUSSIAN ? w[noise_index(M)] : 0.0;
  double dnoise = 0.0;
  const double *rows[B];
  for (int i0 = 0; i0 < m; i0 += B) {
    const int nb = m - i0 < B ? m - i0 : B;
    for (int i = 0; i < nb; i++) rows[i] = M->z + idx[i0 + i] * stride;
    const double *out = block_forward(M, w, rows, nb, work);
    /* the output layer's errors, zero for the padding */
    for (int i = 0; i < B; i++) {
      if (i < nb) {
        block_outputs(M, out, i, f);
        output_loglik(M, f, rows[i][M->p], log_s2, df, &dnoise);
        for (int k = 0; k < K; k++) delta[(size_t) k * B + i] = df[k];
      } else {
        for (int k = 0; k < K; k++) delta[(size_t) k * B + i] = 0.0;
      }
    }
    for (int l = L; l >= 1; l--) {
      const int n_in = M->width[l - 1], n_out = M->width[l];
      const double *W = w + M->offset[l];
      double *gW = g + M->offset[l], *gb = gW + (size_t) n_out * n_in;
      /* the layer's inputs observation by observation: the data's own
         columns for the first layer, else a row-major copy of the block */
      const double *in_row[B];
      if (l == 1) {
        for (int i = 0; i < nb; i++) in_row[i] = rows[i];
      } else {
        const double *a = block_acts(M, work, l - 1);
        for (int i = 0; i < nb; i++) {
          double *r = rowmajor + (size_t) i * n_in;
          for (int k = 0; k < n_in; k++) r[k] = a[(size_t) k * B + i];
          in_row[i] = r;
        }
        for (size_t q = 0; q < (size_t) n_in * B; q++) delta_prev[q] = 0.0;
      }
      for (int j = 0; j < n_out; j++) {
        const double *dj = delta + (size_t) j * B;
        /* the observations whose error reaches unit j (an inactive ReLU
           unit's is exactly 0) */
        double d[B];
        const double *r[B];
        int nz = 0;
        for (int i = 0; i < nb; i++)
          if (dj[i] != 0.0) { d[nz] = dj[i]; r[nz] = in_row[i]; nz++; }
        if (nz == 0) continue;
        double *gWj = gW + (size_t) j * n_in;
        int q = 0;
        /* two observations per sweep over the unit's weight gradient */
        for (; q + 1 < nz; q += 2) {
          const double d0 = d[q], d1 = d[q + 1], *r0 = r[q], *r1 = r[q + 1];
#pragma omp simd
          for (int k = 0; k < n_in; k++) gWj[k] += d0 * r0[k] + d1 * r1[k];
        }
        if (q < nz) {
          const double d0 = d[q], *r0 = r[q];
#pragma omp simd
          for (int k = 0; k < n_in; k++) gWj[k] += d0 * r0[k];
        }
        double sb = 0.0;
        for (int i = 0; i < nz; i++) sb += d[i];
        gb[j] += sb;
        if (l > 1) {
          const double *Wj = W + (size_t) j * n_in;
          for (int k = 0; k < n_in; k++) {
            double *dp = delta_prev + (size_t) k * B;
            const double wk = Wj[k];
            for (int i = 0; i < B; i++) dp[i] += wk * dj[i];
          }
        }
      }
      if (l > 1) {
        /* through the activation of layer l - 1, whose outputs are a */
        const double *a = block_acts(M, work, l - 1);
        const size_t len = (size_t) n_in * B;
        if (M->act == ACT_RELU) {
          for (size_t q = 0; q < len; q++) delta[q] = a[q] > 0 ? delta_prev[q] : 0.0;
        } else {
          for (size_t q = 0; q < len; q++) delta[q] = delta_prev[q] * (1.0 - a[q] * a[q]);
        }
      }
    }
  }
  if (M->family == FAMILY_GAUSSIAN) g[noise_index(M)] += dnoise;
}

static double mlp_loglik(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                         double *work) {
  enum { B = MLP_BLOCK };
  const mlp_data *M = data;
  if (!idx) m = M->n;
  const int stride = M->p + 1;
  double *f = block_acts(M, work, M->layers + 1) + 3 * (size_t) M->max_width * B;
  const double log_s2 = M->family == FAMILY_GAUSSIAN ? w[noise_index(M)] : 0.0;
  const double *rows[B];
  double ll = 0.0;
  for (R_xlen_t i0 = 0; i0 < m; i0 += B) {
    const int nb = m - i0 < B ? (int) (m - i0) : B;
    for (int i = 0; i < nb; i++) rows[i] = M->z + (idx ? idx[i0 + i] : i0 + i) * stride;
    const double *out = block_forward(M, w, rows, nb, work);
    for (int i = 0; i < nb; i++) {
      block_outputs(M, out, i, f);
      ll += output_loglik(M, f, rows[i][M->p], log_s2, NULL, NULL);
    }
  }
  return ll;
}

/* Each row's log likelihood, for log_lik() and loo() (sgld.h: loglik_rows),
   in the response's own units: a standardised response's density is y_scale
   times the original's, so log y_scale comes off each row (mlp_loglik
   leaves it out: a constant does not move the samplers). The blocked forward
   pass needs a buffer, which loglik_rows is not given; it is allocated here
   with malloc (threads share this function, so no R_alloc), and a failed
   allocation gives NaN rows rather than an R error inside a thread. */
static void mlp_loglik_rows(const void *data, const double *w, R_xlen_t from, R_xlen_t to,
                            double *out) {
  enum { B = MLP_BLOCK };
  const mlp_data *M = data;
  const int stride = M->p + 1;
  const double log_s2 = M->family == FAMILY_GAUSSIAN ? w[noise_index(M)] : 0.0;
  const double shift = log(M->y_scale);
  double *work = (double *) malloc(mlp_work_size(M) * sizeof(double));
  if (!work) {
    for (R_xlen_t i = from; i < to; i++) out[i - from] = NAN;
    return;
  }
  double *f = block_acts(M, work, M->layers + 1) + 3 * (size_t) M->max_width * B;
  const double *rows[B];
  for (R_xlen_t i0 = from; i0 < to; i0 += B) {
    const int nb = to - i0 < B ? (int) (to - i0) : B;
    for (int i = 0; i < nb; i++) rows[i] = M->z + (i0 + i) * stride;
    const double *o = block_forward(M, w, rows, nb, work);
    for (int i = 0; i < nb; i++) {
      block_outputs(M, o, i, f);
      out[i0 + i - from] = output_loglik(M, f, rows[i][M->p], log_s2, NULL, NULL) - shift;
    }
  }
  free(work);
}

/* number of weights and biases in layer l */
static inline int layer_size(const mlp_data *M, int l) {
  return M->offset[l + 1] - M->offset[l];
}

static double mlp_logprior(const void *data, const double *w) {
  const mlp_data *M = data;
  double lp = 0.0;
  for (int l = 1; l <= M->layers; l++) {
    double ss = 0.0;
    for (int j = M->offset[l]; j < M->offset[l + 1]; j++) ss += w[j] * w[j];
    const int size = layer_size(M, l);
    if (M->prior_type == MLP_PRIOR_NORMAL) {
      const double s = M->prior_sd[l - 1];
      lp += -0.5 * ss / (s * s) - size * (log(s) + M_LN_SQRT_2PI);
    } else if (M->prior_type == MLP_PRIOR_GAMMA_INTEGRATED) {
      /* the N(0, 1 / lambda) density of the layer's N weights integrated
         over lambda ~ Gamma(a, b): a multivariate t whose scale follows
         the layer's sum of squares */
      const double a = M->prior_shape, b = M->prior_rate, h = 0.5 * size;
      lp += lgammafn(a + h) - lgammafn(a) + a * log(b) - size * M_LN_SQRT_2PI -
        (a + h) * log(b + 0.5 * ss);
    } else {
      const double u = w[precision_index(M, l)], lambda = exp(u);
      const double a = M->prior_shape, b = M->prior_rate;
      lp += 0.5 * size * u - 0.5 * lambda * ss - size * M_LN_SQRT_2PI;
      /* log lambda ~ the log of a Gamma(a, b) variable */
      lp += a * u - b * lambda + a * log(b) - lgammafn(a);
    }
  }
  if (M->family == FAMILY_GAUSSIAN) {
    /* 1 / sigma^2 ~ Gamma(a, b), in gamma = log sigma^2 */
    const double s = w[noise_index(M)], a = M->noise_shape, b = M->noise_rate;
    lp += -a * s - b * exp(-s) + a * log(b) - lgammafn(a);
  }
  return lp;
}

static void mlp_grad_logprior(const void *data, const double *w, double *g) {
  const mlp_data *M = data;
  for (int l = 1; l <= M->layers; l++) {
    if (M->prior_type == MLP_PRIOR_NORMAL) {
      const double s = M->prior_sd[l - 1], prec = 1.0 / (s * s);
      for (int j = M->offset[l]; j < M->offset[l + 1]; j++) g[j] -= w[j] * prec;
    } else if (M->prior_type == MLP_PRIOR_GAMMA_INTEGRATED) {
      double ss = 0.0;
      for (int j = M->offset[l]; j < M->offset[l + 1]; j++) ss += w[j] * w[j];
      /* the precision's posterior mean given the layer's weights */
      const double lambda = (M->prior_shape + 0.5 * layer_size(M, l)) /
        (M->prior_rate + 0.5 * ss);
      for (int j = M->offset[l]; j < M->offset[l + 1]; j++) g[j] -= lambda * w[j];
    } else {
      const int q = precision_index(M, l);
      const double lambda = exp(w[q]);
      double ss = 0.0;
      for (int j = M->offset[l]; j < M->offset[l + 1]; j++) {
        ss += w[j] * w[j];
        g[j] -= lambda * w[j];
      }
      g[q] += 0.5 * layer_size(M, l) - 0.5 * lambda * ss + M->prior_shape -
        M->prior_rate * lambda;
    }
  }
  if (M->family == FAMILY_GAUSSIAN) {
    const int q = noise_index(M);
    g[q] += -M->noise_shape + M->noise_rate * exp(-w[q]);
  }
}

/* Held-out metrics, in the response's own units: the mean log likelihood per
   datum, then the RMSE (regression) or the accuracy (classification). */
const char *const model_mlp_regression_metrics[] = {"test_loglik", "test_rmse", NULL};
const char *const model_mlp_classification_metrics[] = {"test_loglik", "test_accuracy", NULL};

static void mlp_metrics(const void *data, const double *w, double *out, double *work) {
  enum { B = MLP_BLOCK };
  const mlp_data *M = data;
  const double log_s2 = M->family == FAMILY_GAUSSIAN ? w[noise_index(M)] : 0.0;
  const int K = M->width[M->layers], stride = M->p + 1;
  double *f = block_acts(M, work, M->layers + 1) + 3 * (size_t) M->max_width * B;
  const double *rows[B];
  double ll = 0.0, second = 0.0;
  for (R_xlen_t i0 = 0; i0 < M->n; i0 += B) {
    const int nb = M->n - i0 < B ? (int) (M->n - i0) : B;
    for (int i = 0; i < nb; i++) rows[i] = M->z + (i0 + i) * stride;
    const double *o = block_forward(M, w, rows, nb, work);
    for (int i = 0; i < nb; i++) {
      const double y = rows[i][M->p];
      block_outputs(M, o, i, f);
      ll += output_loglik(M, f, y, log_s2, NULL, NULL);
      if (M->family == FAMILY_GAUSSIAN) {
        second += (y - f[0]) * (y - f[0]);
      } else if (M->family == FAMILY_BINOMIAL) {
        second += (f[0] > 0) == (y > 0.5);
      } else {
        int best = 0;
        for (int k = 1; k < K; k++) if (f[k] > f[best]) best = k;
        second += best == (int) y;
      }
    }
  }
  const double n = (double) M->n;
  /* a standardised response's density is y_scale times the original's */
  out[0] = ll / n - log(M->y_scale);
  out[1] = M->family == FAMILY_GAUSSIAN ? sqrt(second / n) * M->y_scale : second / n;
}

sgld_model model_mlp_build(SEXP spec) {
  mlp_data *M = (mlp_data *) R_alloc(1, sizeof(mlp_data));
  M->p = list_int(spec, "p");
  M->n = (R_xlen_t) list_real(spec, "n");
  SEXP width = list_elt(spec, "widths");
  if (TYPEOF(width) != INTSXP || XLENGTH(width) < 2)
    error("internal: 'widths' must be an integer vector of length >= 2");
  M->layers = (int) XLENGTH(width) - 1;
  M->width = INTEGER(width);
  if (M->width[0] != M->p || M->p < 1 || M->n < 1)
    error("internal: the MLP needs p >= 1 inputs (widths[1] = p) and n >= 1");
  M->offset = (int *) R_alloc(M->layers + 2, sizeof(int));
  M->max_width = 0;
  M->units = 0;
  double count = 0.0;
  for (int l = 1; l <= M->layers; l++) {
    if (M->width[l] < 1) error("internal: layer widths must be positive");
    M->offset[l] = (int) count;
    count += (double) M->width[l] * (M->width[l - 1] + 1);
    M->units += M->width[l];
    if (M->width[l] > M->max_width) M->max_width = M->width[l];
    if (M->width[l - 1] > M->max_width) M->max_width = M->width[l - 1];
  }
  if (count > INT_MAX / 2) error("internal: too many weights for one network");
  M->offset[M->layers + 1] = (int) count;
  M->family = list_int(spec, "family_code");
  M->act = list_int(spec, "activation_code");
  M->prior_type = list_int(spec, "prior_code");
  if (M->family < FAMILY_GAUSSIAN || M->family > FAMILY_CATEGORICAL ||
      M->act < ACT_RELU || M->act > ACT_TANH ||
      M->prior_type < MLP_PRIOR_NORMAL || M->prior_type > MLP_PRIOR_GAMMA_INTEGRATED)
    error("internal: unknown MLP family, activation or prior code");
  if ((M->family == FAMILY_CATEGORICAL) != (M->width[M->layers] > 1))
    error("internal: a categorical MLP has K >= 2 outputs, the others one");
  M->prior_sd = list_doubles(spec, "prior_sd", M->layers);
  M->prior_shape = list_real(spec, "prior_shape");
  M->prior_rate = list_real(spec, "prior_rate");
  M->noise_shape = list_real(spec, "noise_shape");
  M->noise_rate = list_real(spec, "noise_rate");
  M->y_scale = list_real(spec, "y_scale");
  M->z = list_doubles(spec, "z", (R_xlen_t) (M->p + 1) * M->n);
  const int d = (int) count + (M->prior_type == MLP_PRIOR_GAMMA ? M->layers : 0) +
    (M->family == FAMILY_GAUSSIAN);
  if (d != list_int(spec, "d")) error("internal: the MLP's parameter count disagrees with R's");
  if (M->family == FAMILY_CATEGORICAL) {
    const int K = M->width[M->layers];
    for (R_xlen_t i = 0; i < M->n; i++) {
      const double y = M->z[i * (M->p + 1) + M->p];
      if (!(y >= 0 && y < K && y == floor(y))) error("internal: class codes must be 0..K-1");
    }
  }

  return (sgld_model) {
    .d = d,
    .n = M->n,
    .data = M,
    .grad_loglik = mlp_grad_loglik,
    .loglik = mlp_loglik,
    .grad_logprior = mlp_grad_logprior,
    .logprior = mlp_logprior,
    .metrics = mlp_metrics,
    .loglik_rows = mlp_loglik_rows,
    /* the blocked passes' buffer (mlp_work_size()), or for local
       reparameterisation (model_mlp_local.c) the activations of every
       layer, two vectors of back-propagated errors and one more double per
       unit, whichever is larger */
    .work_size = mlp_work_size(M) > 2 * (size_t) M->units + 2 * (size_t) M->max_width
                 ? mlp_work_size(M) : 2 * (size_t) M->units + 2 * (size_t) M->max_width,
    .grad_loglik_local = mlp_grad_loglik_local
  };
}
