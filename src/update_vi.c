/*
 * Variational inference by stochastic gradients: Bayes by Backprop (Blundell
 * et al. 2015) with a Gaussian q, mean-field or full-rank, as two update
 * rules of the one driver.
 *
 * q(w) = N(mu, L L^T). Mean-field: L = diag(softplus(rho)). Full-rank: L lower
 * triangular with diagonal softplus(rho_j) and free entries below it. The
 * evidence lower bound is
 *   ELBO(mu, L) = E_q[log p(D, w)] + sum_j log L_jj + const,
 * and with w = mu + L eps, eps ~ N(0, I), and g = g_hat(w) the engine's
 * minibatch gradient of the log joint (unbiased for its full-data value),
 *   d ELBO / d mu     ~ g,
 *   d ELBO / d L_ij   ~ g_i eps_j                            (i > j),
 *   d ELBO / d rho_j  ~ (g_j eps_j + 1 / L_jj) sigmoid(rho_j),
 * each unbiased, averaged over K draws of eps on one minibatch (`samples`).
 *
 * Where things live. The chain's w is mu: what the driver keeps, checks,
 * continues and reports as the chain's trajectory is the mean of q, so the
 * kept "draws" trace mu as an optimiser's iterates would, and nothing in the
 * driver needs to know that w is a mean. The rule's state holds the scale's
 * parameters (rho, and for full rank the entries below the diagonal) and
 * then the state of the optimiser that moves theta = (mu, scale parameters):
 * any rule of the package without settings that depend on w (sgd, momentum,
 * adagrad, rmsprop, adam) run on the p-vector theta. The state's length may
 * depend only on d (sgld.h), so it reserves the largest optimiser state
 * among those (Adam's 2p + 2); the others leave the rest at zero. Then the
 * running average of theta over the steps after `average_from` (which the
 * fit reports as q) and two counts. Scratch:
 * eps of the current point (d), the accumulated gradient (p) and theta (p).
 *
 * The driver asks for K points per iteration (points/point/gather, sgld.h):
 * point() draws eps_k and sets w = mu + L eps_k; gather() adds the
 * eps-weighted gradient into the accumulation; step() adds the entropy's
 * exact gradient and the softplus factor and lets the optimiser move theta.
 */
#include <string.h>
#include <R.h>
#include <Rmath.h>
#include "sgld.h"

typedef struct vi_opts {
  int samples;              /* K: points per iteration */
  int fullrank;
  size_t n_scale;           /* parameters of L: d, or d (d + 1) / 2 */
  size_t p;                 /* d + n_scale */
  const double *scale_init; /* those parameters at the start (n_scale) */
  double average_from;      /* theta is averaged over the steps after this many */
  const sgld_update *inner; /* the optimiser of theta */
  const void *inner_opts;
  int local;                /* mean-field: the model's local reparameterisation */
  int elbo_batch;           /* keep the per-iteration minibatch ELBO (trace) */
} vi_opts;

static size_t scale_count(int d, int fullrank) {
  return fullrank ? (size_t) d * (size_t) (d + 1) / 2 : (size_t) d;
}

/* the optimisers that can move theta: their state must fit in 2p + 2 doubles,
   they need no scratch, no g_bar, and their init does not read w */
static const char *const inner_names[] = {"sgld", "momentum", "adagrad", "rmsprop", "adam", NULL};

static const void *vi_build(SEXP opts, int d, int fullrank) {
  vi_opts *o = (vi_opts *) R_alloc(1, sizeof *o);
  o->samples = list_int(opts, "samples");
  /* bbb() allows up to 10^6 */
  if (o->samples < 1 || o->samples > 1000000) error("internal: vi needs 1 <= samples <= 10^6");
  o->fullrank = fullrank;
  o->n_scale = scale_count(d, fullrank);
  o->p = (size_t) d + o->n_scale;
  if (o->p > INT_MAX / 4) error("internal: too many variational parameters");
  o->scale_init = list_doubles(opts, "scale_init", (R_xlen_t) o->n_scale);
  o->average_from = list_real(opts, "average_from");
  if (!(o->average_from >= 0)) error("internal: vi needs average_from >= 0");
  SEXP name = list_elt(opts, "optimizer");
  if (TYPEOF(name) != STRSXP || XLENGTH(name) != 1) error("internal: vi optimizer must be a name");
  const char *nm = CHAR(STRING_ELT(name, 0));
  int ok = 0;
  for (int i = 0; inner_names[i]; i++) ok |= strcmp(nm, inner_names[i]) == 0;
  if (!ok) error("internal: vi cannot use the update rule '%s' as its optimizer", nm);
  o->inner = find_update(nm);
  o->inner_opts = update_build_opts(o->inner, list_elt(opts, "optimizer_opts"), (int) o->p, NULL);
  o->local = list_int(opts, "local");
  if (o->local && fullrank) error("internal: local reparameterisation needs a mean-field q");
  o->elbo_batch = list_int(opts, "elbo_batch");
  return o;
}

static const void *vi_meanfield_build(SEXP opts, int d) { return vi_build(opts, d, 0); }
static const void *vi_fullrank_build(SEXP opts, int d) { return vi_build(opts, d, 1); }

/* the state: scale parameters (n_scale), the optimiser's state (2p + 2
   reserved), the running average of theta (p), the number of steps in that
   average, the number of steps taken, then the sum of the minibatch ELBO
   estimates since the last kept iterate and their count (the trace) */
static size_t vi_state(int d, int fullrank) {
  const size_t p = (size_t) d + scale_count(d, fullrank);
  return scale_count(d, fullrank) + 2 * p + 2 + p + 2 + 2;
}
static size_t vi_meanfield_state(int d) { return vi_state(d, 0); }
static size_t vi_fullrank_state(int d) { return vi_state(d, 1); }
/* scratch: eps (d), gradient (p), theta (p), and for mean-field the sds (d) */
static size_t vi_meanfield_scratch(int d) { return (size_t) d + 2 * (size_t) (2 * d) + (size_t) d; }
static size_t vi_fullrank_scratch(int d) {
  return (size_t) d + 2 * ((size_t) d + scale_count(d, 1));
}

/* softplus(x) = log(1 + e^x) without overflow, and its derivative */
static inline double softplus(double x) {
  return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}
static inline double sigmoid(double x) {
  return 1.0 / (1.0 + exp(-x));
}

/* the scratch behind the state: eps (d), accumulated gradient (p), theta (p) */
static double *vi_scratch(double *state, int d, const vi_opts *o) {
  return state + vi_state(d, o->fullrank);
}

static void vi_init(double *state, const double *w, int d, const void *opts) {
  (void) w; (void) d;
  const vi_opts *o = opts;
  memcpy(state, o->scale_init, o->n_scale * sizeof(double));
  double *inner = state + o->n_scale;
  const size_t rest = 2 * o->p + 2 + o->p + 2 + 2;   /* optimiser, average, counts, trace */
  for (size_t j = 0; j < rest; j++) inner[j] = 0.0;
  /* the allowed optimisers' init() does not read w */
  o->inner->init(inner, NULL, (int) o->p, o->inner_opts);
}

static int vi_points(const void *opts) {
  return ((const vi_opts *) opts)->samples;
}

/* at <- mu + L eps_k, eps_k kept in scratch for gather() */
static void vi_point(int k, double *at, const double *w, double *state, sgld_rng *rng, int d,
                     const void *opts) {
  (void) k;
  const vi_opts *o = opts;
  double *eps = vi_scratch(state, d, o);
  for (int j = 0; j < d; j++) eps[j] = rng_norm(rng);
  if (!o->fullrank) {
    for (int j = 0; j < d; j++) at[j] = w[j] + softplus(state[j]) * eps[j];
    return;
  }
  memcpy(at, w, d * sizeof(double));
  const double *col = state;            /* column j: rho_j, then L_{j+1,j} ... L_{d-1,j} */
  for (int j = 0; j < d; j++) {
    at[j] += softplus(col[0]) * eps[j];
    for (int i = j + 1; i < d; i++) at[i] += col[i - j] * eps[j];
    col += d - j;
  }
}

/* accumulate (1/K) [g, g_i eps_j] into the scratch's gradient */
static void vi_gather(int k, const double *g, double *state, int d, const void *opts) {
  const vi_opts *o = opts;
  double *eps = vi_scratch(state, d, o), *acc = eps + d;
  if (k == 0)
    for (size_t j = 0; j < o->p; j++) acc[j] = 0.0;
  const double wk = 1.0 / o->samples;
  for (int j = 0; j < d; j++) acc[j] += wk * g[j];
  double *a = acc + d;
  if (!o->fullrank) {
    for (int j = 0; j < d; j++) a[j] += wk * g[j] * eps[j];
    return;
  }
  for (int j = 0; j < d; j++) {
    for (int i = j; i < d; i++) a[i - j] += wk * g[i] * eps[j];
    a += d - j;
  }
}

/* theta = (w, scale parameters) moves by the optimiser along the ELBO's
   gradient estimate; the entropy's gradient is exact */
static void vi_step(double *w, const double *g_hat, const double *g_bar, double eta,
                    double tau, double *state, sgld_rng *rng, int d, const void *opts) {
  (void) g_hat; (void) g_bar; (void) tau;
  const vi_opts *o = opts;
  double *eps = vi_scratch(state, d, o), *acc = eps + d, *theta = acc + o->p;
  double *scale = state, *ga = acc + d;
  /* the diagonal's parameters rho_j: entropy term and the softplus factor */
  size_t at = 0;
  for (int j = 0; j < d; j++) {
    const double r = scale[at];
    ga[at] = (ga[at] + 1.0 / softplus(r)) * sigmoid(r);
    at += o->fullrank ? (size_t) (d - j) : 1;
  }
  memcpy(theta, w, d * sizeof(double));
  memcpy(theta + d, scale, o->n_scale * sizeof(double));
  /* an optimiser, not a sampler: temperature 0 */
  o->inner->step(theta, acc, NULL, eta, 0.0, state + o->n_scale, rng, (int) o->p, o->inner_opts);
  memcpy(w, theta, d * sizeof(double));
  memcpy(scale, theta + d, o->n_scale * sizeof(double));
  /* Polyak-Ruppert averaging of theta after average_from steps: the final
     iterate of a stochastic optimiser scatters around the optimum by an
     amount set by the learning rate and the gradient noise (logistic
     regression, n = 10^5, batch 100: still 0.2-0.4 posterior sd after 10^6
     Adam steps with lr decaying to 1e-5), while the average of the iterates
     converges at the Monte Carlo rate */
  double *avg = state + o->n_scale + 2 * o->p + 2, *count = avg + o->p, *steps = count + 1;
  *steps += 1.0;
  if (*steps > o->average_from) {
    *count += 1.0;
    const double f = 1.0 / *count;
    for (size_t j = 0; j < o->p; j++) avg[j] += f * (theta[j] - avg[j]);
  }
  /* the driver checks w; a scale gone non-finite stops the chain the same way */
  for (size_t j = 0; j < o->n_scale; j++)
    if (!isfinite(scale[j])) {
      w[0] = NAN;
      break;
    }
}

/* ------------------------------------------ local reparameterisation -- */

/* sd = softplus(rho) into the scratch after theta, when the fit asked for the
   model's local-reparameterisation gradient */
static const double *vi_local_scale(double *state, int d, const void *opts) {
  const vi_opts *o = opts;
  if (!o->local) return NULL;
  double *sd = vi_scratch(state, d, o) + d + 2 * o->p;
  for (int j = 0; j < d; j++) sd[j] = softplus(state[j]);
  return sd;
}

/* the likelihood's part of the gradient in (mu, sd), averaged over the K
   points like gather()'s (whose prior part is already in the accumulation) */
static void vi_gather_local(int k, const double *g_mu, const double *g_sd, double *state,
                            int d, const void *opts) {
  (void) k;
  const vi_opts *o = opts;
  double *acc = vi_scratch(state, d, o) + d;
  const double wk = 1.0 / o->samples;
  for (int j = 0; j < d; j++) {
    acc[j] += wk * g_mu[j];
    acc[d + j] += wk * g_sd[j];
  }
}

/* --------------------------------------------- the minibatch ELBO -- */

static int vi_wants_log_joint(const void *opts) {
  return ((const vi_opts *) opts)->elbo_batch;
}

/* the entropy of q: sum_j log L_jj + d/2 log(2 pi e) */
static double vi_entropy(const double *state, int d, const vi_opts *o) {
  double h = 0.5 * d * (1.0 + M_LN_2PI);
  size_t at = 0;
  for (int j = 0; j < d; j++) {
    h += log(softplus(state[at]));
    at += o->fullrank ? (size_t) (d - j) : 1;
  }
  return h;
}

/* The minibatch estimate of the log joint at point k, plus the entropy of q
   before this iteration's step: an unbiased estimate of that q's ELBO,
   averaged over the K points and summed over the iterations until the next
   kept iterate. */
static void vi_note_log_joint(int k, double log_joint, double *state, int d, const void *opts) {
  (void) k;
  const vi_opts *o = opts;
  double *tr = vi_scratch(state, d, o) - 2;
  const double wk = 1.0 / o->samples;
  tr[0] += wk * (log_joint + vi_entropy(state, d, o));
  tr[1] += wk;
}

/* at each kept iterate: the mean of the minibatch ELBO over the iterations
   since the last one (NA when none was noted) */
static double vi_trace(double *state, int d, const void *opts) {
  const vi_opts *o = opts;
  double *tr = vi_scratch(state, d, o) - 2;
  const double v = tr[1] > 0 ? tr[0] / tr[1] : NAN;
  tr[0] = tr[1] = 0.0;
  return v;
}

const sgld_update update_vi_meanfield = {
  .name = "vi_meanfield", .build = vi_meanfield_build, .state_length = vi_meanfield_state,
  .scratch_length = vi_meanfield_scratch, .init = vi_init, .step = vi_step,
  .points = vi_points, .point = vi_point, .gather = vi_gather,
  .local_scale = vi_local_scale, .gather_local = vi_gather_local,
  .wants_log_joint = vi_wants_log_joint, .note_log_joint = vi_note_log_joint, .trace = vi_trace
};

const sgld_update update_vi_fullrank = {
  .name = "vi_fullrank", .build = vi_fullrank_build, .state_length = vi_fullrank_state,
  .scratch_length = vi_fullrank_scratch, .init = vi_init, .step = vi_step,
  .points = vi_points, .point = vi_point, .gather = vi_gather,
  .local_scale = vi_local_scale, .gather_local = vi_gather_local,
  .wants_log_joint = vi_wants_log_joint, .note_log_joint = vi_note_log_joint, .trace = vi_trace
};
