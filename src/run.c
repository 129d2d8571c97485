/*
 * The driver: the package's only loop over iterations.
 *
 * For each chain and iteration: draw a minibatch, form the gradient estimate
 * g_hat = grad log prior + (n/m) sum over the batch of grad log lik, clip it if
 * asked, let the update rule move the state, stop at the first non-finite
 * value, and keep the state if burn-in and thinning say so. Everything is
 * allocated before the loop; a divergence or a user interrupt ends the run
 * early but keeps every draw made so far.
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

enum { STATUS_DONE = 0, STATUS_NONFINITE_PARAMETER = 1, STATUS_NONFINITE_GRADIENT = 2,
       STATUS_INTERRUPTED = 3, STATUS_NOT_RUN = 4 };

/* ----------------------------------------------------------- tables -- */

typedef struct { const char *name; sgld_model (*build)(SEXP); } model_entry;
static const model_entry model_table[] = {
  {"linear", model_linear_build},
  {"logistic", model_logistic_build},
};

typedef struct { const char *name; const sgld_update *rule; } update_entry;
static const update_entry update_table[] = {
  {"sgld", &update_sgld},
};

sgld_model find_model(SEXP spec) {
  const char *type = CHAR(asChar(list_elt(spec, "type")));
  for (size_t i = 0; i < sizeof model_table / sizeof *model_table; i++)
    if (strcmp(type, model_table[i].name) == 0) return model_table[i].build(spec);
  error("internal: unknown model type '%s'", type);
  return model_table[0].build(spec); /* not reached */
}

static const sgld_update *find_update(const char *name) {
  for (size_t i = 0; i < sizeof update_table / sizeof *update_table; i++)
    if (strcmp(name, update_table[i].name) == 0) return update_table[i].rule;
  error("internal: unknown update rule '%s'", name);
  return NULL; /* not reached */
}

/* ------------------------------------------------------- settings -- */

typedef struct run_settings {
  R_xlen_t iter, burnin, thin, nkeep;
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
} run_settings;

/* what one chain leaves behind, besides its draws */
typedef struct chain_result {
  R_xlen_t kept;
  double stop_iter;            /* iteration at which the chain stopped early, or 0 */
  int status;
  double clip_count;
  R_xlen_t monitored;          /* monitor rows written */
} chain_result;

/* per-chain memory, allocated before the loop */
typedef struct chain_scratch {
  double *w, *w_prev, *g, *g_bar, *state, *work;
  R_xlen_t *idx;
  void *batch_memory;
} chain_scratch;

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

/* ------------------------------------------------------ one chain -- */

static int on_main_thread(void) {
#ifdef _OPENMP
  return omp_get_thread_num() == 0;
#else
  return 1;
#endif
}

static void run_chain(const sgld_model *model, const sgld_update *rule, const run_settings *s,
                      const double *init, sgld_rng rng, chain_scratch *sc,
                      double *draws, double *eta_kept, double *last, double *monitor,
                      chain_result *res, volatile int *stop_all) {
  const int d = model->d, m = s->m;
  const double scale = (double) model->n / (double) m;
  double *w = sc->w, *g = sc->g, *g_bar = rule->needs_g_bar ? sc->g_bar : NULL;
  sgld_minibatch mb;

  memcpy(w, init, d * sizeof(double));
  minibatch_init(&mb, model->n, m, s->replace, sc->batch_memory);
  rule->init(sc->state, w, d);
  res->kept = 0;
  res->stop_iter = 0;
  res->status = STATUS_DONE;
  res->clip_count = 0;
  res->monitored = 0;

  R_xlen_t next_keep = s->burnin + s->thin, next_check = s->check_every;
  /* monitor rows: iteration, log joint per datum, then the test metrics */
  const int n_cols = 2 + (s->test ? s->test->n_metrics : 0);
  R_xlen_t next_monitor = s->monitor_every > 0 ? s->monitor_every : -1;
  for (R_xlen_t t = 1; t <= s->iter; t++) {
    const double eta = schedule_eta(&s->schedule, (double) t);
    const R_xlen_t *idx = minibatch_draw(&mb, &rng, sc->idx);

    for (int j = 0; j < d; j++) g[j] = 0.0;
    model->grad_loglik(model->data, w, idx, m, g, sc->work);
    if (g_bar)
      for (int j = 0; j < d; j++) g_bar[j] = g[j] / m;
    for (int j = 0; j < d; j++) g[j] *= scale;
    model->grad_logprior(model->data, w, g);
    if (s->clip_type != CLIP_NONE)
      res->clip_count += clip_gradient(g, d, s->clip_type, s->clip_threshold);
    if (!all_finite(g, d)) {
      res->status = STATUS_NONFINITE_GRADIENT;
      res->stop_iter = (double) t;
      break;
    }

    memcpy(sc->w_prev, w, d * sizeof(double));
    rule->step(w, g, g_bar, eta, s->tau, sc->state, &rng, d, NULL);
    if (!all_finite(w, d) || (model->in_domain && !model->in_domain(model->data, w))) {
      memcpy(w, sc->w_prev, d * sizeof(double));   /* leave the last finite state */
      res->status = STATUS_NONFINITE_PARAMETER;
      res->stop_iter = (double) t;
      break;
    }

    if (t == next_keep) {
      for (int j = 0; j < d; j++) draws[res->kept + j * s->nkeep] = w[j];
      eta_kept[res->kept] = eta;
      res->kept++;
      next_keep += s->thin;
    }
    if (t == next_monitor) {
      double *row = monitor + (R_xlen_t) res->monitored * n_cols;
      row[0] = (double) t;
      row[1] = (model->loglik(model->data, w, NULL, model->n) +
                model->logprior(model->data, w)) / (double) model->n;
      if (s->test) s->test->metrics(s->test->data, w, row + 2);
      res->monitored++;
      next_monitor += s->monitor_every;
    }
    if (t == next_check) {
      next_check += s->check_every;
      if (on_main_thread() && user_interrupted()) *stop_all = 1;
      if (*stop_all) {
        res->status = STATUS_INTERRUPTED;
        res->stop_iter = (double) t;
        break;
      }
    }
  }
  memcpy(last, w, d * sizeof(double));
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
  s.iter = setting_count(settings, "iter", 1);
  s.burnin = setting_count(settings, "burnin", 0);
  s.thin = setting_count(settings, "thin", 1);
  s.chains = (int) setting_count(settings, "chains", 1);
  s.m = (int) setting_count(settings, "batch_size", 1);
  s.replace = list_int(settings, "replace");
  s.tau = list_real(settings, "temperature");
  s.schedule = schedule_build(list_elt(settings, "schedule"));
  s.clip_type = list_int(settings, "clip_type");
  s.clip_threshold = list_real(settings, "clip_threshold");
  s.threads = (int) setting_count(settings, "threads", 1);
  s.monitor_every = setting_count(settings, "monitor_every", 0);
  s.n_monitor = s.monitor_every > 0 ? s.iter / s.monitor_every : 0;
  s.test = NULL;
  if (s.burnin >= s.iter) error("internal: burnin must be below iter");
  if (s.m > model->n) error("internal: batch_size exceeds the number of data items");
  if (!(s.tau >= 0)) error("internal: temperature must be >= 0");
  s.nkeep = (s.iter - s.burnin) / s.thin;
  /* check for interrupts about every 10^6 floating-point operations of gradient work */
  double work = (double) s.m * (double) model->d + 1.0;
  s.check_every = (R_xlen_t) (work >= 1e6 ? 1 : 1e6 / work);
  return s;
}

SEXP sgld_run(SEXP model_spec, SEXP settings) {
  sgld_model model = find_model(model_spec);
  const sgld_update *rule = find_update(CHAR(asChar(list_elt(settings, "update"))));
  run_settings s = read_settings(settings, &model);
  SEXP test_spec = list_elt(settings, "test");
  sgld_model test;
  if (test_spec != R_NilValue) {
    test = find_model(test_spec);
    if (test.d != model.d || !test.metrics)
      error("internal: the held-out data do not fit the model");
    s.test = &test;
  }
  const int d = model.d, chains = s.chains;
  const double *init = list_doubles(settings, "init", (R_xlen_t) d * chains);
  SEXP order_ = list_elt(settings, "order");
  if (TYPEOF(order_) != INTSXP || XLENGTH(order_) != chains)
    error("internal: 'order' must be an integer vector with one entry per chain");
  const int *order = INTEGER(order_);
  for (int k = 0; k < chains; k++)
    if (order[k] < 1 || order[k] > chains) error("internal: 'order' out of range");

  /* outputs, allocated once */
  const char *names[] = {"draws", "eta", "kept", "status", "stop_iter", "clip_count", "last",
                         "monitor", "monitored", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  /* one kept-draws x parameters matrix per chain, filled in place */
  SEXP draws = allocVector(VECSXP, chains);
  SET_VECTOR_ELT(out, 0, draws);
  for (int c = 0; c < chains; c++) SET_VECTOR_ELT(draws, c, allocMatrix(REALSXP, s.nkeep, d));
  SEXP eta = allocMatrix(REALSXP, s.nkeep, chains);
  SET_VECTOR_ELT(out, 1, eta);
  SEXP kept = allocVector(REALSXP, chains);
  SET_VECTOR_ELT(out, 2, kept);
  SEXP status = allocVector(INTSXP, chains);
  SET_VECTOR_ELT(out, 3, status);
  SEXP stop_iter = allocVector(REALSXP, chains);
  SET_VECTOR_ELT(out, 4, stop_iter);
  SEXP clip_count = allocVector(REALSXP, chains);
  SET_VECTOR_ELT(out, 5, clip_count);
  SEXP last = allocMatrix(REALSXP, d, chains);
  SET_VECTOR_ELT(out, 6, last);
  /* per chain, one column per evaluation: iteration, log joint per datum, metrics */
  const int n_cols = 2 + (s.test ? s.test->n_metrics : 0);
  SEXP monitor = allocVector(REALSXP, (R_xlen_t) n_cols * s.n_monitor * chains);
  SET_VECTOR_ELT(out, 7, monitor);
  SEXP monitored = allocVector(REALSXP, chains);
  SET_VECTOR_ELT(out, 8, monitored);

  /* one stream per chain: chain c is the base stream jumped c times */
  sgld_rng *rngs = (sgld_rng *) R_alloc(chains, sizeof(sgld_rng));
  rng_seed_from_r(&rngs[0]);
  for (int c = 1; c < chains; c++) {
    rngs[c] = rngs[c - 1];
    rng_jump(&rngs[c]);
  }

  chain_scratch *sc = (chain_scratch *) R_alloc(chains, sizeof(chain_scratch));
  for (int c = 0; c < chains; c++) {
    sc[c].w = (double *) R_alloc(d, sizeof(double));
    sc[c].w_prev = (double *) R_alloc(d, sizeof(double));
    sc[c].g = (double *) R_alloc(d, sizeof(double));
    sc[c].g_bar = (double *) R_alloc(d, sizeof(double));
    sc[c].state = (double *) R_alloc(rule->state_size * d + 1, sizeof(double));
    sc[c].work = (double *) R_alloc(model.work_size + 1, sizeof(double));
    sc[c].idx = (R_xlen_t *) R_alloc(s.m, sizeof(R_xlen_t));
    sc[c].batch_memory = R_alloc(minibatch_bytes(model.n, s.m, s.replace) + 1, 1);
  }
  chain_result *res = (chain_result *) R_alloc(chains, sizeof(chain_result));
  double **draw_ptr = (double **) R_alloc(chains, sizeof(double *));
  for (int c = 0; c < chains; c++) {
    chain_result none = {0, 0, STATUS_NOT_RUN, 0, 0};
    res[c] = none;
    draw_ptr[c] = REAL(VECTOR_ELT(draws, c));
  }
  double *eta_ptr = REAL(eta), *last_ptr = REAL(last), *monitor_ptr = REAL(monitor);

  volatile int stop_all = 0;
  const int nth = s.threads < chains ? s.threads : chains;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
  for (int k = 0; k < chains; k++) {
    const int c = order[k] - 1;
    if (stop_all) {
      memcpy(last_ptr + (R_xlen_t) c * d, init + (R_xlen_t) c * d, d * sizeof(double));
      continue;
    }
    run_chain(&model, rule, &s, init + (R_xlen_t) c * d, rngs[c], &sc[c], draw_ptr[c],
              eta_ptr + (R_xlen_t) c * s.nkeep, last_ptr + (R_xlen_t) c * d,
              monitor_ptr + (R_xlen_t) c * s.n_monitor * n_cols, &res[c], &stop_all);
  }
  (void) nth;

  for (int c = 0; c < chains; c++) {
    REAL(kept)[c] = (double) res[c].kept;
    INTEGER(status)[c] = res[c].status;
    REAL(stop_iter)[c] = res[c].stop_iter;
    REAL(clip_count)[c] = res[c].clip_count;
    REAL(monitored)[c] = (double) res[c].monitored;
  }
  UNPROTECT(1);
  return out;
}
