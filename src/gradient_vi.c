/*
 * Bayes by Backprop (Blundell et al. 2015) as a gradient estimator: the
 * gradient of the evidence lower bound of a Gaussian q, mean-field or full
 * rank, which any optimiser of the package (sgd, momentum, adagrad,
 * rmsprop, adam) then follows, as BlackJAX keeps its variational methods
 * apart from its SG-MCMC kernels.
 *
 * What the rule moves is theta = (mu, scale parameters). mu is the chain's
 * w, so the driver keeps, checks and reports the mean of q as a chain's
 * trajectory; the scale parameters are the estimator's extra parameters.
 *   Mean-field: q = N(mu, diag(sd^2)), sd_j = exp(lambda_j); extra = lambda.
 *   Full rank:  q = N(mu, L L^T), L = C M with C a fixed lower-triangular
 *               factor (the Laplace covariance's, or I) and M lower
 *               triangular with diagonal exp(lambda_j); extra = M by columns,
 *               each lambda_j then M_{j+1,j} ... M_{d-1,j}.
 * ELBO = E_q[log p(D, w)] + log det L + const. With w = mu + L eps,
 * eps ~ N(0, I), and g = g_hat(w) the minibatch gradient of the log joint
 * (gradient.c, with data control variates if the run has them),
 *   d/d mu       ~ g,
 *   d/d lambda_j ~ sd_j eps_j g_j + 1                  (mean-field),
 *   d/d M_ij     ~ (C^T g)_i eps_j,  d/d lambda_j ~ M_jj (C^T g)_j eps_j + 1,
 * each unbiased, averaged over K draws of eps on the iteration's minibatch
 * (`samples`).
 *
 * Two options come from the Laplace approximation N(w_hat, S), S = C C^T,
 * A = S^-1 (R/vi.R):
 *   - the metric: the gradient in mu is returned as S times the gradient
 *     (for a Gaussian posterior the ELBO's curvature in mu is its precision,
 *     so this is a Newton step and every direction converges at the same
 *     rate, however correlated the predictors), the gradient in lambda
 *     divided by its curvature, bounded below (scale_metric()), and full
 *     rank's M lives in the whitened coordinates of C. A step of the
 *     optimiser is then a fraction of the distance to the optimum in every
 *     direction.
 *   - the quadratic control variate (Miller et al. 2017; Geffner and Domke
 *     2020): the gradient of the Laplace approximation's log density,
 *     -A (w - w_hat), is linear in eps, its expectation under q is known, so
 *     g + A L eps has the same mean as g and, where the posterior is close to
 *     Gaussian, almost none of the variance that eps brings. Subtracting the
 *     same term's known contribution from the scale's gradient
 *     (E[(A L eps) eps^T] = A L) makes the estimate exact for a Gaussian
 *     posterior on full data. Full rank with C: C^T A L eps = M eps.
 *
 * For models linear in their weights, mean-field only, two more ways to
 * form the likelihood's part: local reparameterisation (Kingma, Salimans
 * and Welling 2015), where the model's grad_loglik_local draws each item's
 * linear combination from its exact distribution under q and the prior's
 * gradient is taken at the point mu + sd eps; or the expectation itself,
 * the model's expected_loglik and expected_logprior (sgld.h), which leaves
 * no Monte Carlo noise at all: on the full data the gradient is exact. It
 * is what makes the mean-field optimum reachable to a small fraction of q's
 * own sds where those are tiny against the posterior's: on Adult's one-hot
 * design the mean-field sds go down to 1/500 of the posterior sds (the
 * intercept's), and the draws of eps left a noise of up to 48 of q's sds
 * per iteration (workclass=Private) even on the full data with the control
 * variate, some 10^7 iterations to average down to 0.02; with the
 * expectations the run converges in 100.
 *
 * The state: the extra parameters (while the chain is not running), the sum
 * of theta after every step and the count of steps (R differences these
 * between parts of a run: averages over any stretch of iterations, for
 * iterate averaging and for the batch means that say when the run has
 * converged), and the sums behind the minibatch ELBO trace.
 */
#include <string.h>
#include <R.h>
#include <Rmath.h>
#include "sgld.h"

/* how the likelihood's part of the mean-field gradient is formed */
enum { VI_DRAW_W = 0,      /* at w = mu + sd eps: Bayes by Backprop */
       VI_DRAW_LOCAL = 1,  /* each item's linear combination drawn: local reparameterisation */
       VI_EXPECTED = 2 };  /* each item's expectation itself (sgld.h: expected_loglik) */

typedef struct vi_opts {
  int fullrank, samples, local, elbo_batch;
  size_t n_scale, p;
  const double *scale_init;  /* the extra parameters at the start (n_scale) */
  const double *C;           /* d x d lower factor (column-major), or NULL: the metric */
  const double *A;           /* d x d precision for the quadratic control variate, or NULL */
  const double *curv;        /* mean-field with the metric: the precision's diagonal */
  double entropy_const;      /* the entropy but sum lambda: d/2 log(2 pi e) (+ log det C) */
} vi_opts;

static size_t scale_count(int d, int fullrank) {
  return fullrank ? (size_t) d * (size_t) (d + 1) / 2 : (size_t) d;
}

static const double *optional_matrix(SEXP opts, const char *name, int d) {
  return list_optional_doubles(opts, name, (R_xlen_t) d * d);
}

static const void *vi_build(SEXP opts, const sgld_model *model, int fullrank) {
  const int d = model->d;
  vi_opts *o = (vi_opts *) R_alloc(1, sizeof *o);
  o->fullrank = fullrank;
  o->samples = list_int(opts, "samples");
  if (o->samples < 1 || o->samples > VI_MAX_SAMPLES)
    error("internal: vi needs 1 <= samples <= %d", VI_MAX_SAMPLES);
  o->n_scale = scale_count(d, fullrank);
  o->p = (size_t) d + o->n_scale;
  o->scale_init = list_doubles(opts, "scale_init", (R_xlen_t) o->n_scale);
  o->C = optional_matrix(opts, "factor", d);
  o->A = optional_matrix(opts, "precision", d);
  o->curv = fullrank || !o->C ? NULL : list_doubles(opts, "curvature", d);
  if (fullrank && o->A && !o->C)
    error("internal: full rank's quadratic control variate needs the factor");
  /* full rank's L = C M: log det L = log det C + sum lambda */
  double log_det = 0.0;
  if (o->C)
    for (int j = 0; j < d; j++) {
      if (!(o->C[j + (size_t) j * d] > 0))
        error("internal: vi factor must have a positive diagonal");
      if (fullrank) log_det += log(o->C[j + (size_t) j * d]);
    }
  o->entropy_const = log_det + 0.5 * d * (1.0 + M_LN_2PI);
  o->local = list_int(opts, "local");
  if (o->local < VI_DRAW_W || o->local > VI_EXPECTED) error("internal: vi 'local' out of range");
  if (o->local && (fullrank || o->A))
    error("internal: local reparameterisation is mean-field only, without the quadratic "
          "control variate");
  if (o->local == VI_DRAW_LOCAL && !model->grad_loglik_local)
    error("internal: the model has no local-reparameterisation gradient");
  if (o->local == VI_EXPECTED && !(model->expected_loglik && model->expected_logprior))
    error("internal: the model has no expected log likelihood");
  o->elbo_batch = list_int(opts, "elbo_batch");
  return o;
}

static const void *vi_meanfield_build(SEXP opts, const sgld_model *model) {
  return vi_build(opts, model, 0);
}
static const void *vi_fullrank_build(SEXP opts, const sgld_model *model) {
  return vi_build(opts, model, 1);
}

static size_t vi_extra(int d, const void *opts) {
  (void) d;
  return ((const vi_opts *) opts)->n_scale;
}

/* extra parameters, the sum of theta and the count of steps, the trace's
   sum and count */
static size_t vi_state(int d, const void *opts) {
  const vi_opts *o = opts;
  (void) d;
  return o->n_scale + o->p + 1 + 2;
}

/* eps, the point, its gradient, a d-vector of work, and the accumulated
   gradient (p) */
static size_t vi_scratch(int d, const void *opts) {
  return 4 * (size_t) d + ((const vi_opts *) opts)->p;
}

static void vi_init(double *state, int d, const void *opts) {
  (void) d;
  const vi_opts *o = opts;
  memcpy(state, o->scale_init, o->n_scale * sizeof(double));
}

typedef struct vi_work {
  double *eps, *at, *gk, *v, *acc;
} vi_work;

static vi_work vi_buffers(double *state, int d, const vi_opts *o) {
  double *s = state + vi_state(d, o);
  vi_work w = {s, s + d, s + 2 * (size_t) d, s + 3 * (size_t) d, s + 4 * (size_t) d};
  return w;
}

/* The metric's factor for the gradient in a log scale lambda_j. The ELBO of
   a Gaussian posterior is, in lambda_j, -h e^(2 lambda_j) / 2 + lambda_j +
   const with h = A_jj sd_j^2 at the current lambda_j (full rank in
   whitened coordinates: M_jj^2), whose curvature is 2 h: 2 at the optimum,
   growing without bound above it. Dividing by 2 max(1, h) makes the
   curvature 1 at and above the optimum and h < 1 below it, so a step of
   size below 2 is stable whichever side the scale is on (a constant factor
   of 1/2 let a noisy step overshoot above the optimum, where the curvature
   grew, and diverge: MASS::Pima.tr, step 0.5). */
static double scale_metric(double h) {
  return 0.5 / (h > 1.0 ? h : 1.0);
}

/* With the metric, a bound on each whitened coordinate of the gradient in
   mu (100 posterior sds) and on each metric gradient in the scale (10), so
   that one step of size eta moves at most 100 eta posterior sds and changes
   a log sd by at most 10 eta. Ordinary noise stays well inside them
   (MASS::Pima.tr, two covariates, batch 10 of 200: the largest of 1,000
   estimates 20 and 9; at batch 50, 7.7 and 4.5; tighter bounds of 10 and 5
   clipped 9% of the mean-field estimates at batch 10, and bias them); they
   catch single draws with extreme gradients far from the Laplace
   approximation: on separated data, where the log likelihood's gradient
   grows linearly into the misclassified region, one draw moved a log sd by
   -24 and q's sd collapsed to 1e-10 before it recovered. Each iteration in
   which one binds is counted with the run's clipping (fit$clipped). */
#define VI_CLIP_MEAN 100.0
#define VI_CLIP_SCALE 10.0
static int clip_range(double *x, size_t n, double bound) {
  int fired = 0;
  for (size_t j = 0; j < n; j++) {
    if (x[j] > bound) { x[j] = bound; fired = 1; }
    else if (x[j] < -bound) { x[j] = -bound; fired = 1; }
  }
  return fired;
}

/* y <- A x for a symmetric d x d A (column-major) */
static void sym_matvec(const double *A, const double *x, double *y, int d) {
  for (int i = 0; i < d; i++) y[i] = 0.0;
  for (int j = 0; j < d; j++) {
    const double xj = x[j];
    const double *a = A + (size_t) j * d;
    for (int i = 0; i < d; i++) y[i] += a[i] * xj;
  }
}

/* y <- C x and y <- C^T x for a lower-triangular C (column-major) */
static void lower_matvec(const double *C, const double *x, double *y, int d) {
  for (int i = 0; i < d; i++) y[i] = 0.0;
  for (int j = 0; j < d; j++) {
    const double xj = x[j];
    const double *c = C + (size_t) j * d;
    for (int i = j; i < d; i++) y[i] += c[i] * xj;
  }
}
static void lower_t_matvec(const double *C, const double *x, double *y, int d) {
  for (int j = 0; j < d; j++) {
    const double *c = C + (size_t) j * d;
    double s = 0.0;
    for (int i = j; i < d; i++) s += c[i] * x[i];
    y[j] = s;
  }
}

/* The minibatch ELBO of this iteration's q at one point (or its expectation),
   for the trace: log prior + (n/m) minibatch log likelihood + entropy */
static void note_elbo(double *state, const vi_opts *o, double log_joint, double log_det_m,
                      double weight) {
  double *tr = state + o->n_scale + o->p + 1;
  tr[0] += weight * (log_joint + log_det_m + o->entropy_const);
  tr[1] += weight;
}

static double batch_log_joint(const sgld_batch *b, const double *at) {
  const sgld_model *model = b->e->model;
  return (double) model->n / b->e->m * model->loglik(model->data, at, b->idx, b->e->m, b->work) +
    model->logprior(model->data, at);
}

/* the mean-field family */
static void meanfield_estimate(const sgld_batch *b, const double *theta, double *g,
                               double *state, int d, const vi_opts *o) {
  const sgld_model *model = b->e->model;
  const double *mu = theta, *lambda = theta + d;
  vi_work w = vi_buffers(state, d, o);
  double *acc_mu = w.acc, *acc_l = w.acc + d;
  double *sd = w.v;
  double sum_lambda = 0.0;
  for (int j = 0; j < d; j++) {
    sd[j] = exp(lambda[j]);
    sum_lambda += lambda[j];
  }
  for (size_t j = 0; j < o->p; j++) w.acc[j] = 0.0;
  const double wk = 1.0 / o->samples, scale = (double) model->n / b->e->m;
  if (o->local == VI_EXPECTED) {
    /* no draws: the expectations themselves, the likelihood's scaled by n/m */
    double *g_sd = w.gk;
    for (int j = 0; j < d; j++) g_sd[j] = 0.0;
    const double ll = model->expected_loglik(model->data, mu, sd, b->idx, b->e->m, acc_mu, g_sd,
                                             b->work);
    for (int j = 0; j < d; j++) {
      acc_mu[j] *= scale;
      g_sd[j] *= scale;
    }
    const double lp = model->expected_logprior(model->data, mu, sd, acc_mu, g_sd);
    for (int j = 0; j < d; j++) acc_l[j] = sd[j] * g_sd[j];
    if (o->elbo_batch) note_elbo(state, o, scale * ll + lp, sum_lambda, 1.0);
  }
  for (int k = 0; o->local != VI_EXPECTED && k < o->samples; k++) {
    for (int j = 0; j < d; j++) {
      w.eps[j] = sd[j] * rng_norm(b->rng);     /* eps scaled: L eps */
      w.at[j] = mu[j] + w.eps[j];
    }
    if (o->local) {
      /* the prior's gradient at the point; the likelihood's around mu */
      for (int j = 0; j < d; j++) w.gk[j] = 0.0;
      model->grad_logprior(model->data, w.at, w.gk);
      for (int j = 0; j < d; j++) {
        acc_mu[j] += wk * w.gk[j];
        acc_l[j] += wk * w.gk[j] * w.eps[j];
      }
      /* g_mu into gk, g_sd into the slot of the point (no longer needed) */
      double *g_sd = w.at;
      double prior = model->logprior(model->data, w.at);
      for (int j = 0; j < d; j++) w.gk[j] = g_sd[j] = 0.0;
      const double ll = model->grad_loglik_local(model->data, mu, sd, b->idx, b->e->m, b->rng,
                                                 w.gk, g_sd, b->work);
      for (int j = 0; j < d; j++) {
        acc_mu[j] += wk * scale * w.gk[j];
        acc_l[j] += wk * scale * g_sd[j] * sd[j];
      }
      if (o->elbo_batch) note_elbo(state, o, scale * ll + prior, sum_lambda, wk);
      continue;
    }
    batch_gradient(b, w.at, w.gk, NULL, NULL);
    if (o->elbo_batch) note_elbo(state, o, batch_log_joint(b, w.at), sum_lambda, wk);
    if (o->A) {
      /* the quadratic control variate: + A L eps */
      double *h = g + d;      /* free until the end */
      sym_matvec(o->A, w.eps, h, d);
      for (int j = 0; j < d; j++) w.gk[j] += h[j];
    }
    for (int j = 0; j < d; j++) {
      acc_mu[j] += wk * w.gk[j];
      acc_l[j] += wk * w.gk[j] * w.eps[j];
    }
  }
  for (int j = 0; j < d; j++) {
    double gl = acc_l[j] + 1.0;
    if (o->A) gl -= o->A[j + (size_t) j * d] * sd[j] * sd[j];
    g[d + j] = o->C ? gl * scale_metric(o->curv[j] * sd[j] * sd[j]) : gl;
  }
  if (o->C) {
    lower_t_matvec(o->C, acc_mu, w.v, d);
    const int fired = clip_range(w.v, d, VI_CLIP_MEAN) | clip_range(g + d, d, VI_CLIP_SCALE);
    *b->clip_count += fired;
    lower_matvec(o->C, w.v, g, d);
  } else {
    memcpy(g, acc_mu, d * sizeof(double));
  }
}

/* the full-rank family: M by columns in theta + d */
static void fullrank_estimate(const sgld_batch *b, const double *theta, double *g,
                              double *state, int d, const vi_opts *o) {
  const double *mu = theta, *M = theta + d;
  vi_work w = vi_buffers(state, d, o);
  double *acc_w = w.acc, *acc_m = w.acc + d;
  double *z = w.v;
  double sum_lambda = 0.0;
  {
    const double *col = M;
    for (int j = 0; j < d; j++) {
      sum_lambda += col[0];
      col += d - j;
    }
  }
  for (size_t j = 0; j < o->p; j++) w.acc[j] = 0.0;
  const double wk = 1.0 / o->samples;
  for (int k = 0; k < o->samples; k++) {
    for (int j = 0; j < d; j++) w.eps[j] = rng_norm(b->rng);
    /* z = M eps */
    for (int i = 0; i < d; i++) z[i] = 0.0;
    const double *col = M;
    for (int j = 0; j < d; j++) {
      z[j] += exp(col[0]) * w.eps[j];
      for (int i = j + 1; i < d; i++) z[i] += col[i - j] * w.eps[j];
      col += d - j;
    }
    if (o->C) {
      lower_matvec(o->C, z, w.at, d);
      for (int j = 0; j < d; j++) w.at[j] += mu[j];
    } else {
      for (int j = 0; j < d; j++) w.at[j] = mu[j] + z[j];
    }
    batch_gradient(b, w.at, w.gk, NULL, NULL);
    if (o->elbo_batch) note_elbo(state, o, batch_log_joint(b, w.at), sum_lambda, wk);
    /* the gradient in whitened coordinates, C^T g, into the point's slot */
    double *gw = w.at;
    if (o->C) lower_t_matvec(o->C, w.gk, gw, d);
    else memcpy(gw, w.gk, d * sizeof(double));
    if (o->A)
      for (int j = 0; j < d; j++) gw[j] += z[j];   /* C^T A L eps = M eps */
    for (int j = 0; j < d; j++) acc_w[j] += wk * gw[j];
    double *a = acc_m;
    for (int j = 0; j < d; j++) {
      const double e = wk * w.eps[j];
      for (int i = j; i < d; i++) a[i - j] += gw[i] * e;
      a += d - j;
    }
  }
  /* E[(M eps) eps^T] = M: the control variate's known contribution */
  const double *col = M;
  double *a = acc_m, *gm = g + d;
  for (int j = 0; j < d; j++) {
    const double mjj = exp(col[0]);
    for (int i = j + 1; i < d; i++) gm[i - j] = a[i - j] - (o->A ? col[i - j] : 0.0);
    const double gl = mjj * (a[0] - (o->A ? mjj : 0.0)) + 1.0;
    gm[0] = o->C ? gl * scale_metric(mjj * mjj) : gl;
    col += d - j;
    a += d - j;
    gm += d - j;
  }
  if (o->C) {
    const int fired = clip_range(acc_w, d, VI_CLIP_MEAN) |
      clip_range(g + d, o->n_scale, VI_CLIP_SCALE);
    *b->clip_count += fired;
    lower_matvec(o->C, acc_w, g, d);
  } else {
    memcpy(g, acc_w, d * sizeof(double));
  }
}

static void vi_estimate(const sgld_batch *b, const double *theta, double *g, double *g_bar,
                        const sgld_noise *noise, double *state, int d, const void *opts) {
  (void) g_bar; (void) noise;    /* the driver gives them only without extra parameters */
  const vi_opts *o = opts;
  if (o->fullrank) fullrank_estimate(b, theta, g, state, d, o);
  else meanfield_estimate(b, theta, g, state, d, o);
}

/* every exp(lambda_j) finite and positive */
#define VI_MAX_LOG_SCALE 700.0
static int vi_in_domain(const double *theta, int d, const void *opts) {
  const vi_opts *o = opts;
  const double *x = theta + d;
  for (int j = 0; j < d; j++) {
    if (fabs(x[0]) > VI_MAX_LOG_SCALE) return 0;
    x += o->fullrank ? d - j : 1;
  }
  return 1;
}

/* the sums behind averages of theta over any stretch of the run */
static void vi_after_step(const double *theta, double *state, int d, const void *opts) {
  (void) d;
  const vi_opts *o = opts;
  double *sum = state + o->n_scale;
  for (size_t j = 0; j < o->p; j++) sum[j] += theta[j];
  sum[o->p] += 1.0;
}

/* at each kept iterate: the mean minibatch ELBO since the last one (NA when
   none was noted) */
static double vi_trace(double *state, int d, const void *opts) {
  (void) d;
  const vi_opts *o = opts;
  double *tr = state + o->n_scale + o->p + 1;
  const double v = tr[1] > 0 ? tr[0] / tr[1] : NAN;
  tr[0] = tr[1] = 0.0;
  return v;
}

const sgld_gradient gradient_vi_meanfield = {
  .name = "vi_meanfield", .build = vi_meanfield_build, .extra_length = vi_extra,
  .state_length = vi_state, .scratch_length = vi_scratch, .init = vi_init,
  .estimate = vi_estimate, .in_domain = vi_in_domain, .after_step = vi_after_step,
  .trace = vi_trace
};

const sgld_gradient gradient_vi_fullrank = {
  .name = "vi_fullrank", .build = vi_fullrank_build, .extra_length = vi_extra,
  .state_length = vi_state, .scratch_length = vi_scratch, .init = vi_init,
  .estimate = vi_estimate, .in_domain = vi_in_domain, .after_step = vi_after_step,
  .trace = vi_trace
};
