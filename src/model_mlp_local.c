/*
 * Local reparameterisation (Kingma, Salimans and Welling 2015) for the
 * multilayer perceptron (model_mlp.c), the gradient Bayes by Backprop uses
 * on networks (sgld.h: grad_loglik_local).
 *
 * Under q = N(mu, diag(sd^2)) and given a layer's input h (per observation),
 * unit j's pre-activation s_j = b_j + sum_k W_jk h_k is exactly
 *   N(m_j, v_j),  m_j = mu_bj + sum_k mu_Wjk h_k,  v_j = sd_bj^2 + sum_k sd_Wjk^2 h_k^2,
 * so each observation draws s_j = m_j + sqrt(v_j) e_j with its own e_j,
 * layer by layer (the next layer's input is the activation of these draws).
 * Backpropagating delta_j = d log f / d s_j, with r_j = e_j / sqrt(v_j):
 *   d / d mu_Wjk = delta_j h_k,          d / d mu_bj = delta_j,
 *   d / d sd_Wjk = delta_j r_j sd_Wjk h_k^2,  d / d sd_bj = delta_j r_j sd_bj,
 *   d / d h_k   += delta_j (mu_Wjk + r_j sd_Wjk^2 h_k).
 * Each is the exact derivative of the sampled log likelihood, so the sum is
 * unbiased for the gradient of E_q[log f] (the draws are a smooth
 * reparameterisation of q). log sigma^2 (Gaussian family) is no weight: drawn
 * once per call, mu + sd e, its derivative going to mu and, times e, to sd.
 * The layers' log precisions enter only the prior: zero here.
 *
 * Work: the sampled activations of every layer (units), two back-propagated
 * error vectors (2 max_width), then r of every unit (units).
 */
#include "model_mlp.h"

double mlp_grad_loglik_local(const void *data, const double *mu, const double *sd,
                             const R_xlen_t *idx, int m, sgld_rng *rng, double *g_mu,
                             double *g_sd, double *work) {
  const mlp_data *M = data;
  const int stride = M->p + 1, L = M->layers;
  double *acts = work, *delta = acts + M->units, *delta_prev = delta + M->max_width;
  double *ratio = delta_prev + M->max_width;
  const int gaussian = M->family == FAMILY_GAUSSIAN;
  const int q_noise = gaussian ? noise_index(M) : 0;
  const double e_noise = gaussian ? rng_norm(rng) : 0.0;
  const double log_s2 = gaussian ? mu[q_noise] + sd[q_noise] * e_noise : 0.0;
  double dnoise = 0.0, ll = 0.0;
  for (int i = 0; i < m; i++) {
    const double *x = M->z + idx[i] * stride;
    /* forward, sampling each unit's pre-activation */
    const double *in = x;
    double *out = acts, *r = ratio;
    for (int l = 1; l <= L; l++) {
      const int n_in = M->width[l - 1], n_out = M->width[l];
      const double *W = mu + M->offset[l], *b = W + (size_t) n_out * n_in;
      const double *S = sd + M->offset[l], *Sb = S + (size_t) n_out * n_in;
      const int hidden = l < L;
      for (int j = 0; j < n_out; j++) {
        const double *Wj = W + (size_t) j * n_in, *Sj = S + (size_t) j * n_in;
        double mean = b[j], var = Sb[j] * Sb[j];
        for (int k = 0; k < n_in; k++) {
          const double t = Sj[k] * in[k];
          mean += Wj[k] * in[k];
          var += t * t;
        }
        const double s = sqrt(var), e = rng_norm(rng);
        double a = mean + s * e;
        r[j] = s > 0 ? e / s : 0.0;
        if (hidden) a = M->act == ACT_RELU ? (a > 0 ? a : 0.0) : tanh(a);
        out[j] = a;
      }
      in = out;
      out += n_out;
      r += n_out;
    }
    ll += mlp_output_loglik(M, in, x[M->p], log_s2, delta, &dnoise);
    /* backward: layer l's input starts at acts + start(l - 1), its r at ratio + start(l) */
    int start = M->units - M->width[L];
    for (int l = L; l >= 1; l--) {
      const int n_in = M->width[l - 1], n_out = M->width[l];
      const int in_start = start - n_in;   /* meaningful for l > 1 */
      const double *h = l > 1 ? acts + in_start : x, *rl = ratio + start;
      const double *W = mu + M->offset[l], *S = sd + M->offset[l];
      const double *Sb = S + (size_t) n_out * n_in;
      double *gW = g_mu + M->offset[l], *gb = gW + (size_t) n_out * n_in;
      double *sW = g_sd + M->offset[l], *sb = sW + (size_t) n_out * n_in;
      if (l > 1) for (int k = 0; k < n_in; k++) delta_prev[k] = 0.0;
      for (int j = 0; j < n_out; j++) {
        const double dj = delta[j];
        if (dj == 0.0) continue;   /* inactive ReLU units */
        const double qj = dj * rl[j];
        const double *Wj = W + (size_t) j * n_in, *Sj = S + (size_t) j * n_in;
        double *gWj = gW + (size_t) j * n_in, *sWj = sW + (size_t) j * n_in;
        gb[j] += dj;
        sb[j] += qj * Sb[j];
        for (int k = 0; k < n_in; k++) {
          gWj[k] += dj * h[k];
          sWj[k] += qj * Sj[k] * h[k] * h[k];
        }
        if (l > 1)
          for (int k = 0; k < n_in; k++) delta_prev[k] += dj * Wj[k] + qj * Sj[k] * Sj[k] * h[k];
      }
      if (l > 1) {
        if (M->act == ACT_RELU) {
          for (int k = 0; k < n_in; k++) delta[k] = h[k] > 0 ? delta_prev[k] : 0.0;
        } else {
          for (int k = 0; k < n_in; k++) delta[k] = delta_prev[k] * (1.0 - h[k] * h[k]);
        }
      }
      start = in_start;
    }
  }
  if (gaussian) {
    g_mu[q_noise] += dnoise;
    g_sd[q_noise] += dnoise * e_noise;
  }
  return ll;
}
