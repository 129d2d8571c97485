/*
 * Shared types of the sgld engine.
 *
 * A run is independent pieces plugged into one driver (run.c):
 *   - a model: log density and gradients over read-only data,
 *   - a gradient estimator: what the update rule follows (the minibatch
 *     gradient of the log posterior, or a variational family's ELBO gradient),
 *   - an update rule: how a state moves given a gradient estimate,
 *   - a learning-rate schedule.
 * The driver never knows which model, estimator or rule it runs. Nothing declared here
 * touches the R API, so every function can run outside the main thread.
 */
#ifndef SGLD_H
#define SGLD_H

#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <Rinternals.h>   /* R_xlen_t, SEXP for the builders only */

/* On x86-64 Linux with GCC, hot functions whose vector loops reorder no sum
   are also compiled for AVX2, and the loader picks that copy where the
   processor has it. Not FMA: a fused multiply-add rounds once instead of
   twice, so draws would then depend on the machine; AVX2 alone does the
   same operations in the same order, 4 doubles at a time instead of 2, and
   gives the same bits. (dense.h's kernels choose their AVX2 build by hand:
   theirs is not the same source compiled twice.) */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SGLD_WIDE __attribute__((target_clones("avx2", "default")))
#else
#define SGLD_WIDE
#endif

/* ---------------------------------------------------------------- RNG -- */

/* xoshiro256++ state; one per chain, chains sit 2^128 draws apart. */
typedef struct sgld_rng {
  uint64_t s[4];
} sgld_rng;

static inline uint64_t sgld_rotl(uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(sgld_rng *r) {
  uint64_t *s = r->s;
  uint64_t out = sgld_rotl(s[0] + s[3], 23) + s[0];
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = sgld_rotl(s[3], 45);
  return out;
}

/* uniform on the open interval (0, 1): 53 random bits, shifted by half a step */
static inline double rng_unif(sgld_rng *r) {
  return ((double) (rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

void rng_seed_from_r(sgld_rng *r);            /* main thread only: uses R's RNG */
void rng_jump(sgld_rng *r);                   /* advance by 2^128 draws */
void rng_seed_streams(sgld_rng *out, int n);  /* main thread only: n streams, 2^128 apart */
void rng_restore(sgld_rng *r, const unsigned char *bytes, const char *what); /* main thread only */
uint64_t rng_below_large(sgld_rng *r, uint64_t n);

/* Uniform on {0, ..., n-1}, n >= 1, without bias: Lemire's multiply-and-reject
   on 32 bits, so it needs no 128-bit arithmetic. */
static inline uint64_t rng_below(sgld_rng *r, uint64_t n) {
  if (n > UINT64_C(0xFFFFFFFF)) return rng_below_large(r, n);
  uint64_t prod = (rng_next(r) >> 32) * n;
  if ((uint32_t) prod < (uint32_t) n) {
    const uint32_t threshold = (uint32_t) (-(uint32_t) n) % (uint32_t) n;
    /* each try is rejected with probability below 1/2, so 256 in a row never
       happen to a working stream; the bound only keeps a broken state (all
       zero, which seeding and rng_restore() refuse) from looping for ever */
    for (int tries = 0; (uint32_t) prod < threshold && tries < 256; tries++)
      prod = (rng_next(r) >> 32) * n;
  }
  return prod >> 32;
}

/* Standard normal by a 256-layer ziggurat; the fast path is inline. */
extern double sgld_zig_x[257];
double rng_norm_slow(sgld_rng *r, uint64_t bits);
void rng_init_tables(void);                   /* once, when the library loads */

static inline double rng_norm(sgld_rng *r) {
  uint64_t bits = rng_next(r);
  int i = (int) (bits & 0xFF);
  /* top 53 bits as a signed fraction in [-1, 1) */
  double u = (double) ((int64_t) bits >> 11) * 0x1.0p-52;
  double z = u * sgld_zig_x[i];
  if (fabs(z) < sgld_zig_x[i + 1]) return z;
  return rng_norm_slow(r, bits);
}

/* ---------------------------------------------------------- models -- */

/* the most points a model's loglik_points() takes at once */
#define loglik_points_max 8

typedef struct sgld_model {
  int d;               /* unconstrained parameters */
  R_xlen_t n;          /* data items */
  const void *data;    /* model's own data, read-only during a run */
  /* add sum over idx[0..m) of grad log f(z_i | w) into g */
  void   (*grad_loglik)(const void *data, const double *w, const R_xlen_t *idx,
                        int m, double *g, double *work);
  /* sum over idx[0..m) of log f(z_i | w); idx NULL means all n items; work as
     for grad_loglik */
  double (*loglik)(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                   double *work);
  void   (*grad_logprior)(const void *data, const double *w, double *g);   /* adds */
  double (*logprior)(const void *data, const double *w);
  /* Optional (may be NULL): g <- grad log prior(w) + scale * sum over idx[0..m) of
     grad log f(z_i | w), overwriting g. The same numbers as the two functions
     above, in one pass, so that small models do not pay for separate passes
     over the parameters (zeroing, scaling, the prior) and for shared terms
     computed twice. */
  void   (*grad_logpost)(const void *data, const double *w, const R_xlen_t *idx, int m,
                         double scale, double *g, double *work);
  /* may be NULL; 0 when a finite w is still outside what the model can represent */
  int    (*in_domain)(const void *data, const double *w);
  /* held-out metrics over the model's own data (a test set built like the
     training data): per-datum log likelihood first, then model-specific ones,
     named in the model table (model_table.c), which also sets n_metrics */
  int n_metrics;
  void   (*metrics)(const void *data, const double *w, double *out, double *work);
  size_t work_size;    /* doubles of scratch per chain, for every function given work */
  /* May be NULL (the built-in models cannot fail). A model whose functions
     can fail (one written in R) records the failure, makes its later calls
     no-ops, and answers MODEL_FAILED or MODEL_INTERRUPTED here; the driver
     then stops the run and keeps what it has. */
  int    (*failed)(const void *data);
  /* nonzero when the model calls into R: only the main thread may run it,
     so chains run one after the other, outside any parallel region */
  int main_thread_only;
  /* nonzero when parameters are local to items (a latent per time point,
     model_sv()): such a model runs on full data only (the R side refuses
     smaller batches), and preconditioners see the posterior gradient per
     item rather than the mean per-item likelihood gradient (gradient.c) */
  int local_params;
  /* Optional (NULL: none). Local reparameterisation (Kingma, Salimans and
     Welling 2015) for a model whose log likelihood depends on its weights
     through per-item linear combinations (regressions, each layer of a
     network): for q = N(mu, diag(sd^2)) it draws each item's combinations
     from their exact distribution under q, independently per item, rather
     than one w for the whole batch. It adds into g_mu and g_sd the gradient
     in (mu, sd) of sum over idx[0..m) of log f(z_i | w_i), w_i ~ q
     independently per item, and returns that sum: an unbiased estimate of the
     gradient of E_q[sum_i log f(z_i | w)] (and of that expectation).
     Parameters that are not weights (a noise scale) are drawn once per call
     by ordinary reparameterisation. The rng is the chain's; work as for
     grad_loglik. */
  double (*grad_loglik_local)(const void *data, const double *mu, const double *sd,
                              const R_xlen_t *idx, int m, sgld_rng *rng, double *g_mu,
                              double *g_sd, double *work);
  /* Optional (NULL: none), for models whose log likelihood depends on the
     weights through each item's linear combination and whose prior is
     independent across parameters: under a mean-field q = N(mu, diag(sd^2))
     the expectation of the log likelihood summed over idx[0..m) (resp. of
     the log prior), returned, with its exact gradient in mu and in sd added
     into g_mu and g_sd. Item i's combination is N(a_i, v_i) under q, so its
     expected log likelihood is a one-dimensional integral, in closed form or
     by quadrature: Bayes by Backprop's gradient without the Monte Carlo
     noise of the parameters' draws (gradient_vi.c). work as for grad_loglik. */
  double (*expected_loglik)(const void *data, const double *mu, const double *sd,
                            const R_xlen_t *idx, int m, double *g_mu, double *g_sd,
                            double *work);
  double (*expected_logprior)(const void *data, const double *mu, const double *sd,
                              double *g_mu, double *g_sd);
  /* Optional (NULL: none). A Gaussian approximation of a latent path given
     the globals, for the "whiten" rule (update_whiten.c): the path is the
     last P = d - path_k parameters. With path_level 0 the block is the path
     alone; with path_level 1 the first global w[0] (a level, mu) joins it as
     its last coordinate, and M gains a dense last row and column (an
     arrowhead). Given the other globals the block is approximately
     N(M^{-1} b, M^{-1}), M's path part tridiagonal. With j < 0 it writes the
     path part's diagonal into diag[0..P), its off-diagonal into
     off[0..P - 1), b's path part into b[0..P) and, with path_level 1, the
     level's column border[0..P), its diagonal border[P] and its b
     border[P + 1]; with path_level <= j < path_k their derivatives in w[j].
     Everything depends on the globals w[path_level..path_k) only. */
  void (*path_gaussian)(const void *data, const double *w, int j, double *diag, double *off,
                        double *b, double *border);
  int path_k;
  int path_level;
  /* Optional (NULL: none), for Newton's steps to the posterior mode
     (mode.c). hess_loglik returns the log likelihood summed over
     idx[0..m) (idx NULL: all n items), adds its gradient into g and its
     Hessian into H (d x d, symmetric on entry and on exit), in one pass over
     those items; `work` holds work_size + 4 d doubles. hess_logprior adds
     the log prior's Hessian at w into H and returns 1, or returns 0 (H
     untouched) where the prior has no Hessian (a Laplace prior's kink). */
  double (*hess_loglik)(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                        double *g, double *H, double *work);
  int (*hess_logprior)(const void *data, const double *w, double *H);
  /* Optional (NULL: none): the log likelihood summed over idx[0..m) (idx
     NULL: all n items), its gradient added into g, in one pass, for
     Metropolis-Hastings steps (langevin.c), which need both; work as for
     grad_loglik. */
  double (*loglik_grad)(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                        double *g, double *work);
  /* Optional (NULL: loglik() once a point). The full-data log likelihood at
     each of B points (1 <= B <= loglik_points_max), W column-major d x B,
     into out[0..B): loglik(data, w_b, NULL, n, work)'s numbers up to
     rounding, in one pass over the rows for all B, so that each row is read
     once for B points and what does not depend on the row (the lgamma steps
     of a count's distinct values) is summed once a point. For the batches of
     independence Metropolis-Hastings (imh.c); work as for loglik. */
  void (*loglik_points)(const void *data, const double *W, int B, double *out, double *work);
  /* Optional (NULL: loglik one row at a time). out[i - from] = log f(z_i | w),
     case weight included, for rows from <= i < to. Reads nothing but data
     and w and calls no R, so threads may share it (model_contract.c:
     sgld_pointwise_loglik). */
  void (*loglik_rows)(const void *data, const double *w, R_xlen_t from, R_xlen_t to,
                      double *out);
  /* Optional (NULL: none), for models whose log likelihood depends on w
     through each item's linear combination x_i'w and whose prior is
     independent across parameters: the log posterior as a function of w_j
     alone, the other parameters held at w, up to a constant: the log
     likelihood of the items idx[0..m) with w_j replaced by v, plus w_j's
     log prior at v. idx must hold every item whose x_ij is not zero (the
     others do not depend on w_j). For the coordinate updates (coordinate.c);
     reads nothing but data and w. A prior term on one linear combination
     u'w (prior_centred.h: the intercept at centred predictors) is left out
     of it and described by coord_centre (u, d entries; NULL: none),
     coord_centre_loc and coord_centre_scale, the normal's mean and sd: the
     coordinate updates keep u'w as they go, where each evaluation would
     otherwise cost O(d) (at 10,000 levels, most of a run). */
  double (*logpost_coordinate)(const void *data, const double *w, int j, double v,
                               const R_xlen_t *idx, R_xlen_t m);
  const double *coord_centre;
  double coord_centre_loc, coord_centre_scale;
  /* Optional (0 / NULL: none), for control variates around w0 (gradient.c):
     cv_fill writes what each item's likelihood gradient at w0 needs,
     cv_width doubles an item (n cv_width in all), once before a run; then
     grad_loglik_diff adds into g the sum over idx[0..m) of
     grad log f(z_i | w) - grad log f(z_i | w0), reading w0's part from that
     store: one evaluation per item instead of two (negative binomial:
     exp, log1p and digamma's steps). work as for grad_loglik. */
  int cv_width;
  void (*cv_fill)(const void *data, const double *w0, double *store);
  void (*grad_loglik_diff)(const void *data, const double *store, const double *w,
                           const R_xlen_t *idx, int m, double *g, double *work);
  /* Optional (NULL: none). Moves of the model's own that leave its
     posterior (temperature 1) exactly invariant, made after each
     Metropolis-adjusted step (chain.c): w in place, with *log_post, the log
     posterior at w, and g, its gradient, brought up to date (the step has
     them cached). On the chain's stream; reads nothing but data; work as
     for grad_loglik. model_glmm.c: a multilevel model's covariance
     parameters in the centred form, then its group effects group by group. */
  void (*exact_moves)(const void *data, double *w, double *log_post, double *g,
                      sgld_rng *rng, double *work);
} sgld_model;

enum { MODEL_OK = 0, MODEL_FAILED = 1, MODEL_INTERRUPTED = 2 };

/* sums of weighted outer products of rows, into the upper triangle of H
   (hessian.c), for the models' hess_loglik; hess_mirror() then fills the
   lower triangle */
void hess_rows4(double *H, R_xlen_t ld, int p, const double *x0, const double *x1,
                const double *x2, const double *x3, const double *h);
void hess_row(double *H, R_xlen_t ld, int p, const double *x, double h);
void hess_rows(double *H, R_xlen_t ld, int p, const double *const *x, const double *h,
               int rows);
void hess_sparse_row(double *H, R_xlen_t ld, const int *col, const double *val, R_xlen_t nnz,
                     double h);
void hess_mirror(double *H, int d);

/* the model named by spec$type, built from the R-side model object
   (model_table.c) */
sgld_model find_model(SEXP spec);
/* the i-th model type's name and its metrics' names (NULL if it has none),
   for sgld_codes(); the name is NULL past the last type */
const char *model_type_name(int i);
const char *const *model_metric_names(int i);
/* how many names a NULL-terminated list holds (codes.c) */
int name_count(const char *const *names);

/* builders: unpack the R-side model object (main thread, may allocate with R_alloc);
   each returns its table as a designated initializer, so the optional fields
   it does not name are NULL or 0 */
sgld_model model_linear_build(SEXP spec);
sgld_model model_logistic_build(SEXP spec);
sgld_model model_mixture_build(SEXP spec);
sgld_model model_ica_build(SEXP spec);
sgld_model model_sv_build(SEXP spec);
sgld_model model_mlp_build(SEXP spec);      /* types mlp_regression, mlp_classification */
sgld_model model_compiled_build(SEXP spec);   /* another package's (sgld_model.h) */
sgld_model model_r_build(SEXP spec);
sgld_model model_poisson_build(SEXP spec);
sgld_model model_negbin_build(SEXP spec);
sgld_model model_glmm_build(SEXP spec);    /* multilevel: internal, no face yet */
/* for t ~ N(a, v): out[0] = E[log sigmoid(t)], out[1] = E[sigmoid(-t)],
   out[2] = E[sigmoid(t) sigmoid(-t)] (logistic_normal.c) */
void logistic_normal(double a, double v, double *out);
/* the names of the held-out metrics a model's metrics() writes, in order,
   NULL-terminated; the model table sets n_metrics from them */
extern const char *const model_linear_metrics[], *const model_logistic_metrics[],
  *const model_mixture_metrics[], *const model_ica_metrics[],
  *const model_mlp_regression_metrics[], *const model_mlp_classification_metrics[],
  *const model_poisson_metrics[], *const model_negbin_metrics[];

/* --------------------------------------------------------- updates -- */

/* An update rule owns its settings: build() reads the rule's own fields from
   the R list of its options (on the main thread, allocating with R_alloc)
   and returns the rule's own struct, which every other function receives as
   `opts` and casts back. No other file knows what a rule's options hold. */
typedef struct sgld_update {
  const char *name;    /* the name R passes (rule$name) */
  /* Optional (NULL: the rule has no settings, and opts is NULL) */
  const void *(*build)(SEXP opts, int d);
  /* Optional, in place of build for a rule that needs the model itself
     (update_whiten.c): the model lives as long as the run */
  const void *(*build_model)(SEXP opts, const sgld_model *model);
  /* Optional (NULL: 0). The state (momentum, averages, a step count) is part
     of the chain: it is returned with the fit and restored when a run is
     continued. state_length(d) doubles for d parameters, followed in the
     same buffer by scratch_length(d) doubles that need not survive a step. */
  size_t (*state_length)(int d);
  size_t (*scratch_length)(int d);
  int needs_g_bar;     /* does step() read the mean per-item likelihood gradient? */
  void (*init)(double *state, const double *w, int d, const void *opts);
  /* move w given g_hat (the posterior gradient estimate) and g_bar (mean per-item
     likelihood gradient, NULL unless needs_g_bar) at learning rate eta, temperature tau */
  void (*step)(double *w, const double *g_hat, const double *g_bar, double eta,
               double tau, double *state, sgld_rng *rng, int d, const void *opts);
  /* Optional. A rule without kept state is also a Metropolis-Hastings proposal
     (mala(), and the rejection diagnostic): its step from `from` with the
     full-data gradient g_from has the log density log_q(to | from), up to a
     constant that does not depend on from or to. */
  double (*log_q)(const double *to, const double *from, const double *g_from, double eta,
                  double tau, double *scratch, int d, const void *opts);
  /* Optional: a d x d factor T (column-major) of the rule's preconditioner at
     w, P = T T^T, for the sampling threshold; NULL means P = I. */
  void (*precond_factor)(const double *w, const double *state, double *T, double *scratch,
                         int d, const void *opts);
  /* Optional: step() with its noise given. A rule whose step() at tau > 0
     draws exactly d standard normals from rng, one per parameter in order,
     and nothing else, may give this: the same step with those normals in z.
     The driver then draws them during the gradient, on a thread the split
     batch leaves idle (gradient.c), from the same stream in the same order,
     so the draws are the same bits as step()'s. */
  void (*step_drawn)(double *w, const double *g_hat, const double *g_bar, double eta,
                     double tau, double *state, const double *z, int d, const void *opts);
} sgld_update;

/* the rules, one file each; looked up by name in update_table.c */
extern const sgld_update update_sgld, update_precond, update_psgld, update_sghmc,
  update_momentum, update_adagrad, update_rmsprop, update_adam, update_natural,
  update_whiten, update_whiten_lm, update_precond_lm;

/* the rule named `name`; an R error if there is none (update_table.c) */
const sgld_update *find_update(const char *name);
/* the name of the i-th rule in that table, NULL past the last */
const char *update_rule_name(int i);
/* the rule's options built from the R list, NULL for a rule without any;
   model: the run's model (NULL where a rule is built inside another, which
   then cannot be one that needs the model) */
const void *update_build_opts(const sgld_update *u, SEXP opts, int d, const sgld_model *model);
/* doubles of state a rule keeps for d parameters, and of scratch after it */
size_t update_state_length(const sgld_update *u, int d);
size_t update_scratch_length(const sgld_update *u, int d);

/* shared pieces of rules: no state to set up; a state of d zeros; one
   double per parameter */
void update_no_init(double *state, const double *w, int d, const void *opts);
void update_zero_init(double *state, const double *w, int d, const void *opts);
size_t update_one_per_parameter(int d);

/* ------------------------------------------------------- schedules -- */

/* named in codes.c, the names R passes as schedule$type */
enum { SCHEDULE_CONSTANT, SCHEDULE_POLY, SCHEDULE_PIECEWISE, SCHEDULE_EXP, SCHEDULE_CYCLICAL,
       SCHEDULE_KINDS };

typedef struct sgld_schedule {
  int type;
  double a, b, gamma;       /* constant: eta = a; poly: a (b + t)^-gamma */
  double t0, t1;            /* piecewise: a for t <= t0, a (t - t0)^-gamma up to t1;
                               exponential: a b^((t - 1) / (t1 - 1));
                               cyclical: cycles of t1 iterations, (a/2)(cos(pi r) + 1)
                               with r = ((t - 1) mod t1) / t1, sampling once r >= b,
                               exploring (r < b) at gamma times the run's temperature */
  double floor;             /* eta never goes below this */
} sgld_schedule;

sgld_schedule schedule_build(SEXP spec);
double schedule_eta(const sgld_schedule *s, double t);
/* 1 if draws may be kept at iteration t: always, except in the exploring
   part of a cycle of a cyclical schedule */
int schedule_sampling(const sgld_schedule *s, double t);
/* the temperature of iteration t in a run at temperature tau: tau, except in
   the exploring part of a cycle of a cyclical schedule */
double schedule_temperature(const sgld_schedule *s, double t, double tau);

/* ------------------------------------------------------ minibatches -- */

typedef struct sgld_minibatch {
  R_xlen_t n;
  int m;
  int mode;         /* how batches are drawn: see minibatch.c */
  R_xlen_t *perm;   /* large batches without replacement: the identity 0..n-1,
                       then room to record the m swaps of a draw */
  unsigned char *seen;  /* one mark per item (small batches without replacement) */
  uint64_t *set;        /* or a hash set of the batch's items (large n) */
} sgld_minibatch;

/* memory the minibatch needs, in bytes, given n, m and replace */
size_t minibatch_bytes(R_xlen_t n, int m, int replace);
void minibatch_init(sgld_minibatch *mb, R_xlen_t n, int m, int replace, void *memory);
const R_xlen_t *minibatch_draw(sgld_minibatch *mb, sgld_rng *r, R_xlen_t *idx);

/* ------------------------------------------------ gradient estimates -- */

/* g_hat(w) = grad log prior(w) + (n/m) sum over the batch of grad log f(z_i | w),
   or with control variates around a mode w_hat (Baker et al. 2019)
   g_hat(w) = grad log prior(w) + G(w_hat) + (n/m) sum over the batch of
              [grad log f(z_i | w) - grad log f(z_i | w_hat)],
   G(w_hat) being the full-data likelihood gradient at w_hat. */
typedef struct sgld_estimator {
  const sgld_model *model;
  int m;
  const double *cv_mode;   /* w_hat, or NULL without control variates */
  const double *cv_grad;   /* G(w_hat) */
  /* The minibatch sum in `blocks` fixed pieces of the batch (1: one piece),
     summed in a fixed order, so the bits do not depend on `threads`, the
     threads that share the pieces (gradient.c: estimator_split()). */
  int blocks, threads;
  /* the model's cv_fill at w_hat (cv_store()), or NULL: then the
     differences come from grad_loglik_diff in one pass */
  const double *cv_store;
} sgld_estimator;

/* blocks and threads for a run of this model at batch size m, with `threads`
   to spare for each chain; the blocks depend on the model and m only */
void estimator_split(sgld_estimator *e, int threads);
/* doubles of work buffer estimate_gradient() needs (model->work_size when
   the batch is not split) */
size_t estimator_work_length(const sgld_estimator *e);

/* a step's normals wanted during a gradient: z[0..d) from rng, in order */
typedef struct sgld_noise {
  sgld_rng *rng;
  double *z;
} sgld_noise;

/* g <- g_hat(w); g_bar (when not NULL) <- the minibatch mean of the per-item
   likelihood gradients at w; tmp: d doubles, used with control variates;
   work: estimator_work_length(e) doubles. noise (NULL, or only for a split
   batch, e->blocks > 1): its d normals are drawn meanwhile, by the last
   thread of the gradient's region once its pieces are done. */
void estimate_gradient(const sgld_estimator *e, const double *w, const R_xlen_t *idx,
                       double *g, double *g_bar, double *tmp, double *work,
                       const sgld_noise *noise);
/* G(w_hat): the full-data likelihood gradient at a mode, in one pass by
   chunks; main thread only (allocates with R_alloc, errors if not finite) */
const double *cv_gradient(const sgld_model *model, const double *mode);
const double *cv_store(const sgld_model *model, const double *mode);
/* the likelihood gradient over all items, added into g (in chunks of items) */
void full_grad_loglik(const sgld_model *model, const double *w, double *g, double *work);

/* One iteration's minibatch and what a gradient estimator may use with it:
   the minibatch estimator above, the chain's random stream and work buffers,
   and the clipping the run asked for (counted in *clip_count). */
typedef struct sgld_batch {
  const sgld_estimator *e;
  const R_xlen_t *idx;     /* the batch's e->m items */
  sgld_rng *rng;
  double *tmp;             /* d doubles (control variates) */
  double *work;            /* estimator_work_length(e) doubles */
  int clip_type;
  double clip_threshold;
  double *clip_count;
} sgld_batch;

/* g <- g_hat(w) on the batch, clipped if asked (estimate_gradient() above);
   g_bar and noise as there */
void batch_gradient(const sgld_batch *b, const double *w, double *g, double *g_bar,
                    const sgld_noise *noise);

/* A gradient estimator: what the update rule follows. The rule moves
   theta = (w, extra): the model's d parameters w, which the driver keeps,
   checks and reports, followed by extra_length() parameters of the
   estimator's own (a variational family's scales), which live in the
   estimator's state between runs. The plain estimator ("minibatch") has
   none: its gradient is g_hat(w). Bayes by Backprop ("vi_meanfield",
   "vi_fullrank", gradient_vi.c) reads w as the mean of a Gaussian q and
   returns the gradient of the evidence lower bound in theta. */
typedef struct sgld_gradient {
  const char *name;        /* the name R passes (settings$gradient) */
  /* Optional (NULL: no settings, opts is NULL); main thread, R_alloc */
  const void *(*build)(SEXP opts, const sgld_model *model);
  /* Optional (NULL: 0). Parameters moved with w, and doubles of state kept
     with the chain (its first extra_length() hold those parameters when the
     chain is not running), followed by scratch_length() doubles of scratch */
  size_t (*extra_length)(int d, const void *opts);
  size_t (*state_length)(int d, const void *opts);
  size_t (*scratch_length)(int d, const void *opts);
  /* Optional: the state of a chain that starts afresh (the extra parameters'
     starting values) */
  void (*init)(double *state, int d, const void *opts);
  /* g (d + extra doubles) <- the estimate at theta on the batch. g_bar and
     noise as for batch_gradient() (only an estimator without extra
     parameters is given them). A non-finite value left in g stops the chain. */
  void (*estimate)(const sgld_batch *b, const double *theta, double *g, double *g_bar,
                   const sgld_noise *noise, double *state, int d, const void *opts);
  /* Optional: 0 when a finite theta is outside what the estimator can
     represent (a scale whose exponential overflows): the chain then stops
     at the last theta inside, as for a non-finite one */
  int (*in_domain)(const double *theta, int d, const void *opts);
  /* Optional: after every step that left theta finite */
  void (*after_step)(const double *theta, double *state, int d, const void *opts);
  /* Optional: a value stored with each kept draw (NA without), which may
     summarise the iterations since the last one */
  double (*trace)(double *state, int d, const void *opts);
} sgld_gradient;

extern const sgld_gradient gradient_minibatch, gradient_vi_meanfield, gradient_vi_fullrank;
/* the estimator named `name`; an R error if there is none */
const sgld_gradient *find_gradient(const char *name);
const void *gradient_build_opts(const sgld_gradient *g, SEXP opts, const sgld_model *model);
size_t gradient_extra_length(const sgld_gradient *g, int d, const void *opts);
size_t gradient_state_length(const sgld_gradient *g, int d, const void *opts);
size_t gradient_scratch_length(const sgld_gradient *g, int d, const void *opts);

/* -------------------------------------------------------- clipping -- */

/* named in codes.c, the names R passes as clip_type */
enum { CLIP_NONE, CLIP_NORM, CLIP_VALUE, CLIP_KINDS };
int clip_gradient(double *g, int d, int type, double threshold);  /* 1 if it fired */

/* ------------------------------------------- Langevin, diagnostics -- */

double full_log_post(const sgld_model *model, const double *w, double *g,
                     const R_xlen_t *all_idx, double *work);
/* Leimkuhler-Matthews steps' normals: xi = (prev + r) / 2, prev <- r, with
   prev[d] the flag that prev holds the last step's (langevin.c) */
void lm_normals(double *prev, double *xi, sgld_rng *rng, int d);
/* can the rule be a Metropolis-Hastings proposal (log_q, no kept state)? */
int update_is_proposal(const sgld_update *rule, int d);
/* the proposal whose rejection probability the diagnostics report: the rule
   itself if it can be one, else the plain Langevin step, in which case *opts
   becomes that step's (NULL) options */
const sgld_update *diagnostic_proposal(const sgld_update *rule, int d, const void **opts);
/* one Metropolis-Hastings proposal by a rule with log_q: w_new = step from w */
void mh_propose(const sgld_update *rule, const double *w, const double *g, double eta,
                double tau, double *scratch, sgld_rng *rng, double *w_new, int d,
                const void *opts);
/* log of [pi(w') q(w | w')] / [pi(w) q(w' | w)] with pi = exp(U / tau) */
double mh_log_ratio(const sgld_update *rule, const double *w, double U, const double *g,
                    const double *w_new, double U_new, const double *g_new, double eta,
                    double tau, double *scratch, int d, const void *opts);
/* `steps` leapfrog steps of size eps for H(w, r) = -U(w) / tau + |r|^2 / 2
   under the metric P = T T^T (T lower triangular, d x d; NULL: P = I), r
   the momentum in the coordinates x of w = T x; w, g = grad U(w) and r move
   in place, and U at the end is returned (non-finite: the path left the
   posterior's support and stopped there) (langevin.c) */
double leapfrog_path(const sgld_model *model, const double *T, double *w, double *g,
                     double *r, double U, double eps, int steps, double tau,
                     const R_xlen_t *all_idx, double *work);
double lambda_max_psd(const double *A, int d, double *v, double *av);
/* doubles of the per-chain diagnostics buffer for d parameters */
size_t diagnostics_scratch_length(int d);
/* where, in that buffer, the preconditioner's factor T (d x d) goes: past
   what score_lambda_max() uses */
double *diagnostics_factor_slot(double *buf, int d);
double score_lambda_max(const sgld_model *model, const double *w, const R_xlen_t *items,
                        R_xlen_t count, const double *T, double *buf, double *work);

/* ---------------------------------------------------- shared codes -- */

/* Every code R and C share has its name in one table in codes.c. R passes
   names (schedule$type, clip_type, burnin_mode, thin_mode, a link), which C turns
   into these codes; the codes C reports back (a chain's status, the columns
   of a diagnostics row) R reads by the names sgld_codes() returns. */
enum { BURNIN_COUNT, BURNIN_THRESHOLD, BURNIN_MODES };
enum { THIN_COUNT, THIN_DISTANCE, THIN_MODES };
enum { STATUS_DONE, STATUS_NONFINITE_PARAMETER, STATUS_NONFINITE_GRADIENT,
       STATUS_INTERRUPTED, STATUS_NOT_RUN, STATUS_MODEL_FAILED, STATUS_KINDS };
/* the scale of a parameter's running moments: the sampler's, or the user's
   through a coordinate-wise transform: exp (a parameter sampled as its
   logarithm), tanh (a correlation sampled as atanh), 2 + exp (degrees of
   freedom above 2 sampled as log(nu - 2)) */
enum { MOMENT_IDENTITY, MOMENT_EXP, MOMENT_TANH, MOMENT_EXP_PLUS2, MOMENT_SCALES };
/* limits R checks the user's arguments against (sgld_codes()$limits) */
#define VI_MAX_SAMPLES 1000000   /* Monte Carlo draws per ELBO gradient */
/* the inverse link predictions apply to a linear predictor */
enum { LINK_IDENTITY, LINK_LOGIT, LINK_LOG, LINKS };
/* the columns of one row of diagnostics, in order */
enum { DIAG_ITERATION, DIAG_ETA, DIAG_ALPHA, DIAG_VAR_INJECTED, DIAG_VAR_GRADIENT,
       DIAG_REJECTION, DIAG_COLS };

/* the tables R passes names from */
typedef enum { CODES_SCHEDULE, CODES_CLIP, CODES_BURNIN, CODES_THIN, CODES_MOMENT_SCALE,
               CODES_LINK, CODES_INPUT_TABLES } code_table;
/* the code of the one name `name` (a character vector of length 1) */
int name_code(SEXP name, code_table table);
/* the code of the name held in list$name; an internal R error if that is
   not a name in the table */
int list_code(SEXP list, const char *name, code_table table);
/* the codes of the names in the character vector list$name, which must have
   `len` elements: an R_alloc'ed array (main thread) */
int *list_codes(SEXP list, const char *name, R_xlen_t len, code_table table);

/* ---------------------------------------------- small linear algebra -- */

/* column-major D x D; each returns LAPACK's info (0 on success) */
/* Ainv = A^{-1} and log|det A|; work: lwork >= D doubles, ipiv: D ints */
int mat_inverse(const double *A, int D, double *Ainv, double *log_abs_det, double *work,
                int lwork, int *ipiv);
/* root = S^{1/2} of a symmetric positive semi-definite S by eigendecomposition;
   evec: D * D, evals: D, work: lwork >= 3 D doubles */
int sym_sqrt(const double *S, int D, double *root, double *evec, double *evals, double *work,
             int lwork);
/* lower Cholesky factor of a symmetric positive definite S (upper part zeroed) */
int chol_lower(const double *S, int D, double *L);

/* ------------------------------------------------------ R helpers -- */

SEXP list_elt(SEXP list, const char *name);          /* error if missing */
SEXP list_optional(SEXP list, const char *name);     /* R_NilValue if missing */
double list_real(SEXP list, const char *name);
int list_int(SEXP list, const char *name);
/* a double vector of the given length (any length when len < 0) */
const double *list_doubles(SEXP list, const char *name, R_xlen_t len);
const double *list_optional_doubles(SEXP list, const char *name, R_xlen_t len);
/* a model's (p + 1) x n rows: its `z`, or the memory map of its data file (mmap.c) */
const double *model_rows(SEXP spec, R_xlen_t len);
/* set (by mmap.c's SIGBUS handler, on any thread) when a read of a file
   copy's mapping found its file shortened: the page read as zeros. A run
   clears it at its start; a chain that sees it stops before keeping
   anything made from those zeros (chain.c), and R makes it an error
   (sgld_rows_lost()) */
extern volatile int sgld_rows_lost;
/* pages.c: data read at random advised into 2 MB pages (MADV_HUGEPAGE),
   where the system allows and the block is large; nothing otherwise */
void huge_pages(const void *data, size_t bytes);
/* single precision, stored by R as a raw vector (storage = "float"); NULL if absent */
const float *list_optional_floats(SEXP list, const char *name, R_xlen_t len);

#endif
