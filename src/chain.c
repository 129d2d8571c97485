/*
 * One chain's iterations: the package's only loop over iterations.
 *
 * Each iteration: draw a minibatch, let the gradient estimator form its
 * estimate there (gradient.c: the minibatch gradient of the log posterior,
 * plain or with control variates and clipped if asked; gradient_vi.c: a
 * variational family's), let the update rule move the state, stop at the
 * first non-finite value, and offer the new state to
 * the collector (burn-in by count or by the sampling threshold; thinning by
 * count or by summed learning rate), which stores the kept parameters and
 * updates the running moments of all of them. MALA is the same loop with the
 * full data and a Metropolis-Hastings accept step in place of the update rule.
 *
 * The chain runs from where its `chain` record says up to a given iteration
 * and returns, so the caller can run it in chunks: every quantity that carries
 * over between iterations lives in that record or its scratch, so the draws do
 * not depend on how the run is cut. Nothing here touches R.
 */
#include <string.h>
#include "run.h"

/* Are x[0..d) all finite? A few: C99's isfinite, inlined (R_FINITE may be
   a call into libR). Many: x * 0 is (+-)0 for a finite x and NaN for an
   infinite or NaN one, so the sum is 0 exactly when all are finite, and a
   sum of zeros and NaNs does not depend on its order, so it runs as a
   vectorised reduction, in AVX2 where the processor has it (SGLD_WIDE).
   Callgrind, two checks an iteration: Adult (d = 124) 992 -> 386
   instructions; the linear model at d = 3 would take 46 more with the
   reduction's set-up. */
#define FINITE_LOOP_MAX 16
SGLD_WIDE static int all_finite_many(const double *x, int d) {
  double s = 0.0;
#ifdef _OPENMP
#pragma omp simd reduction(+:s)
#endif
  for (int j = 0; j < d; j++) s += x[j] * 0.0;
  return s == 0.0;
}

static inline int all_finite(const double *x, int d) {
  if (d > FINITE_LOOP_MAX) return all_finite_many(x, d);
  for (int j = 0; j < d; j++)
    if (!isfinite(x[j])) return 0;
  return 1;
}

/* Has the model given up (a function written in R failed or was
   interrupted)? If so the chain stops at iteration t_abs. `completed` says
   whether iteration t_abs had finished: an interrupted chain records the last
   finished iteration, as a continued run starts after it. */
static int model_stopped(const sgld_model *model, chain_result *res, double t_abs,
                         int completed) {
  if (!model->failed) return 0;
  const int why = model->failed(model->data);
  if (why == MODEL_OK) return 0;
  res->status = why == MODEL_INTERRUPTED ? STATUS_INTERRUPTED : STATUS_MODEL_FAILED;
  res->stop_iter = why == MODEL_INTERRUPTED && !completed ? t_abs - 1 : t_abs;
  return 1;
}

static void stop_chain(chain_result *res, int status, double t_abs) {
  res->status = status;
  res->stop_iter = t_abs;
}

/* ---------------------------------------------------- diagnostics -- */

/* one row of diagnostics at state w (see diagnostics.c); returns alpha */
static double diagnose(const run_context *ctx, chain *ch, double eta, double *row, double t) {
  const sgld_model *model = ctx->model;
  const sgld_update *rule = ctx->rule;
  const run_settings *s = ctx->s;
  chain_scratch *sc = &ch->sc;
  const int d = model->d;
  const double *w = sc->w;
  const R_xlen_t *items = s->all_idx;
  R_xlen_t count = model->n;
  if (s->diag_sample < model->n) {     /* a random subset for large data */
    for (R_xlen_t k = 0; k < s->diag_sample; k++)
      sc->diag_idx[k] = (R_xlen_t) rng_below(&ch->diag_rng, (uint64_t) model->n);
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
  const double tau_t = schedule_temperature(&s->schedule, t, s->tau);
  const double var_inj = 2.0 * eta * tau_t;
  const double alpha = eta * n * n * lambda / (2.0 * s->m);

  /* rejection probability of the full-data proposal from w */
  const void *proposal_opts = s->opts;
  const sgld_update *proposal = diagnostic_proposal(rule, d, &proposal_opts);
  double *g = sc->diag_buf, *g_new = sc->diag_buf + d;   /* reuse: V no longer needed */
  const double U = full_log_post(model, w, g, s->all_idx, sc->work);
  const double tau = tau_t > 0 ? tau_t : 1.0;
  mh_propose(proposal, w, g, eta, tau, sc->state, &ch->diag_rng, sc->w_new, d, proposal_opts);
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

/* ------------------------------------------------ pieces of a step -- */

/* The estimator's gradient at theta on a new minibatch into g; 0 if the
   chain must stop. A non-finite gradient is left in g for the caller's
   check. noise: the step's normals, drawn during the gradient (NULL: none). */
static int estimate(const run_context *ctx, chain *ch, double t_abs, const sgld_noise *noise) {
  const run_settings *s = ctx->s;
  chain_scratch *sc = &ch->sc;
  sgld_estimator e = ctx->estimator;
  e.threads = ch->threads;
  const sgld_batch b = {&e, minibatch_draw(&ch->mb, &ch->rng, sc->idx), &ch->rng, sc->g_new,
                        sc->work, s->clip_type, s->clip_threshold, &ch->res.clip_count};
  ctx->grad->estimate(&b, sc->w, sc->g, ctx->rule->needs_g_bar ? sc->g_bar : NULL, noise,
                      sc->grad_state, ctx->model->d, s->grad_opts);
  return !model_stopped(ctx->model, &ch->res, t_abs, 0);
}

/* a Metropolis-Hastings step with the rule's proposal; 0 if the chain must stop */
static int mala_step(const run_context *ctx, chain *ch, double eta, double t_abs) {
  const sgld_model *model = ctx->model;
  const run_settings *s = ctx->s;
  chain_scratch *sc = &ch->sc;
  const int d = model->d;
  mh_propose(ctx->rule, sc->w, sc->g, eta, s->tau, sc->state, &ch->rng, sc->w_new, d, s->opts);
  const double U_new = full_log_post(model, sc->w_new, sc->g_new, s->all_idx, sc->work);
  if (model_stopped(model, &ch->res, t_abs, 0)) return 0;
  const double log_u = log(rng_unif(&ch->rng));
  if (isfinite(U_new) && all_finite(sc->g_new, d) &&
      log_u < mh_log_ratio(ctx->rule, sc->w, ch->U, sc->g, sc->w_new, U_new, sc->g_new, eta,
                           s->tau, sc->state, d, s->opts)) {
    memcpy(sc->w, sc->w_new, d * sizeof(double));
    memcpy(sc->g, sc->g_new, d * sizeof(double));
    ch->U = U_new;
    ch->res.accepted++;
  }
  return 1;
}

/* A Metropolis-Hastings step whose proposal is a leapfrog trajectory
   (Hamiltonian Monte Carlo) under the rule's fixed preconditioner: the step
   eps = sqrt(2 eta tau) makes its first leapfrog step mala()'s proposal, and
   the number of steps is drawn uniformly from 1, ..., 2 L - 1 (mean L) so
   that no fixed trajectory length can resonate with a period of the
   posterior. 0 if the chain must stop. */
static int hmc_step(const run_context *ctx, chain *ch, double eta, double t_abs) {
  const sgld_model *model = ctx->model;
  const run_settings *s = ctx->s;
  chain_scratch *sc = &ch->sc;
  const int d = model->d;
  double *r = sc->momentum;
  const int steps = 1 + (int) rng_below(&ch->rng, (uint64_t) (2 * s->leapfrog - 1));
  double kinetic = 0.0;
  for (int j = 0; j < d; j++) {
    r[j] = rng_norm(&ch->rng);
    kinetic += r[j] * r[j];
  }
  memcpy(sc->w_new, sc->w, d * sizeof(double));
  memcpy(sc->g_new, sc->g, d * sizeof(double));
  const double U_new = leapfrog_path(model, s->metric, sc->w_new, sc->g_new, r, ch->U,
                                     sqrt(2.0 * eta * s->tau), steps, s->tau, s->all_idx,
                                     sc->work);
  if (model_stopped(model, &ch->res, t_abs, 0)) return 0;
  double kinetic_new = 0.0;
  for (int j = 0; j < d; j++) kinetic_new += r[j] * r[j];
  const double log_u = log(rng_unif(&ch->rng));
  if (isfinite(U_new) && all_finite(sc->g_new, d) &&
      log_u < (U_new - ch->U) / s->tau - 0.5 * (kinetic_new - kinetic)) {
    memcpy(sc->w, sc->w_new, d * sizeof(double));
    memcpy(sc->g, sc->g_new, d * sizeof(double));
    ch->U = U_new;
    ch->res.accepted++;
  }
  return 1;
}

/* Offer the state after iteration t to the collector: burn-in, the
   schedule's sampling phases, then every parameter into the moments, and
   thinning decides whether the kept parameters are stored. */
static void offer_state(const run_context *ctx, chain *ch, R_xlen_t t, double t_abs,
                        double eta) {
  const run_settings *s = ctx->s;
  if (!ch->collecting) {
    if (s->burnin_mode == BURNIN_COUNT && t == s->burnin) {
      ch->collecting = 1;
      ch->res.collect_from = t_abs + 1;
    }
    return;
  }
  /* outside a sampling phase nothing is kept, and thinning starts afresh
     with the next phase */
  if (!schedule_sampling(&s->schedule, t_abs)) {
    ch->since_kept = 0;
    ch->eta_since_kept = 0.0;
    return;
  }
  ch->res.moment_n++;
  moments_add(&ch->out, &ch->res, ch->sc.w, eta, s->moment_scale, ctx->model->d);
  int keep;
  if (s->thin_mode == THIN_COUNT) {
    keep = ++ch->since_kept == s->thin;
  } else {
    ch->eta_since_kept += eta;
    keep = ch->eta_since_kept >= s->distance;
  }
  if (!keep || ch->res.kept >= s->capacity) return;
  const double *w = ch->sc.w;
  double *draws = ch->out.draws + ch->res.kept;
  const R_xlen_t cap = s->capacity;
  if (s->keep)
    for (int k = 0; k < s->n_keep; k++) draws[k * cap] = w[s->keep[k]];
  else
    for (int j = 0; j < s->n_keep; j++) draws[j * cap] = w[j];
  ch->out.eta[ch->res.kept] = eta;
  if (ctx->grad->trace)
    ch->out.trace[ch->res.kept] = ctx->grad->trace(ch->sc.grad_state, ctx->model->d,
                                                   s->grad_opts);
  ch->out.iteration[ch->res.kept] = t_abs;
  ch->res.kept++;
  ch->since_kept = 0;
  ch->eta_since_kept = 0.0;
}

/* a monitor row: iteration, log joint per datum, then the test metrics */
static int monitor(const run_context *ctx, chain *ch, double t_abs) {
  const sgld_model *model = ctx->model;
  const run_settings *s = ctx->s;
  double *row = ch->out.monitor + (R_xlen_t) ch->res.monitored * s->n_monitor_cols;
  row[0] = t_abs;
  row[1] = (model->loglik(model->data, ch->sc.w, NULL, model->n, ch->sc.work) +
            model->logprior(model->data, ch->sc.w)) / (double) model->n;
  if (s->test) s->test->metrics(s->test->data, ch->sc.w, row + 2, ch->sc.work);
  if (model_stopped(model, &ch->res, t_abs, 1)) return 0;
  ch->res.monitored++;
  ch->next_monitor += s->monitor_every;
  return 1;
}

/* diagnostics due at iteration t, and the threshold burn-in they decide */
static int diagnostics(const run_context *ctx, chain *ch, double eta, double t_abs) {
  const run_settings *s = ctx->s;
  double *row = ch->out.diag + (R_xlen_t) ch->res.diagnosed * DIAG_COLS;
  const double alpha = diagnose(ctx, ch, eta, row, t_abs);
  if (model_stopped(ctx->model, &ch->res, t_abs, 0)) return 0;
  ch->res.diagnosed++;
  ch->next_diag += s->diag_every;
  if (!ch->collecting && s->burnin_mode == BURNIN_THRESHOLD && alpha <= s->alpha0) {
    ch->collecting = 1;
    ch->res.collect_from = t_abs;
  }
  return 1;
}

/* ---------------------------------------------------- the chain -- */

/* The model's file copy shrank during the run (mmap.c: its lost pages read
   as zeros): this iteration is not kept, the last finite state before it is
   the chain's, and the chain stops as failed at the iteration before. */
static int rows_lost_stop(chain *ch, double t_abs, const double *w_prev, int p) {
  if (w_prev) memcpy(ch->sc.w, w_prev, (size_t) p * sizeof(double));
  stop_chain(&ch->res, STATUS_MODEL_FAILED, t_abs - 1);
  return 0;
}

/* one iteration; 0 when the chain stops (its status says why) */
static int iterate(const run_context *ctx, chain *ch, R_xlen_t t) {
  const sgld_model *model = ctx->model;
  const run_settings *s = ctx->s;
  chain_scratch *sc = &ch->sc;
  const int d = model->d, p = s->p;
  const double t_abs = s->t_offset[ch->id] + (double) t;
  const double eta = s->schedule.type == SCHEDULE_CONSTANT ? s->schedule.a
                                                           : schedule_eta(&s->schedule, t_abs);
  const double tau = schedule_temperature(&s->schedule, t_abs, s->tau);
  /* a split batch's gradient leaves a thread idle while the other finishes
     its pieces: the step's normals are drawn then (sgld.h: step_drawn) */
  const sgld_noise noise = {&ch->rng, sc->noise};
  const int drawn = sc->noise && tau > 0;
  if (!s->mala && !estimate(ctx, ch, t_abs, drawn ? &noise : NULL)) return 0;
  if (sgld_rows_lost) return rows_lost_stop(ch, t_abs, NULL, 0);
  if (!all_finite(sc->g, p)) {
    stop_chain(&ch->res, STATUS_NONFINITE_GRADIENT, t_abs);
    return 0;
  }
  if (t == ch->next_diag && !diagnostics(ctx, ch, eta, t_abs)) return 0;

  memcpy(sc->w_prev, sc->w, p * sizeof(double));
  if (s->mala) {
    if (!(s->leapfrog > 1 ? hmc_step(ctx, ch, eta, t_abs) : mala_step(ctx, ch, eta, t_abs)))
      return 0;
    /* the model's own exact moves keep the untempered posterior only */
    if (model->exact_moves && s->tau == 1.0)
      model->exact_moves(model->data, sc->w, &ch->U, sc->g, &ch->rng, sc->work);
  } else if (drawn) {
    ctx->rule->step_drawn(sc->w, sc->g, ctx->rule->needs_g_bar ? sc->g_bar : NULL, eta, tau,
                          sc->state, sc->noise, p, s->opts);
  } else {
    ctx->rule->step(sc->w, sc->g, ctx->rule->needs_g_bar ? sc->g_bar : NULL, eta, tau,
                    sc->state, &ch->rng, p, s->opts);
  }
  if (s->n_coord) coordinate_sweep(model, s, sc->w, &ch->rng);
  if (!all_finite(sc->w, p) || (model->in_domain && !model->in_domain(model->data, sc->w)) ||
      (ctx->grad->in_domain && !ctx->grad->in_domain(sc->w, d, s->grad_opts))) {
    memcpy(sc->w, sc->w_prev, p * sizeof(double));   /* leave the last finite state */
    stop_chain(&ch->res, STATUS_NONFINITE_PARAMETER, t_abs);
    return 0;
  }
  if (sgld_rows_lost) return rows_lost_stop(ch, t_abs, sc->w_prev, p);
  if (ctx->grad->after_step) ctx->grad->after_step(sc->w, sc->grad_state, d, s->grad_opts);
  offer_state(ctx, ch, t, t_abs, eta);
  if (t == ch->next_monitor && !monitor(ctx, ch, t_abs)) return 0;
  return 1;
}

/* Take up chain ch from its output (out.last, out.state) and its streams.
   A chain that cannot even start (a model function that fails at the start)
   is left stopped. */
void chain_start(const run_context *ctx, chain *ch) {
  const sgld_model *model = ctx->model;
  const run_settings *s = ctx->s;
  const int d = model->d;
  const double t0 = s->t_offset[ch->id];
  memcpy(ch->sc.w, ch->out.last, d * sizeof(double));
  memcpy(ch->sc.state, ch->out.state, s->rule_state * sizeof(double));
  memcpy(ch->sc.grad_state, ch->out.state + s->rule_state, s->grad_state * sizeof(double));
  /* the estimator's extra parameters move with w while the chain runs */
  memcpy(ch->sc.w + d, ch->sc.grad_state, (size_t) (s->p - d) * sizeof(double));
  if (!s->mala) minibatch_init(&ch->mb, model->n, s->m, s->replace, ch->sc.batch_memory);
  memset(&ch->res, 0, sizeof ch->res);
  moments_reset(&ch->out, &ch->res, d);
  ch->res.status = STATUS_DONE;
  ch->t = 0;
  ch->running = 1;
  ch->U = s->mala ? full_log_post(model, ch->sc.w, ch->sc.g, s->all_idx, ch->sc.work) : 0.0;
  /* collection: eligible from iteration collect_from (burn-in), then thinned */
  ch->collecting = s->burnin_mode == BURNIN_COUNT && s->burnin == 0;
  if (ch->collecting) ch->res.collect_from = t0 + 1;
  ch->since_kept = 0;
  ch->eta_since_kept = 0.0;
  ch->next_monitor = s->monitor_every > 0 ? s->monitor_every : -1;
  ch->next_diag = s->diag_every > 0 ? s->diag_every : -1;
  if (model_stopped(model, &ch->res, t0, 1)) ch->running = 0;
}

/* run iterations ch->t + 1, ..., t_end (at most s->iter) unless the chain stops */
void chain_advance(const run_context *ctx, chain *ch, R_xlen_t t_end) {
  if (t_end > ctx->s->iter) t_end = ctx->s->iter;
  while (ch->running && ch->t < t_end) {
    if (!iterate(ctx, ch, ch->t + 1)) {
      ch->running = 0;
      break;
    }
    ch->t++;
  }
  if (ch->t == ctx->s->iter) ch->running = 0;
}

/* the chain's final parameters, the rule's state and the estimator's (with
   its extra parameters) go to its output */
void chain_finish(const run_context *ctx, chain *ch) {
  const run_settings *s = ctx->s;
  const int d = ctx->model->d;
  memcpy(ch->sc.grad_state, ch->sc.w + d, (size_t) (s->p - d) * sizeof(double));
  memcpy(ch->out.last, ch->sc.w, d * sizeof(double));
  memcpy(ch->out.state, ch->sc.state, s->rule_state * sizeof(double));
  memcpy(ch->out.state + s->rule_state, ch->sc.grad_state, s->grad_state * sizeof(double));
}
