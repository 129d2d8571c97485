/*
 * The driver: the package's only loop over iterations.
 *
 * For each chain and iteration: draw a minibatch, form the gradient estimate
 * (gradient.c: plain or with control variates), clip it if asked, let the update rule move the state, stop at the first non-finite
 * value, and keep the state if the collection policy says so (burn-in by count
 * or by the sampling threshold; thinning by count or by summed learning rate).
 * MALA is the same loop with the full data and a Metropolis-Hastings accept
 * step in place of the update rule. Everything is allocated before the loop;
 * a divergence or a user interrupt ends the run early but keeps every draw made
 * so far. The state of a chain (parameters, the update rule's state, its
 * random streams, its iteration count) is returned whole, so a run can be
 * continued and give the same draws as one long run.
 *
 * Chains run in OpenMP threads when asked. Each chain owns its random stream,
 * scratch memory and output, so its draws are the same bits whichever thread
 * runs it and in whatever order. Inside the parallel region only the calling
 * thread touches R, and only to poll for an interrupt through R_ToplevelExec,
 * which cannot jump out of the region; the other threads see a flag.
 */
#include <string.h>
#include <R.h>
#include "sgld.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------- settings -- */

typedef struct run_settings {
  R_xlen_t iter, burnin, thin, capacity;  /* capacity: rows of output per chain */
  int chains, m, replace;
  double tau;
  sgld_schedule schedule;
  int clip_type;
  double clip_threshold;
  R_xlen_t check_every;        /* iterations between interrupt checks */
  int threads;
  R_xlen_t monitor_every;      /* 0: no monitor */
  R_xlen_t n_monitor;          /* evaluations per chain */
  const sgld_model *test;      /* held-out data for the monitor, or NULL */
  int burnin_mode, thin_mode;
  double alpha0, distance;     /* threshold on alpha; summed eta between kept draws */
  R_xlen_t diag_every;         /* 0: no diagnostics */
  R_xlen_t n_diag;
  R_xlen_t diag_sample;        /* items for the score covariance */
  int mala;                    /* Metropolis-Hastings accept step, full data */
  const void *opts;            /* the update rule's own settings (its build()) */
  const double *cv_mode, *cv_grad;  /* control variates: a mode and the full gradient there */
  const double *t_offset;      /* per chain: iterations already run (continued runs) */
  const R_xlen_t *all_idx;     /* 0..n-1, for full-data evaluations */
} run_settings;

/* what one chain leaves behind, besides its draws */
typedef struct chain_result {
  R_xlen_t kept;
  double stop_iter;            /* iteration at which the chain stopped early, or 0 */
  int status;
  double clip_count;
  R_xlen_t monitored;          /* monitor rows written */
  R_xlen_t diagnosed;          /* diagnostic rows written */
  double accepted;             /* mala: accepted proposals */
  double collect_from;         /* first iteration eligible for keeping, 0 if never */
} chain_result;

/* per-chain memory, allocated before the loop */
typedef struct chain_scratch {
  double *w, *w_prev, *g, *g_bar, *state, *work;
  double *w_new, *g_new, *diag_buf;
  R_xlen_t *idx, *diag_idx;
  void *batch_memory;
} chain_scratch;

/* where one chain writes */
typedef struct chain_output {
  double *draws, *eta, *iteration, *last, *monitor, *diag, *state;
} chain_output;

/* C99's isfinite, inlined (R_FINITE may be a call into libR) */
static int all_finite(const double *x, int d) {
  for (int j = 0; j < d; j++)
    if (!isfinite(x[j])) return 0;
  return 1;
}

static void check_interrupt_fn(void *unused) {
  (void) unused;
  R_CheckUserInterrupt();
}

/* R_ToplevelExec catches the interrupt's long jump, so the run can stop
   cleanly and return what it has instead of losing it. */
static int user_interrupted(void) {
  return R_ToplevelExec(check_interrupt_fn, NULL) == FALSE;
}

static int on_main_thread(void) {
#ifdef _OPENMP
  return omp_get_thread_num() == 0;
#else
  return 1;
#endif
}

/* Has the model given up (a function written in R failed or was
   interrupted)? If so the chain stops at iteration t_abs and so does the run.
   `completed` says whether iteration t_abs had finished: an interrupted chain
   records the last finished iteration, as a continued run starts after it. */
static int model_stopped(const sgld_model *model, chain_result *res, double t_abs,
                         int completed, volatile int *stop_all) {
  if (!model->failed) return 0;
  const int why = model->failed(model->data);
  if (why == MODEL_OK) return 0;
  res->status = why == MODEL_INTERRUPTED ? STATUS_INTERRUPTED : STATUS_MODEL_FAILED;
  res->stop_iter = why == MODEL_INTERRUPTED && !completed ? t_abs - 1 : t_abs;
  *stop_all = 1;
  return 1;
}

/* ---------------------------------------------------- diagnostics -- */

/* one row of diagnostics at state w (see diagnostics.c); returns alpha */
static double diagnose(const sgld_model *model, const sgld_update *rule, const run_settings *s,
                       const double *w, double eta, sgld_rng *diag_rng, chain_scratch *sc,
                       double *row, double t) {
  const int d = model->d;
  const R_xlen_t *items = s->all_idx;
  R_xlen_t count = model->n;
  if (s->diag_sample < model->n) {     /* a random subset for large data */
    for (R_xlen_t k = 0; k < s->diag_sample; k++)
      sc->diag_idx[k] = (R_xlen_t) rng_below(diag_rng, (uint64_t) model->n);
    items = sc->diag_idx;
    count = s->diag_sample;
  }
  const size_t state_len = update_state_length(rule, d);
  double *T = NULL;
  if (rule->precond_factor) {
    T = diagnostics_factor_slot(sc->diag_buf, d);
    rule->precond_factor(w, sc->state, T, sc->state + state_len, d, s->opts);
  }
  const double n = (double) model->n;
  const double lambda = score_lambda_max(model, w, items, count, T, sc->diag_buf, sc->work);
  const double var_grad = eta * eta * n * n * lambda / s->m;
  const double var_inj = 2.0 * eta * s->tau;
  const double alpha = eta * n * n * lambda / (2.0 * s->m);

  /* rejection probability of the full-data proposal from w */
  const void *proposal_opts = s->opts;
  const sgld_update *proposal = diagnostic_proposal(rule, d, &proposal_opts);
  double *g = sc->diag_buf, *g_new = sc->diag_buf + d;   /* reuse: V no longer needed */
  const double U = full_log_post(model, w, g, s->all_idx, sc->work);
  const double tau = s->tau > 0 ? s->tau : 1.0;
  mh_propose(proposal, w, g, eta, tau, sc->state, diag_rng, sc->w_new, d, proposal_opts);
  const double U_new = full_log_post(model, sc->w_new, g_new, s->all_idx, sc->work);
  double rejection = 1.0;
  if (isfinite(U_new)) {
    const double lr = mh_log_ratio(proposal, w, U, g, sc->w_new, U_new, g_new, eta, tau,
                                   sc->state, d, proposal_opts);
    rejection = lr >= 0 ? 0.0 : 1.0 - exp(lr);
  }
  row[DIAG_ITERATION] = t; row[DIAG_ETA] = eta; row[DIAG_ALPHA] = alpha;
  row[DIAG_VAR_INJECTED] = var_inj; row[DIAG_VAR_GRADIENT] = var_grad;
  row[DIAG_REJECTION] = rejection;
  return alpha;
}

/* ------------------------------------------------------ one chain -- */

/* Chain c starts from the parameters and update state found in its output
   (out->last, out->state) and leaves its final ones there; its random streams
   are advanced in place. */
static void run_chain(const sgld_model *model, const sgld_update *rule, const run_settings *s,
                      int c, sgld_rng *rng_, sgld_rng *diag_rng_, chain_scratch *sc,
                      const chain_output *out, chain_result *res, volatile int *stop_all) {
  const int d = model->d, m = s->m;
  const size_t state_len = update_state_length(rule, d);
  const sgld_estimator estimator = {model, m, s->cv_mode, s->cv_grad};
  const double t0 = s->t_offset[c];
  double *w = sc->w, *g = sc->g, *g_bar = rule->needs_g_bar ? sc->g_bar : NULL;
  sgld_rng rng = *rng_, diag_rng = *diag_rng_;   /* local copies stay in registers */
  sgld_minibatch mb;
  double U = 0.0;                      /* mala: log posterior at w, with g its gradient */

  memcpy(w, out->last, d * sizeof(double));
  memcpy(sc->state, out->state, state_len * sizeof(double));
  if (!s->mala) minibatch_init(&mb, model->n, m, s->replace, sc->batch_memory);
  memset(res, 0, sizeof *res);
  res->status = STATUS_DONE;
  if (s->mala) U = full_log_post(model, w, g, s->all_idx, sc->work);
  if (model_stopped(model, res, t0, 1, stop_all)) {
    memcpy(out->state, sc->state, state_len * sizeof(double));
    return;
  }

  /* collection: eligible from iteration collect_from (burn-in), then thinned */
  int collecting = s->burnin_mode == BURNIN_COUNT && s->burnin == 0;
  if (collecting) res->collect_from = t0 + 1;
  R_xlen_t since_kept = 0;
  double eta_since_kept = 0.0;

  /* monitor rows: iteration, log joint per datum, then the test metrics */
  const int n_cols = 2 + (s->test ? s->test->n_metrics : 0);
  R_xlen_t next_monitor = s->monitor_every > 0 ? s->monitor_every : -1;
  R_xlen_t next_diag = s->diag_every > 0 ? s->diag_every : -1;
  R_xlen_t next_check = s->check_every;
  const int lr_fixed = s->schedule.type == SCHEDULE_CONSTANT;

  /* t counts this run's iterations; t_abs = t0 + t the chain's, which the
     schedule and every recorded iteration use */
  for (R_xlen_t t = 1; t <= s->iter; t++) {
    const double t_abs = t0 + (double) t;
    const double eta = lr_fixed ? s->schedule.a : schedule_eta(&s->schedule, t_abs);

    if (!s->mala) {
      const R_xlen_t *idx = minibatch_draw(&mb, &rng, sc->idx);
      estimate_gradient(&estimator, w, idx, g, g_bar, sc->g_new, sc->work);
      if (s->clip_type != CLIP_NONE)
        res->clip_count += clip_gradient(g, d, s->clip_type, s->clip_threshold);
      if (model_stopped(model, res, t_abs, 0, stop_all)) break;
    }
    if (!all_finite(g, d)) {
      res->status = STATUS_NONFINITE_GRADIENT;
      res->stop_iter = t_abs;
      break;
    }

    if (t == next_diag) {
      double *row = out->diag + (R_xlen_t) res->diagnosed * DIAG_COLS;
      const double alpha = diagnose(model, rule, s, w, eta, &diag_rng, sc, row, t_abs);
      if (model_stopped(model, res, t_abs, 0, stop_all)) break;
      res->diagnosed++;
      next_diag += s->diag_every;
      if (!collecting && s->burnin_mode == BURNIN_THRESHOLD && alpha <= s->alpha0) {
        collecting = 1;
        res->collect_from = t_abs;
      }
    }

    memcpy(sc->w_prev, w, d * sizeof(double));
    if (s->mala) {
      mh_propose(rule, w, g, eta, s->tau, sc->state, &rng, sc->w_new, d, s->opts);
      const double U_new = full_log_post(model, sc->w_new, sc->g_new, s->all_idx, sc->work);
      if (model_stopped(model, res, t_abs, 0, stop_all)) break;
      const double log_u = log(rng_unif(&rng));
      if (isfinite(U_new) && all_finite(sc->g_new, d) &&
          log_u < mh_log_ratio(rule, w, U, g, sc->w_new, U_new, sc->g_new, eta, s->tau,
                               sc->state, d, s->opts)) {
        memcpy(w, sc->w_new, d * sizeof(double));
        memcpy(g, sc->g_new, d * sizeof(double));
        U = U_new;
        res->accepted++;
      }
    } else {
      rule->step(w, g, g_bar, eta, s->tau, sc->state, &rng, d, s->opts);
    }
    if (!all_finite(w, d) || (model->in_domain && !model->in_domain(model->data, w))) {
      memcpy(w, sc->w_prev, d * sizeof(double));   /* leave the last finite state */
      res->status = STATUS_NONFINITE_PARAMETER;
      res->stop_iter = t_abs;
      break;
    }

    if (!collecting && s->burnin_mode == BURNIN_COUNT && t == s->burnin) {
      collecting = 1;
      res->collect_from = t_abs + 1;
    } else if (collecting) {
      int keep;
      if (s->thin_mode == THIN_COUNT) {
        keep = ++since_kept == s->thin;
      } else {
        eta_since_kept += eta;
        keep = eta_since_kept >= s->distance;
      }
      if (keep && res->kept < s->capacity) {
        for (int j = 0; j < d; j++) out->draws[res->kept + j * s->capacity] = w[j];
        out->eta[res->kept] = eta;
        out->iteration[res->kept] = t_abs;
        res->kept++;
        since_kept = 0;
        eta_since_kept = 0.0;
      }
    }

    if (t == next_monitor) {
      double *row = out->monitor + (R_xlen_t) res->monitored * n_cols;
      row[0] = t_abs;
      row[1] = (model->loglik(model->data, w, NULL, model->n, sc->work) +
                model->logprior(model->data, w)) / (double) model->n;
      if (s->test) s->test->metrics(s->test->data, w, row + 2, sc->work);
      if (model_stopped(model, res, t_abs, 1, stop_all)) break;
      res->monitored++;
      next_monitor += s->monitor_every;
    }
    if (t == next_check) {
      next_check += s->check_every;
      if (on_main_thread() && user_interrupted()) *stop_all = 1;
      if (*stop_all) {
        res->status = STATUS_INTERRUPTED;
        res->stop_iter = t_abs;
        break;
      }
    }
  }
  memcpy(out->last, w, d * sizeof(double));
  memcpy(out->state, sc->state, state_len * sizeof(double));
  *rng_ = rng;
  *diag_rng_ = diag_rng;
}

/* ---------------------------------------------------- entry point -- */

static R_xlen_t setting_count(SEXP settings, const char *name, double lo) {
  double v = list_real(settings, name);
  if (!R_FINITE(v) || v < lo || v != floor(v) || v > 4503599627370496.0)
    error("internal: setting '%s' must be a whole number >= %g", name, lo);
  return (R_xlen_t) v;
}

static run_settings read_settings(SEXP settings, const sgld_model *model) {
  run_settings s;
  memset(&s, 0, sizeof s);
  s.iter = setting_count(settings, "iter", 1);
  s.burnin = setting_count(settings, "burnin", 0);
  s.thin = setting_count(settings, "thin", 1);
  s.capacity = setting_count(settings, "capacity", 0);
  s.chains = (int) setting_count(settings, "chains", 1);
  s.m = (int) setting_count(settings, "batch_size", 1);
  s.replace = list_int(settings, "replace");
  s.tau = list_real(settings, "temperature");
  s.schedule = schedule_build(list_elt(settings, "schedule"));
  s.clip_type = list_code(settings, "clip_type", CODES_CLIP);
  s.clip_threshold = list_real(settings, "clip_threshold");
  s.threads = (int) setting_count(settings, "threads", 1);
  s.monitor_every = setting_count(settings, "monitor_every", 0);
  s.n_monitor = s.monitor_every > 0 ? s.iter / s.monitor_every : 0;
  s.burnin_mode = list_code(settings, "burnin_mode", CODES_BURNIN);
  s.thin_mode = list_code(settings, "thin_mode", CODES_THIN);
  s.alpha0 = list_real(settings, "alpha0");
  s.distance = list_real(settings, "distance");
  s.diag_every = setting_count(settings, "diag_every", 0);
  s.n_diag = s.diag_every > 0 ? s.iter / s.diag_every : 0;
  s.diag_sample = setting_count(settings, "diag_sample", 1);
  s.mala = list_int(settings, "mala");
  if (s.burnin >= s.iter) error("internal: burnin must be below iter");
  if (s.m > model->n) error("internal: batch_size exceeds the number of data items");
  if (s.mala && s.m != model->n) error("internal: mala needs the full data in every step");
  if (!(s.tau >= 0)) error("internal: temperature must be >= 0");
  if (s.burnin_mode == BURNIN_THRESHOLD && s.diag_every == 0)
    error("internal: a threshold burn-in needs diagnostics");
  if (s.thin_mode == THIN_DISTANCE && !(s.distance > 0))
    error("internal: the mixing distance must be positive");
  /* check for interrupts about every 10^6 floating-point operations of gradient work */
  double work = (double) s.m * (double) model->d + 1.0;
  s.check_every = (R_xlen_t) (work >= 1e6 ? 1 : 1e6 / work);
  return s;
}

/* store a freshly allocated x as element i of the protected list, which then
   protects it, and hand it back */
static SEXP put(SEXP list, int i, SEXP x) {
  SET_VECTOR_ELT(list, i, x);
  return x;
}

SEXP sgld_run(SEXP model_spec, SEXP settings) {
  sgld_model model = find_model(model_spec);
  const sgld_update *rule = find_update(CHAR(asChar(list_elt(settings, "update"))));
  run_settings s = read_settings(settings, &model);
  s.opts = update_build_opts(rule, list_elt(settings, "update_opts"), model.d);
  SEXP test_spec = list_elt(settings, "test");
  sgld_model test;
  if (test_spec != R_NilValue) {
    test = find_model(test_spec);
    if (test.d != model.d || !test.metrics || test.work_size > model.work_size)
      error("internal: the held-out data do not fit the model");
    s.test = &test;
  }
  const int d = model.d, chains = s.chains;
  const double *init = list_doubles(settings, "init", (R_xlen_t) d * chains);
  if (s.mala && !update_is_proposal(rule, d))
    error("internal: this update rule cannot be a Metropolis-Hastings proposal");
  s.t_offset = list_doubles(settings, "t_offset", chains);
  const size_t state_len = update_state_length(rule, d);
  SEXP state_init = list_elt(settings, "state_init");
  SEXP rng_init = list_elt(settings, "rng_init");
  if (rng_init != R_NilValue &&
      (TYPEOF(rng_init) != RAWSXP || XLENGTH(rng_init) != 2 * chains * (R_xlen_t) sizeof(sgld_rng)))
    error("internal: 'rng_init' must hold two streams per chain");
  if (list_elt(settings, "cv_mode") != R_NilValue) {
    if (s.mala) error("internal: mala uses the full data, not control variates");
    s.cv_mode = list_doubles(settings, "cv_mode", d);
  }
  SEXP order_ = list_elt(settings, "order");
  if (TYPEOF(order_) != INTSXP || XLENGTH(order_) != chains)
    error("internal: 'order' must be an integer vector with one entry per chain");
  const int *order = INTEGER(order_);
  for (int k = 0; k < chains; k++)
    if (order[k] < 1 || order[k] > chains) error("internal: 'order' out of range");
  if ((s.mala || s.diag_every > 0) && model.n > INT_MAX)
    error("internal: full-data evaluations need n <= %d", INT_MAX);
  if (s.mala || s.diag_every > 0) {
    R_xlen_t *all = (R_xlen_t *) R_alloc(model.n, sizeof(R_xlen_t));
    for (R_xlen_t i = 0; i < model.n; i++) all[i] = i;
    s.all_idx = all;
  }
  if (s.diag_sample > model.n) s.diag_sample = model.n;
  if (s.cv_mode) s.cv_grad = cv_gradient(&model, s.cv_mode);

  /* outputs, allocated once */
  const char *names[] = {"draws", "eta", "kept", "status", "stop_iter", "clip_count", "last",
                         "monitor", "monitored", "iteration", "diagnostics", "diagnosed",
                         "accepted", "collect_from", "state", "rng", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  /* one kept-draws x parameters matrix per chain, filled in place */
  SEXP draws = put(out, 0, allocVector(VECSXP, chains));
  for (int c = 0; c < chains; c++) SET_VECTOR_ELT(draws, c, allocMatrix(REALSXP, s.capacity, d));
  SEXP eta = put(out, 1, allocMatrix(REALSXP, s.capacity, chains));
  SEXP kept = put(out, 2, allocVector(REALSXP, chains));
  SEXP status = put(out, 3, allocVector(INTSXP, chains));
  SEXP stop_iter = put(out, 4, allocVector(REALSXP, chains));
  SEXP clip_count = put(out, 5, allocVector(REALSXP, chains));
  SEXP last = put(out, 6, allocMatrix(REALSXP, d, chains));
  /* per chain, one row per evaluation: iteration, log joint per datum, metrics */
  const int n_cols = 2 + (s.test ? s.test->n_metrics : 0);
  SEXP monitor = put(out, 7, allocVector(REALSXP, (R_xlen_t) n_cols * s.n_monitor * chains));
  SEXP monitored = put(out, 8, allocVector(REALSXP, chains));
  SEXP iteration = put(out, 9, allocMatrix(REALSXP, s.capacity, chains));
  SEXP diag = put(out, 10, allocVector(REALSXP, (R_xlen_t) DIAG_COLS * s.n_diag * chains));
  SEXP diagnosed = put(out, 11, allocVector(REALSXP, chains));
  SEXP accepted = put(out, 12, allocVector(REALSXP, chains));
  SEXP collect_from = put(out, 13, allocVector(REALSXP, chains));
  SEXP state = put(out, 14, allocMatrix(REALSXP, (int) state_len, chains));
  SEXP rng_out = put(out, 15, allocVector(RAWSXP, 2 * chains * (R_xlen_t) sizeof(sgld_rng)));

  /* one stream per chain: chain c is the base stream jumped c times; the
     diagnostics of chain c use the stream jumped chains + c times */
  sgld_rng *rngs = (sgld_rng *) R_alloc(2 * chains, sizeof(sgld_rng));
  if (rng_init != R_NilValue) {        /* a continued run: the streams where they stopped */
    memcpy(rngs, RAW(rng_init), 2 * chains * sizeof(sgld_rng));
  } else {
    rng_seed_from_r(&rngs[0]);
    for (int c = 1; c < 2 * chains; c++) {
      rngs[c] = rngs[c - 1];
      rng_jump(&rngs[c]);
    }
  }

  const int diag_on = s.diag_every > 0;
  chain_scratch *sc = (chain_scratch *) R_alloc(chains, sizeof(chain_scratch));
  for (int c = 0; c < chains; c++) {
    sc[c].w = (double *) R_alloc(d, sizeof(double));
    sc[c].w_prev = (double *) R_alloc(d, sizeof(double));
    sc[c].g = (double *) R_alloc(d, sizeof(double));
    sc[c].g_bar = (double *) R_alloc(d, sizeof(double));
    sc[c].w_new = (double *) R_alloc(d, sizeof(double));
    sc[c].g_new = (double *) R_alloc(d, sizeof(double));
    sc[c].diag_buf = diag_on ? (double *) R_alloc(diagnostics_scratch_length(d), sizeof(double))
                             : NULL;
    sc[c].diag_idx = diag_on && s.diag_sample < model.n
                       ? (R_xlen_t *) R_alloc(s.diag_sample, sizeof(R_xlen_t)) : NULL;
    sc[c].state = (double *) R_alloc(state_len + update_scratch_length(rule, d) + 1,
                                     sizeof(double));
    sc[c].work = (double *) R_alloc(model.work_size + 1, sizeof(double));
    sc[c].idx = (R_xlen_t *) R_alloc(s.m, sizeof(R_xlen_t));
    sc[c].batch_memory = s.mala ? NULL
                                : R_alloc(minibatch_bytes(model.n, s.m, s.replace) + 1, 1);
  }
  chain_result *res = (chain_result *) R_alloc(chains, sizeof(chain_result));
  chain_output *where = (chain_output *) R_alloc(chains, sizeof(chain_output));
  for (int c = 0; c < chains; c++) {
    memset(&res[c], 0, sizeof res[c]);
    res[c].status = STATUS_NOT_RUN;
    where[c].draws = REAL(VECTOR_ELT(draws, c));
    where[c].eta = REAL(eta) + (R_xlen_t) c * s.capacity;
    where[c].iteration = REAL(iteration) + (R_xlen_t) c * s.capacity;
    where[c].last = REAL(last) + (R_xlen_t) c * d;
    where[c].monitor = REAL(monitor) + (R_xlen_t) c * s.n_monitor * n_cols;
    where[c].diag = REAL(diag) + (R_xlen_t) c * s.n_diag * DIAG_COLS;
    where[c].state = REAL(state) + c * state_len;
    /* each chain's start, which a chain that never runs also returns */
    memcpy(where[c].last, init + (R_xlen_t) c * d, d * sizeof(double));
    if (state_init != R_NilValue)
      memcpy(where[c].state, list_doubles(settings, "state_init", (R_xlen_t) (state_len * chains))
             + c * state_len, state_len * sizeof(double));
    else
      rule->init(where[c].state, where[c].last, d, s.opts);
  }

  volatile int stop_all = 0;
  const int nth = model.main_thread_only ? 1 : s.threads < chains ? s.threads : chains;
  if (nth > 1) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
    for (int k = 0; k < chains; k++) {
      const int c = order[k] - 1;
      if (stop_all) continue;
      run_chain(&model, rule, &s, c, &rngs[c], &rngs[chains + c], &sc[c], &where[c], &res[c],
                &stop_all);
    }
  } else {
    /* Not even a one-thread parallel region: a model that calls into R may
       meet a long jump its guards cannot stop (e.g. a stack overflow), and
       leaving an OpenMP region that way is undefined. */
    for (int k = 0; k < chains && !stop_all; k++) {
      const int c = order[k] - 1;
      run_chain(&model, rule, &s, c, &rngs[c], &rngs[chains + c], &sc[c], &where[c], &res[c],
                &stop_all);
    }
  }

  for (int c = 0; c < chains; c++) {
    REAL(kept)[c] = (double) res[c].kept;
    INTEGER(status)[c] = res[c].status;
    REAL(stop_iter)[c] = res[c].stop_iter;
    REAL(clip_count)[c] = res[c].clip_count;
    REAL(monitored)[c] = (double) res[c].monitored;
    REAL(diagnosed)[c] = (double) res[c].diagnosed;
    REAL(accepted)[c] = res[c].accepted;
    REAL(collect_from)[c] = res[c].collect_from;
  }
  memcpy(RAW(rng_out), rngs, 2 * chains * sizeof(sgld_rng));
  UNPROTECT(1);
  return out;
}
