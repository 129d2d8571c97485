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
 * the class 0..K-1. Gradients are by backpropagation, one observation at a
 * time through the chain's work buffer.
 */
#include <limits.h>
#include <R.h>
#include <Rmath.h>
#include "sgld.h"
#include "model_mlp.h"

/* log sigma(u) = -log(1 + e^-u), without overflow */
static inline double mlp_log_sigmoid(double u) {
  return u > 0 ? -log1p(exp(-u)) : u - log1p(exp(u));
}

/* Forward pass of one observation: the outputs of layer l land in
   acts + start(l), start(1) = 0; returns a pointer to the output layer's. */
static const double *forward(const mlp_data *M, const double *w, const double *x,
                             double *acts) {
  const double *in = x;
  double *out = acts;
  for (int l = 1; l <= M->layers; l++) {
    const int n_in = M->width[l - 1], n_out = M->width[l];
    const double *W = w + M->offset[l], *b = W + (size_t) n_out * n_in;
    const int hidden = l < M->layers;
    for (int j = 0; j < n_out; j++) {
      const double *Wj = W + (size_t) j * n_in;
      double s = b[j];
      for (int k = 0; k < n_in; k++) s += Wj[k] * in[k];
      if (hidden) s = M->act == ACT_RELU ? (s > 0 ? s : 0.0) : tanh(s);
      out[j] = s;
    }
    in = out;
    out += n_out;
  }
  return in;
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

/* where layer l's activations start in the work buffer */
static inline double *layer_acts(const mlp_data *M, double *acts, int l) {
  double *a = acts;
  for (int q = 1; q < l; q++) a += M->width[q];
  return a;
}

static void mlp_grad_loglik(const void *data, const double *w, const R_xlen_t *idx, int m,
                            double *g, double *work) {
  const mlp_data *M = data;
  const int stride = M->p + 1, L = M->layers;
  double *acts = work, *delta = work + M->units, *delta_prev = delta + M->max_width;
  const double log_s2 = M->family == FAMILY_GAUSSIAN ? w[noise_index(M)] : 0.0;
  double dnoise = 0.0;
  for (int i = 0; i < m; i++) {
    const double *x = M->z + idx[i] * stride;
    const double *f = forward(M, w, x, acts);
    output_loglik(M, f, x[M->p], log_s2, delta, &dnoise);
    for (int l = L; l >= 1; l--) {
      const int n_in = M->width[l - 1], n_out = M->width[l];
      const double *W = w + M->offset[l];
      double *gW = g + M->offset[l], *gb = gW + (size_t) n_out * n_in;
      const double *in = l > 1 ? layer_acts(M, acts, l - 1) : x;
      if (l > 1) for (int k = 0; k < n_in; k++) delta_prev[k] = 0.0;
      for (int j = 0; j < n_out; j++) {
        const double dj = delta[j];
        if (dj == 0.0) continue;   /* inactive ReLU units: nothing to add */
        const double *Wj = W + (size_t) j * n_in;
        double *gWj = gW + (size_t) j * n_in;
        gb[j] += dj;
        for (int k = 0; k < n_in; k++) gWj[k] += dj * in[k];
        if (l > 1) for (int k = 0; k < n_in; k++) delta_prev[k] += Wj[k] * dj;
      }
      if (l > 1) {
        /* through the activation of layer l - 1, whose outputs are `in` */
        if (M->act == ACT_RELU) {
          for (int k = 0; k < n_in; k++) delta[k] = in[k] > 0 ? delta_prev[k] : 0.0;
        } else {
          for (int k = 0; k < n_in; k++) delta[k] = delta_prev[k] * (1.0 - in[k] * in[k]);
        }
      }
    }
  }
  if (M->family == FAMILY_GAUSSIAN) g[noise_index(M)] += dnoise;
}

static double mlp_loglik(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                         double *work) {
  const mlp_data *M = data;
  if (!idx) m = M->n;
  const double log_s2 = M->family == FAMILY_GAUSSIAN ? w[noise_index(M)] : 0.0;
  double ll = 0.0;
  for (R_xlen_t k = 0; k < m; k++) {
    const double *x = M->z + (idx ? idx[k] : k) * (M->p + 1);
    ll += output_loglik(M, forward(M, w, x, work), x[M->p], log_s2, NULL, NULL);
  }
  return ll;
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
  const mlp_data *M = data;
  const double log_s2 = M->family == FAMILY_GAUSSIAN ? w[noise_index(M)] : 0.0;
  const int K = M->width[M->layers];
  double ll = 0.0, second = 0.0;
  for (R_xlen_t i = 0; i < M->n; i++) {
    const double *x = M->z + i * (M->p + 1), y = x[M->p];
    const double *f = forward(M, w, x, work);
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
      M->prior_type < MLP_PRIOR_NORMAL || M->prior_type > MLP_PRIOR_GAMMA)
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
    /* the activations of every layer, then two vectors of back-propagated
       errors; then, for local reparameterisation (model_mlp_local.c), one
       more double per unit */
    .work_size = 2 * (size_t) M->units + 2 * (size_t) M->max_width,
    .grad_loglik_local = mlp_grad_loglik_local
  };
}
