/*
 * The multilayer perceptron's data, shared by model_mlp.c (the model) and
 * model_mlp_local.c (its local-reparameterisation gradient for Bayes by
 * Backprop). Nothing here touches the R API.
 */
#ifndef SGLD_MODEL_MLP_H
#define SGLD_MODEL_MLP_H

#include "sgld.h"

enum { FAMILY_GAUSSIAN = 0, FAMILY_BINOMIAL = 1, FAMILY_CATEGORICAL = 2 };
enum { ACT_RELU = 0, ACT_TANH = 1 };
enum { MLP_PRIOR_NORMAL = 0, MLP_PRIOR_GAMMA = 1, MLP_PRIOR_GAMMA_INTEGRATED = 2 };

typedef struct mlp_data {
  int p;                 /* inputs */
  R_xlen_t n;
  int layers;            /* weight layers: hidden layers + 1 */
  const int *width;      /* width[0] = p, ..., width[layers] = outputs */
  int *offset;           /* where layer l's weights start (l = 1..layers); offset[layers + 1]
                            = number of weights and biases */
  int family, act, prior_type;
  const double *prior_sd;          /* per layer (l = 1..layers at index l - 1) */
  double prior_shape, prior_rate;  /* hierarchical prior of each layer's precision */
  double noise_shape, noise_rate;  /* Gaussian family: prior of 1 / sigma^2 */
  double y_scale;        /* sd of the response removed by standardising (1 if none) */
  int max_width, units;  /* widest layer; units of layers 1..layers together */
  const double *z;
} mlp_data;

/* index of layer l's log precision, and of log sigma^2 */
static inline int precision_index(const mlp_data *M, int l) {
  return M->offset[M->layers + 1] + l - 1;
}
static inline int noise_index(const mlp_data *M) {
  return M->offset[M->layers + 1] + (M->prior_type == MLP_PRIOR_GAMMA ? M->layers : 0);
}

/* log likelihood of one observation given its outputs f; with df, also
   d loglik / d f (Gaussian: d / d log sigma^2 added into *dnoise) */
double mlp_output_loglik(const mlp_data *M, const double *f, double y, double log_s2,
                         double *df, double *dnoise);

/* sgld.h: grad_loglik_local; work: 2 units + 2 max_width doubles */
double mlp_grad_loglik_local(const void *data, const double *mu, const double *sd,
                             const R_xlen_t *idx, int m, sgld_rng *rng, double *g_mu,
                             double *g_sd, double *work);

#endif
