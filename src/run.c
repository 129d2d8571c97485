/*
 * The entry point of every run: unpack R's settings into plain C, allocate
 * the outputs and each chain's scratch before any thread starts, seed the
 * chains' random streams, hand over to run_chains() (chunks.c), and return
 * the outputs. The loop over iterations is in chain.c; nothing below this
 * file's entry point sees an R object.
 *
 * A run's state per chain (parameters, the update rule's state, its random
 * streams, its iteration count) is returned whole, so a run can be continued
 * and give the same draws as one long run.
 */
#include <string.h>
#include <sys/stat.h>
#include <R.h>
#include "run.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------- settings -- */

static R_xlen_t setting_count(SEXP settings, const char *name, double lo) {
  double v = list_real(settings, name);
  if (!R_FINITE(v) || v < lo || v != floor(v) || v > 4503599627370496.0)
    error("internal: setting '%s' must be a whole number >= %g", name, lo);
  return (R_xlen_t) v;
}

/* burn-in, thinning, diagnostics and monitor: what is kept and recorded */
static void read_collection(SEXP settings, run_settings *s) {
  s->burnin = setting_count(settings, "burnin", 0);
  s->thin = setting_count(settings, "thin", 1);
  s->capacity = setting_count(settings, "capacity", 0);
  s->burnin_mode = list_code(settings, "burnin_mode", CODES_BURNIN);
  s->thin_mode = list_code(settings, "thin_mode", CODES_THIN);
  s->alpha0 = list_real(settings, "alpha0");
  s->distance = list_real(settings, "distance");
  s->diag_every = setting_count(settings, "diag_every", 0);
  s->n_diag = s->diag_every > 0 ? s->iter / s->diag_every : 0;
  s->diag_sample = setting_count(settings, "diag_sample", 1);
  s->monitor_every = setting_count(settings, "monitor_every", 0);
  s->n_monitor = s->monitor_every > 0 ? s->iter / s->monitor_every : 0;
  if (s->burnin >= s->iter) error("internal: burnin must be below iter");
  if (s->burnin_mode == BURNIN_THRESHOLD && s->diag_every == 0)
    error("internal: a threshold burn-in needs diagnostics");
  if (s->thin_mode == THIN_DISTANCE && !(s->distance > 0))
    error("internal: the mixing distance must be positive");
}

/* `pars`: the parameters whose draws are stored, and the scale of each
   parameter's running moments */
static void read_kept_parameters(SEXP settings, run_settings *s, int d) {
  SEXP keep = list_elt(settings, "keep");
  s->keep = NULL;
  s->n_keep = d;
  if (keep != R_NilValue) {
    if (TYPEOF(keep) != INTSXP || XLENGTH(keep) > d)
      error("internal: 'keep' must be an integer vector of at most d indices");
    int *k = (int *) R_alloc(XLENGTH(keep) + 1, sizeof(int));
    for (R_xlen_t i = 0; i < XLENGTH(keep); i++) {
      if (INTEGER(keep)[i] < 1 || INTEGER(keep)[i] > d) error("internal: 'keep' out of range");
      k[i] = INTEGER(keep)[i] - 1;
    }
    s->keep = k;
    s->n_keep = (int) XLENGTH(keep);
  }
  s->moment_scale = list_codes(settings, "moment_scale", d, CODES_MOMENT_SCALE);
  /* every parameter on its own scale: no table (moments.c's loop then vectorises) */
  int identity = 1;
  for (int j = 0; j < d; j++) identity &= s->moment_scale[j] == MOMENT_IDENTITY;
  if (identity) s->moment_scale = NULL;
}

/* each chain's start, the rule's state to continue from, and the chains' order */
static void read_starts(SEXP settings, run_settings *s, int d, size_t state_len) {
  const int chains = s->chains;
  s->init = list_doubles(settings, "init", (R_xlen_t) d * chains);
  s->t_offset = list_doubles(settings, "t_offset", chains);
  s->state_init = list_elt(settings, "state_init") == R_NilValue
                    ? NULL : list_doubles(settings, "state_init", (R_xlen_t) state_len * chains);
  SEXP order = list_elt(settings, "order");
  if (TYPEOF(order) != INTSXP || XLENGTH(order) != chains)
    error("internal: 'order' must be an integer vector with one entry per chain");
  int *o = (int *) R_alloc(chains, sizeof(int));
  for (int k = 0; k < chains; k++) {
    if (INTEGER(order)[k] < 1 || INTEGER(order)[k] > chains) error("internal: 'order' out of range");
    o[k] = INTEGER(order)[k] - 1;
  }
  s->order = o;
}

/* A chain run as a future stops once its session creates the stop file, or
   once the session's directory of it has gone (the session ended: its
   workers must not run on). A worker that does not see that directory when
   the run begins (another machine) watches neither. */
static void read_stop_file(SEXP settings, run_settings *s) {
  SEXP file = list_elt(settings, "stop_file");
  s->stop_file = s->stop_dir = NULL;
  s->stop_dir_seen = 0;
  if (file == R_NilValue) return;
  if (TYPEOF(file) != STRSXP || XLENGTH(file) != 2 || STRING_ELT(file, 0) == NA_STRING ||
      STRING_ELT(file, 1) == NA_STRING)
    error("internal: 'stop_file' must be NULL or a path and its directory");
  s->stop_file = CHAR(STRING_ELT(file, 0));
  s->stop_dir = CHAR(STRING_ELT(file, 1));
  struct stat st;
  s->stop_dir_seen = stat(s->stop_dir, &st) == 0;
}

/* the coordinate updates (coordinate.c), if any: settings$coordinates is
   NULL or list(index (0-based), start, rows (0-based), width) */
static void read_coordinates(SEXP settings, run_settings *s, const sgld_model *model) {
  s->n_coord = 0;
  s->coord = NULL;
  s->coord_start = s->coord_rows = NULL;
  s->coord_width = NULL;
  SEXP spec = list_optional(settings, "coordinates");
  if (spec == R_NilValue) return;
  if (!model->logpost_coordinate) error("internal: this model has no coordinate updates");
  if (s->mala) error("internal: coordinate updates go with unadjusted steps");
  SEXP index = list_elt(spec, "index");
  if (TYPEOF(index) != INTSXP || XLENGTH(index) < 1 || XLENGTH(index) > model->d)
    error("internal: 'coordinates$index' must be 1 to d integers");
  const int k = (int) XLENGTH(index);
  const double *start = list_doubles(spec, "start", k + 1);
  const double *width = list_doubles(spec, "width", k);
  SEXP rows_x = list_elt(spec, "rows");
  if (TYPEOF(rows_x) != REALSXP || start[0] != 0 || start[k] != (double) XLENGTH(rows_x))
    error("internal: 'coordinates$rows' must hold start[k + 1] row numbers");
  const double *rows = REAL(rows_x);
  R_xlen_t *st = (R_xlen_t *) R_alloc(k + 1, sizeof(R_xlen_t));
  R_xlen_t *rw = (R_xlen_t *) R_alloc(XLENGTH(rows_x) + 1, sizeof(R_xlen_t));
  for (int q = 0; q < k; q++) {
    const int j = INTEGER(index)[q];
    if (j < 0 || j >= model->d) error("internal: 'coordinates$index' out of range");
    if (!(start[q] <= start[q + 1])) error("internal: 'coordinates$start' must not decrease");
    if (!(width[q] > 0) || !isfinite(width[q]))
      error("internal: 'coordinates$width' must be positive");
    st[q] = (R_xlen_t) start[q];
  }
  st[k] = (R_xlen_t) start[k];
  for (R_xlen_t i = 0; i < XLENGTH(rows_x); i++) {
    if (!(rows[i] >= 0 && rows[i] < (double) model->n) || rows[i] != floor(rows[i]))
      error("internal: 'coordinates$rows' out of range");
    rw[i] = (R_xlen_t) rows[i];
  }
  s->n_coord = k;
  s->coord = INTEGER(index);
  s->coord_start = st;
  s->coord_rows = rw;
  s->coord_width = width;
}

/* Leapfrog trajectories in place of MALA's single step (settings$leapfrog,
   the mean number of steps; 1 or absent: MALA). Their metric is the rule's
   fixed preconditioner, whose factor is taken once here: only the plain
   rule (the identity) and a fixed matrix or diagonal have one that does not
   move with w. */
static void read_leapfrog(SEXP settings, run_settings *s, const sgld_model *model,
                          const sgld_update *rule) {
  s->leapfrog = 1;
  s->metric = NULL;
  if (list_optional(settings, "leapfrog") == R_NilValue) return;
  s->leapfrog = list_int(settings, "leapfrog");
  if (s->leapfrog < 1 || s->leapfrog > 10000)
    error("internal: 'leapfrog' must be 1 to 10000 steps");
  if (s->leapfrog == 1) return;
  if (!s->mala) error("internal: leapfrog trajectories go with mala");
  if (rule == &update_sgld) return;
  if (rule != &update_precond || s->p != model->d)
    error("internal: leapfrog trajectories need a fixed preconditioner");
  const int d = model->d;
  double *T = (double *) R_alloc((size_t) d * d, sizeof(double));
  double *buf = (double *) R_alloc(update_scratch_length(rule, d) + 1, sizeof(double));
  rule->precond_factor(s->init, buf, T, buf, d, s->opts);
  s->metric = T;
}

static run_settings read_settings(SEXP settings, const sgld_model *model,
                                  const sgld_update *rule, const sgld_gradient *grad) {
  run_settings s;
  memset(&s, 0, sizeof s);
  const int d = model->d;
  s.iter = setting_count(settings, "iter", 1);
  s.chains = (int) setting_count(settings, "chains", 1);
  s.m = (int) setting_count(settings, "batch_size", 1);
  s.replace = list_int(settings, "replace");
  s.tau = list_real(settings, "temperature");
  s.schedule = schedule_build(list_elt(settings, "schedule"));
  s.clip_type = list_code(settings, "clip_type", CODES_CLIP);
  s.clip_threshold = list_real(settings, "clip_threshold");
  s.threads = (int) setting_count(settings, "threads", 1);
  s.progress = list_int(settings, "progress");
  s.long_run_seconds = list_real(settings, "long_run_seconds");
  s.mala = list_int(settings, "mala");
  read_collection(settings, &s);
  s.grad_opts = gradient_build_opts(grad, list_elt(settings, "gradient_opts"), model);
  const size_t extra = gradient_extra_length(grad, d, s.grad_opts);
  if (extra > (size_t) (INT_MAX / 4) - (size_t) d) error("internal: too many parameters to move");
  s.p = d + (int) extra;
  /* the rule moves theta: w and the estimator's extra parameters */
  s.opts = update_build_opts(rule, list_elt(settings, "update_opts"), s.p, model);
  s.rule_state = update_state_length(rule, s.p);
  s.grad_state = gradient_state_length(grad, d, s.grad_opts);
  if (s.grad_state < extra) error("internal: the estimator's state must hold its parameters");
  read_kept_parameters(settings, &s, d);
  read_starts(settings, &s, d, s.rule_state + s.grad_state);
  read_stop_file(settings, &s);
  read_coordinates(settings, &s, model);
  if (s.m > model->n) error("internal: batch_size exceeds the number of data items");
  if (s.mala && s.m != model->n) error("internal: mala needs the full data in every step");
  if (!(s.tau >= 0)) error("internal: temperature must be >= 0");
  if (s.mala && !update_is_proposal(rule, d))
    error("internal: this update rule cannot be a Metropolis-Hastings proposal");
  /* the diagnostics and MALA judge a sampler's step from w with g_hat(w):
     meaningless for an estimator of another gradient */
  if (grad != &gradient_minibatch && (s.diag_every > 0 || s.mala))
    error("internal: diagnostics and mala need the minibatch gradient estimator");
  if (rule->needs_g_bar && s.p != d)
    error("internal: a rule that reads g_bar cannot move an estimator's extra parameters");
  read_leapfrog(settings, &s, model, rule);
  if (list_elt(settings, "cv_mode") != R_NilValue) {
    if (s.mala) error("internal: mala uses the full data, not control variates");
    s.cv_mode = list_doubles(settings, "cv_mode", d);
  }
  return s;
}

/* held-out data for the monitor, if any, and the monitor's columns */
static void read_test_model(SEXP settings, run_settings *s, const sgld_model *model,
                            sgld_model *test) {
  SEXP test_spec = list_elt(settings, "test");
  if (test_spec != R_NilValue) {
    *test = find_model(test_spec);
    /* the test set's metrics run in the chain's work buffer */
    if (test->d != model->d || !test->metrics || test->work_size > model->work_size)
      error("internal: the held-out data do not fit the model");
    s->test = test;
  }
  /* iteration, log joint per datum, then the test metrics */
  s->n_monitor_cols = 2 + (s->test ? s->test->n_metrics : 0);
}

/* the items 0..n-1, for full-data evaluations (mala, diagnostics) */
static void full_data_items(run_settings *s, const sgld_model *model) {
  if (!s->mala && s->diag_every == 0) return;
  if (model->n > INT_MAX) error("internal: full-data evaluations need n <= %d", INT_MAX);
  R_xlen_t *all = (R_xlen_t *) R_alloc(model->n, sizeof(R_xlen_t));
  for (R_xlen_t i = 0; i < model->n; i++) all[i] = i;
  s->all_idx = all;
  if (s->diag_sample > model->n) s->diag_sample = model->n;
}

/* ------------------------------------------------- chains' memory -- */

static void *scratch(size_t count, size_t size) {
  return R_alloc(count + 1, size);   /* + 1: R_alloc of 0 bytes gives NULL */
}

static void alloc_scratch(chain_scratch *sc, const run_settings *s, const sgld_model *model,
                          const sgld_update *rule, const sgld_gradient *grad,
                          const sgld_estimator *estimator) {
  const int d = model->d;
  sc->w = scratch(s->p, sizeof(double));
  sc->w_prev = scratch(s->p, sizeof(double));
  sc->g = scratch(s->p, sizeof(double));
  sc->g_bar = scratch(d, sizeof(double));
  sc->w_new = scratch(d, sizeof(double));
  sc->g_new = scratch(d, sizeof(double));
  sc->diag_buf = s->diag_every > 0 ? scratch(diagnostics_scratch_length(d), sizeof(double)) : NULL;
  /* the step's normals are drawn during the gradient where the batch is
     split (gradient.c: one chain on several threads, or the same pieces on
     one) by a rule that can take them ready-drawn */
  sc->noise = rule->step_drawn && !s->mala && s->p == d && s->tau > 0 &&
                estimator->blocks > 1 ? scratch(d, sizeof(double)) : NULL;
  sc->momentum = s->leapfrog > 1 ? scratch(d, sizeof(double)) : NULL;
  sc->diag_idx = s->diag_every > 0 && s->diag_sample < model->n
                   ? scratch(s->diag_sample, sizeof(R_xlen_t)) : NULL;
  sc->state = scratch(s->rule_state + update_scratch_length(rule, s->p), sizeof(double));
  sc->grad_state = scratch(s->grad_state + gradient_scratch_length(grad, d, s->grad_opts),
                           sizeof(double));
  sc->work = scratch(estimator_work_length(estimator), sizeof(double));   /* >= model->work_size */
  sc->idx = scratch(s->m, sizeof(R_xlen_t));
  sc->batch_memory = s->mala ? NULL : scratch(minibatch_bytes(model->n, s->m, s->replace), 1);
}

/* Chain c's streams: the base stream jumped c times, and for its diagnostics
   jumped chains + c times; a continued run takes the streams where they
   stopped. */
static void seed_streams(chain *ch, int chains, SEXP rng_init) {
  if (rng_init != R_NilValue) {
    if (TYPEOF(rng_init) != RAWSXP ||
        XLENGTH(rng_init) != 2 * chains * (R_xlen_t) sizeof(sgld_rng))
      error("internal: 'rng_init' must hold two streams per chain");
    for (int c = 0; c < chains; c++) {
      rng_restore(&ch[c].rng, RAW(rng_init) + c * sizeof(sgld_rng), "a chain's random stream");
      rng_restore(&ch[c].diag_rng, RAW(rng_init) + (chains + c) * sizeof(sgld_rng),
                  "a chain's diagnostics stream");
    }
    return;
  }
  sgld_rng *r = (sgld_rng *) R_alloc(2 * (size_t) chains, sizeof(sgld_rng));
  rng_seed_streams(r, 2 * chains);
  for (int c = 0; c < chains; c++) {
    ch[c].rng = r[c];
    ch[c].diag_rng = r[chains + c];
  }
}

/* every chain before its first iteration: its views into the outputs, its
   scratch, its start and the rule's state there */
static chain *setup_chains(SEXP out, const run_settings *s, const sgld_model *model,
                           const sgld_update *rule, const sgld_gradient *grad,
                           const sgld_estimator *estimator) {
  const int d = model->d, chains = s->chains;
  const size_t state_len = s->rule_state + s->grad_state;
  chain *ch = (chain *) R_alloc(chains, sizeof(chain));
  for (int c = 0; c < chains; c++) {
    memset(&ch[c], 0, sizeof ch[c]);
    ch[c].id = c;
    ch[c].res.status = STATUS_NOT_RUN;
    ch[c].out = chain_views(out, s, c, d, state_len);
    alloc_scratch(&ch[c].sc, s, model, rule, grad, estimator);
    moments_reset(&ch[c].out, &ch[c].res, d);
    /* each chain's start, which a chain that never runs also returns */
    memcpy(ch[c].out.last, s->init + (R_xlen_t) c * d, d * sizeof(double));
    if (s->state_init) {
      memcpy(ch[c].out.state, s->state_init + c * state_len, state_len * sizeof(double));
      continue;
    }
    /* the estimator's state first: the rule starts from theta, whose extra
       parameters it holds */
    double *grad_state = ch[c].out.state + s->rule_state;
    for (size_t k = 0; k < s->grad_state; k++) grad_state[k] = 0.0;
    if (grad->init) grad->init(grad_state, d, s->grad_opts);
    double *theta = ch[c].sc.w;
    memcpy(theta, ch[c].out.last, d * sizeof(double));
    memcpy(theta + d, grad_state, (size_t) (s->p - d) * sizeof(double));
    rule->init(ch[c].out.state, theta, s->p, s->opts);
  }
  return ch;
}

/* ---------------------------------------------------- entry point -- */

/* How many threads may share each chain's minibatch gradient: those the
   chains leave idle, but no more than the processors hold beside the
   chains that run at once. Threads that share a gradient meet at every
   iteration, and one without a core of its own makes the others wait: one
   chain with threads = 4 on 2 cores (d = 2000, batch 100) ran as on one
   thread, the driver's probes finding 4 threads slower. */
static int gradient_threads(const run_settings *s) {
  int inner = s->chains < s->threads ? s->threads / s->chains : 1;
#ifdef _OPENMP
  const int at_once = s->chains < s->threads ? s->chains : s->threads;
  const int spare = omp_get_num_procs() / at_once;
  if (inner > spare) inner = spare > 1 ? spare : 1;
#endif
  return inner;
}

SEXP sgld_run(SEXP model_spec, SEXP settings) {
  sgld_rows_lost = 0;   /* a copy's file shortened from here on stops the run (mmap.c) */
  sgld_model model = find_model(model_spec), test;
  const sgld_update *rule = find_update(CHAR(asChar(list_elt(settings, "update"))));
  const sgld_gradient *grad = find_gradient(CHAR(asChar(list_elt(settings, "gradient"))));
  run_settings s = read_settings(settings, &model, rule, grad);
  read_test_model(settings, &s, &model, &test);
  full_data_items(&s, &model);
  if (s.cv_mode) s.cv_grad = cv_gradient(&model, s.cv_mode);

  sgld_estimator estimator = {&model, s.m, s.cv_mode, s.cv_grad, 1, 1,
                              s.cv_mode ? cv_store(&model, s.cv_mode) : NULL};
  estimator_split(&estimator, gradient_threads(&s));
  SEXP out = PROTECT(alloc_outputs(&s, model.d, s.rule_state + s.grad_state));
  chain *chains = setup_chains(out, &s, &model, rule, grad, &estimator);
  seed_streams(chains, s.chains, list_elt(settings, "rng_init"));
  const run_context ctx = {&model, rule, grad, &s, estimator};
  write_results(out, chains, s.chains, run_chains(&ctx, chains));
  UNPROTECT(1);
  return out;
}
