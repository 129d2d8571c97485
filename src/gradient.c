/*
 * The gradient estimators, apart from the update rules that consume them and
 * the driver that calls them (see sgld.h): the minibatch gradient of the log
 * posterior, by plain minibatch sums or with control variates, which is
 * also the estimator the samplers follow ("minibatch"), and the table of
 * estimators by name (Bayes by Backprop's are in gradient_vi.c). Also an
 * entry point that draws repeated estimates at a fixed point, to measure
 * the estimator's noise.
 */
#include <string.h>
#include <R.h>
#include "sgld.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------ one chain on several threads --

   When a run has fewer chains than threads, the idle threads share each
   chain's minibatch gradient. The batch is cut into SPLIT_BLOCKS pieces,
   each piece's likelihood gradient goes into a buffer of its own (the first
   into g), and the buffers are added to g in order: the pieces and the order
   depend on the model and the batch size only, so the draws are the same
   for any number of threads (tests/testthat/test-threads-inner.R), and a
   run on one thread takes the same path without forking. The model's
   kernels still see a list of items, as always; only this file knows the
   batch is cut.

   A parallel region per gradient: libgomp keeps its threads between
   regions, spinning, so a fork and join costs a microsecond or two, against
   the 50-150 us a gradient takes above SPLIT_MIN_WORK.

   Four pieces serve up to four threads; with two, each thread takes two
   (schedule(static): pieces 0-1 and 2-3). The pieces are whole groups of
   SPLIT_ALIGN items (the dense kernels work in blocks of 4 rows, dense.h),
   as equal as the groups allow. Adding three buffers of d doubles costs
   3d additions against the 2md multiply-adds of the gradient (about 1% at
   m = 100). */
#define SPLIT_BLOCKS 4
#define SPLIT_ALIGN 4
/* below this many item-parameter products (m d) the batch is not cut: the
   gradient takes a few microseconds, no more than the fork and join */
#define SPLIT_MIN_WORK 4096
/* nor below this many parameters: small models keep the bits they had
   (test-checksums.R) and their time goes to per-row costs the pieces do not
   cut (the same bound as dense.h's vectorised kernels) */
#define SPLIT_MIN_D 8

void estimator_split(sgld_estimator *e, int threads) {
  const sgld_model *model = e->model;
  e->blocks = 1;
  e->threads = 1;
  /* a model that calls R runs on the main thread only; one whose parameters
     are local to items runs on full data with its own preconditioner path */
  if (model->main_thread_only || model->local_params) return;
  if (model->d < SPLIT_MIN_D || e->m < SPLIT_BLOCKS * SPLIT_ALIGN ||
      (double) e->m * model->d < SPLIT_MIN_WORK) return;
  e->blocks = SPLIT_BLOCKS;
#ifdef _OPENMP
  e->threads = threads < SPLIT_BLOCKS ? threads : SPLIT_BLOCKS;
  if (e->threads < 1) e->threads = 1;
#else
  (void) threads;
#endif
}

size_t estimator_work_length(const sgld_estimator *e) {
  const size_t ws = e->model->work_size;
  if (e->blocks == 1) return ws;
  return (size_t) e->blocks * ws + (size_t) (e->blocks - 1) * e->model->d;
}

/* piece b of the batch is items from[b] .. from[b + 1] - 1 */
static void split_bounds(int m, int blocks, int *from) {
  const int groups = m / SPLIT_ALIGN, base = groups / blocks, extra = groups % blocks;
  from[0] = 0;
  for (int b = 0; b < blocks; b++)
    from[b + 1] = from[b] + SPLIT_ALIGN * (base + (b < extra));
  from[blocks] = m;                    /* the last piece takes the leftover items */
}

/* Is this the last thread of the region (or is there no region)? The
   first pieces take the groups of items left over after an even split
   (split_bounds()), so the last thread tends to finish first: it draws the
   noise. */
static int last_thread(void) {
#ifdef _OPENMP
  return omp_get_thread_num() == omp_get_num_threads() - 1;
#else
  return 1;
#endif
}

/* g (zero on entry) += the likelihood gradient summed over the batch; the
   noise (if any) drawn meanwhile, by the last thread once its pieces are
   done, while the others finish theirs. The normals take 1.7 ns each on
   this machine: at d = 2000, batch 100, 3.5 us of an iteration's 36-40 us on
   one thread, which the other thread could not share when they were drawn
   after the region (in the step). */
static void batch_grad_loglik(const sgld_estimator *e, const double *w, const R_xlen_t *idx,
                              double *g, double *work, const sgld_noise *noise,
                              const double *store) {
  const sgld_model *model = e->model;
  if (e->blocks == 1) {
    if (store) model->grad_loglik_diff(model->data, store, w, idx, e->m, g, work);
    else model->grad_loglik(model->data, w, idx, e->m, g, work);
    return;
  }
  const int d = model->d, nb = e->blocks;
  const size_t ws = model->work_size;
  double *part = work + (size_t) nb * ws;      /* pieces 1 .. nb - 1, d each */
  int from[SPLIT_BLOCKS + 1];
  split_bounds(e->m, nb, from);
#ifdef _OPENMP
#pragma omp parallel num_threads(e->threads) if(e->threads > 1)
#endif
  {
#ifdef _OPENMP
#pragma omp for schedule(static) nowait
#endif
    for (int b = 0; b < nb; b++) {
      double *gb = b == 0 ? g : part + (size_t) (b - 1) * d;
      if (b > 0) memset(gb, 0, (size_t) d * sizeof(double));
      if (store)
        model->grad_loglik_diff(model->data, store, w, idx + from[b], from[b + 1] - from[b],
                                gb, work + (size_t) b * ws);
      else
        model->grad_loglik(model->data, w, idx + from[b], from[b + 1] - from[b], gb,
                           work + (size_t) b * ws);
    }
    if (noise && last_thread())
      for (int j = 0; j < d; j++) noise->z[j] = rng_norm(noise->rng);
  }
  /* g + piece 1 + piece 2 + piece 3, left to right (nb is SPLIT_BLOCKS), in
     one vectorised pass (callgrind, d = 2000: 36k instructions per gradient
     as a scalar pass per piece, the compiler not knowing the buffers apart) */
  const double *p1 = part, *p2 = part + d, *p3 = part + 2 * (size_t) d;
#ifdef _OPENMP
#pragma omp simd
#endif
  for (int j = 0; j < d; j++) g[j] = ((g[j] + p1[j]) + p2[j]) + p3[j];
}

void estimate_gradient(const sgld_estimator *e, const double *w, const R_xlen_t *idx,
                       double *g, double *g_bar, double *tmp, double *work,
                       const sgld_noise *noise) {
  const sgld_model *model = e->model;
  const int d = model->d, m = e->m;
  const double scale = (double) model->n / (double) m;
  if (model->grad_logpost && !g_bar && !e->cv_mode && e->blocks == 1) {
    model->grad_logpost(model->data, w, idx, m, scale, g, work);
    return;
  }
  for (int j = 0; j < d; j++) g[j] = 0.0;
  /* control variates from the model's store at the mode: the differences
     in one pass. Not where g_bar is asked for, which needs the plain sum */
  if (e->cv_mode && e->cv_store && !g_bar) {
    batch_grad_loglik(e, w, idx, g, work, noise, e->cv_store);
    for (int j = 0; j < d; j++) g[j] = e->cv_grad[j] + scale * g[j];
    model->grad_logprior(model->data, w, g);
    return;
  }
  batch_grad_loglik(e, w, idx, g, work, noise, NULL);
  /* g_bar is the plain minibatch mean even with control variates: it feeds
     preconditioners that estimate the scale of per-item gradients at w. The
     control-variate version vanishes at the mode, which would make such a
     preconditioner depend strongly on w and bias the chain (measured: sds
     15-25% too wide for pSGLD on the handout model). */
  if (g_bar)
    for (int j = 0; j < d; j++) g_bar[j] = g[j] / m;
  if (e->cv_mode) {
    for (int j = 0; j < d; j++) tmp[j] = 0.0;
    batch_grad_loglik(e, e->cv_mode, idx, tmp, work, NULL, NULL);
    for (int j = 0; j < d; j++) g[j] = e->cv_grad[j] + scale * (g[j] - tmp[j]);
  } else {
    for (int j = 0; j < d; j++) g[j] *= scale;
  }
  model->grad_logprior(model->data, w, g);
  /* With parameters local to items the mean per-item likelihood gradient is
     the wrong scale for a preconditioner: a latent is touched by one item,
     so its entry is 1/n of that item's gradient, and it leaves out the
     latent process (in the prior) that sets the latent's curvature; a
     global in the prior only (sigma of model_sv()) gets 0, so pSGLD's step
     becomes 1/lambda. Measured on MASS::SP500 (random walk, t): pSGLD
     diverged at its first step. The posterior gradient per item has the
     right relative scales, and the batch is the full data. */
  if (g_bar && model->local_params)
    for (int j = 0; j < d; j++) g_bar[j] = g[j] / (double) model->n;
}

void batch_gradient(const sgld_batch *b, const double *w, double *g, double *g_bar,
                    const sgld_noise *noise) {
  estimate_gradient(b->e, w, b->idx, g, g_bar, b->tmp, b->work, noise);
  if (b->clip_type != CLIP_NONE)
    *b->clip_count += clip_gradient(g, b->e->model->d, b->clip_type, b->clip_threshold);
}

/* the samplers' estimator: g_hat(w) itself */
static void minibatch_estimate(const sgld_batch *b, const double *theta, double *g,
                               double *g_bar, const sgld_noise *noise, double *state, int d,
                               const void *opts) {
  (void) state; (void) d; (void) opts;
  batch_gradient(b, theta, g, g_bar, noise);
}

const sgld_gradient gradient_minibatch = {.name = "minibatch", .estimate = minibatch_estimate};

/* ------------------------------------------------- estimators by name -- */

static const sgld_gradient *const gradient_table[] = {
  &gradient_minibatch, &gradient_vi_meanfield, &gradient_vi_fullrank,
};
#define N_GRADIENTS ((int) (sizeof gradient_table / sizeof *gradient_table))

const sgld_gradient *find_gradient(const char *name) {
  for (int i = 0; i < N_GRADIENTS; i++)
    if (strcmp(name, gradient_table[i]->name) == 0) return gradient_table[i];
  error("internal: unknown gradient estimator '%s'", name);
  return NULL; /* not reached */
}

const void *gradient_build_opts(const sgld_gradient *g, SEXP opts, const sgld_model *model) {
  if (!g->build) return NULL;
  if (TYPEOF(opts) != VECSXP)
    error("internal: the options of gradient estimator '%s' must be a list", g->name);
  return g->build(opts, model);
}

size_t gradient_extra_length(const sgld_gradient *g, int d, const void *opts) {
  return g->extra_length ? g->extra_length(d, opts) : 0;
}

size_t gradient_state_length(const sgld_gradient *g, int d, const void *opts) {
  return g->state_length ? g->state_length(d, opts) : 0;
}

size_t gradient_scratch_length(const sgld_gradient *g, int d, const void *opts) {
  return g->scratch_length ? g->scratch_length(d, opts) : 0;
}

/* The likelihood gradient over all items, added into g, in chunks of items:
   the indices take 512 kB whatever n, where one index per item would take
   200 MB at n = 2.5e7 (a model on a file-backed matrix; bench/large-data.R
   measured the process's anonymous memory at 297 MB with one per item). */
void full_grad_loglik(const sgld_model *model, const double *w, double *g, double *work) {
  const int chunk_len = model->n < 65536 ? (int) model->n : 65536;
  R_xlen_t *chunk = (R_xlen_t *) R_alloc(chunk_len, sizeof(R_xlen_t));
  for (R_xlen_t start = 0; start < model->n; start += chunk_len) {
    R_xlen_t len = model->n - start < chunk_len ? model->n - start : chunk_len;
    for (R_xlen_t k = 0; k < len; k++) chunk[k] = start + k;
    model->grad_loglik(model->data, w, chunk, (int) len, g, work);
  }
}

const double *cv_gradient(const sgld_model *model, const double *mode) {
  double *work = (double *) R_alloc(model->work_size + 1, sizeof(double));
  double *G = (double *) R_alloc(model->d, sizeof(double));
  for (int j = 0; j < model->d; j++) G[j] = 0.0;
  full_grad_loglik(model, mode, G, work);
  /* a model that failed reports why itself, through the driver */
  if (model->failed && model->failed(model->data) != MODEL_OK) return G;
  for (int j = 0; j < model->d; j++)
    if (!R_FINITE(G[j])) error("the likelihood gradient at the control-variate mode is not finite");
  return G;
}

/* The model's per-item store at the control variates' mode (sgld.h:
   cv_fill), or NULL where the model has none or it would be large: 2^24
   doubles (128 MB) at most, beyond which the two evaluations per item cost
   less than the memory */
#define CV_STORE_MAX 16777216.0
const double *cv_store(const sgld_model *model, const double *mode) {
  if (!model->cv_fill || !model->grad_loglik_diff || model->cv_width < 1 ||
      (double) model->n * model->cv_width > CV_STORE_MAX)
    return NULL;
  double *store = (double *) R_alloc((size_t) model->n * (size_t) model->cv_width,
                                     sizeof(double));
  model->cv_fill(model->data, mode, store);
  return store;
}

/* settings$times independent estimates g_hat(w) at w = settings$w, with
   batches of settings$batch_size, one per row; settings$cv_mode is NULL or a
   mode for control variates */
SEXP sgld_gradient_draws(SEXP model_spec, SEXP settings) {
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  const double *w = list_doubles(settings, "w", d);
  const int m = list_int(settings, "batch_size");
  const int times = list_int(settings, "times");
  const int replace = list_int(settings, "replace");
  if (m < 1 || m > model.n || times < 1) error("internal: bad batch size or count");
  sgld_estimator e = {&model, m, NULL, NULL, 1, 1, NULL};
  estimator_split(&e, 1);      /* the same pieces as a run's, so the same numbers */
  double *work = (double *) R_alloc(estimator_work_length(&e) + 1, sizeof(double));
  double *tmp = (double *) R_alloc(d, sizeof(double));
  if (list_elt(settings, "cv_mode") != R_NilValue) {
    e.cv_mode = list_doubles(settings, "cv_mode", d);
    e.cv_grad = cv_gradient(&model, e.cv_mode);
    e.cv_store = cv_store(&model, e.cv_mode);
  }
  sgld_minibatch mb;
  minibatch_init(&mb, model.n, m, replace, R_alloc(minibatch_bytes(model.n, m, replace) + 1, 1));
  R_xlen_t *idx = (R_xlen_t *) R_alloc(m, sizeof(R_xlen_t));
  double *g = (double *) R_alloc(d, sizeof(double));
  sgld_rng rng;
  rng_seed_from_r(&rng);
  SEXP out = PROTECT(allocMatrix(REALSXP, times, d));
  double *o = REAL(out);
  for (int k = 0; k < times; k++) {
    const R_xlen_t *batch = minibatch_draw(&mb, &rng, idx);
    estimate_gradient(&e, w, batch, g, NULL, tmp, work, NULL);
    for (int j = 0; j < d; j++) o[k + (R_xlen_t) j * times] = g[j];
  }
  UNPROTECT(1);
  return out;
}
