/*
 * Running the chains: in chunks of iterations, so that between chunks the
 * main thread, outside any parallel region, can poll for a user interrupt and
 * redraw the progress display. No R API is called inside a parallel region.
 *
 * Chains of models that run in threads advance in lockstep, a chunk at a
 * time, each chain's chunk on whichever thread is free; an interrupt stops
 * every chain at the end of the chunk it is in, so all stop within one chunk
 * of each other and keep every draw. Chains of models that call into R (only
 * the main thread may run them) run one after the other, as before, in the
 * same chunks.
 *
 * A chunk lasts about CHUNK_SECONDS: long enough that the fork, the join and
 * the poll cost nothing measurable (a parallel region costs a few
 * microseconds, the poll less), short enough that Ctrl-C answers at once. Its
 * length in iterations adapts to the measured time of the previous chunk; as
 * every chain carries its whole state from chunk to chunk, the draws do not
 * depend on where the chunks fall.
 */
#include <sys/stat.h>
#include <R.h>
#include <Rinternals.h>
#include "run.h"
#ifdef _OPENMP
#include <omp.h>
#endif

#define CHUNK_SECONDS 0.01

static void check_interrupt_fn(void *unused) {
  (void) unused;
  R_CheckUserInterrupt();
}

/* R_ToplevelExec catches the interrupt's long jump, so the run can stop
   cleanly and return what it has instead of losing it. Main thread only.
   A chain run as a future (R/future.R) is also stopped, the same way, when
   the session that started it creates its stop file, or has ended
   (run.c: read_stop_file()): Ctrl-C reaches that session, not the worker,
   and the file is the one signal every plan on a shared file system
   carries (a stat() or two a chunk). */
static int stop_requested(const run_settings *s) {
  struct stat st;
  if (!s->stop_file) return 0;
  return stat(s->stop_file, &st) == 0 || (s->stop_dir_seen && stat(s->stop_dir, &st) != 0);
}

/* a chain started after its run was stopped: it ends where it starts, as
   a chain the run never reached (its start, state and streams are those set
   up before the run) */
static void never_run(chain *ch) {
  ch->running = 0;
  ch->res.status = STATUS_NOT_RUN;
}

/* Both are asked every time: an interrupt left pending when the stop file
   ended the run would fire later in the worker's own R code, and a
   multisession worker's loop (parallel's workLoop) drops its job on an
   interrupt, so the chain's result would never be sent. */
static int user_interrupted(const run_settings *s) {
  const int interrupted = R_ToplevelExec(check_interrupt_fn, NULL) == FALSE;
  return stop_requested(s) || interrupted;
}

/* the first chunk: about 10^6 floating-point operations of gradient work */
static R_xlen_t first_chunk(const run_context *ctx) {
  const double work = (double) ctx->s->m * (double) ctx->model->d + (double) ctx->model->d;
  return work >= 1e6 ? 1 : (R_xlen_t) (1e6 / work);
}

/* the next chunk's length, from the time the last one took */
static R_xlen_t next_chunk(R_xlen_t chunk, double seconds) {
  if (seconds < CHUNK_SECONDS / 2 && chunk < ((R_xlen_t) 1 << 40)) return 2 * chunk;
  if (seconds > 2 * CHUNK_SECONDS && chunk > 1) return chunk / 2;
  return chunk;
}

static void interrupt_chain(const run_context *ctx, chain *ch) {
  if (!ch->running) return;
  ch->running = 0;
  ch->res.status = STATUS_INTERRUPTED;
  ch->res.stop_iter = ctx->s->t_offset[ch->id] + (double) ch->t;   /* last finished */
}

/* A model that failed, or was interrupted inside one of its own functions,
   stops the whole run. */
static int model_gave_up(const chain *ch) {
  return ch->res.status == STATUS_MODEL_FAILED ||
         (ch->res.status == STATUS_INTERRUPTED && !ch->running);
}

/* Once the run has lasted long enough to time it, estimate its whole length;
   a run of over an hour with no progress display says so at once (the R side
   also warns after the run, from `expected_seconds`). */
static void estimate_length(const run_context *ctx, double elapsed, double done,
                            double total, double *expected) {
  if (*expected > 0 || done <= 0 || (elapsed < 0.05 && done < total)) return;
  *expected = elapsed * total / done;
  if (!ctx->s->progress && *expected > ctx->s->long_run_seconds)
    REprintf("sgld: this run will take about %.2g hours at the speed of its first %.2f s; "
             "interrupt it (the draws made so far are kept) or turn on `progress` to follow it.\n",
             *expected / 3600.0, elapsed);
}

static double iterations_done(const chain *chains, int n) {
  double done = 0;
  for (int c = 0; c < n; c++) done += (double) chains[c].t;
  return done;
}

/* How many threads share a chain's gradient (gradient.c). The draws are the
   same for any number, so the number can follow the machine: every
   REPROBE_CHUNKS chunks (about a second) a quarter chunk runs on all of
   them and the next quarter on one thread, and the faster per iteration is
   kept until the next probe; the first probes of a run come sooner (after
   8, 16, 32 and 64 chunks), so that one probe spoilt by a passing load does
   not decide a whole short run (d = 2000, batch 100, 20,000 iterations: 1
   of 4 runs kept one thread after its first full probe, at 1.0x instead of
   1.6x).
   Why probe: the threads meet at every iteration, and when the cores are
   busy with other processes a thread waits for one at each meeting.
   Measured on this 2-core machine under a load average of 8.7 (d = 1000,
   batch 100): 2 threads gave 200-840 iterations/s against 5.7k-6.7k on one.
   A probe on all threads starts with an untimed eighth of a chunk: threads
   that had slept run slow for a millisecond or so (d = 2000, batch 100, on
   an idle machine: 34-55 us an iteration over the first 32-64 iterations on
   2 threads, then 25-27 us; 39-45 us on one), and without it one thread won
   probes that two would have won. */
#define REPROBE_CHUNKS 100
enum { SPLIT_SETTLED, SPLIT_PROBE_WARM, SPLIT_PROBE_ALL, SPLIT_PROBE_ONE };
typedef struct split_choice {
  int all, cur, phase, left, timed, interval, slow;
  double rate_all, rate_one;
} split_choice;

static void split_begin(split_choice *c, int all) {
  c->all = all;
  c->cur = 1;
  c->phase = SPLIT_SETTLED;
  c->left = 1;                 /* the second chunk is the first probe */
  c->timed = 0;
  c->interval = 8;
  c->slow = 0;
  c->rate_all = c->rate_one = 0;
}

/* A probe is a quarter chunk (its warm-up an eighth): when the threads lose
   they can lose tenfold, and short probes bound that to a few percent of
   the run. */
static R_xlen_t split_chunk(const split_choice *c, R_xlen_t chunk) {
  if (c->phase == SPLIT_SETTLED || chunk < 8) return chunk;
  return c->phase == SPLIT_PROBE_WARM ? chunk / 8 : chunk / 4;
}

/* after a chunk of `iters` iterations per chain that took `seconds` */
static void split_next(split_choice *c, double iters, double seconds) {
  if (c->all <= 1) return;
  const double rate = seconds > 0 ? iters / seconds : 1e300;
  switch (c->phase) {
  case SPLIT_PROBE_WARM:
    c->phase = SPLIT_PROBE_ALL;
    break;
  case SPLIT_PROBE_ALL:
    c->rate_all = rate;
    c->cur = 1;
    c->phase = SPLIT_PROBE_ONE;
    break;
  case SPLIT_PROBE_ONE:
    c->rate_one = rate;
    c->slow = 0;
    c->cur = c->rate_all >= rate ? c->all : 1;
    c->phase = SPLIT_SETTLED;
    c->left = c->interval;
    if (c->timed) c->interval = 2 * c->interval < REPROBE_CHUNKS ? 2 * c->interval : REPROBE_CHUNKS;
    break;
  default:
    /* every chunk checks the choice: a short probe can fall in a moment
       when another process sleeps. With a busy loop on one of the 2 cores
       (d = 2000, batch 100), probes on 2 threads took 23-26 us an
       iteration and the chunks after them 24-680 us (mostly 40-56),
       against 36 us on one thread: whole runs took 1.3-2.3x as long as on
       one thread, and 1.0-1.15x once two chunks in a row slower than the
       last one-thread rate send the chain back to one thread until the
       next probe. On an idle machine no chunk on 2 threads did (3 runs) */
    if (c->cur == 1) {
      c->rate_one = rate;
    } else if (rate < c->rate_one) {
      if (++c->slow >= 2) {
        c->cur = 1;
        c->slow = 0;
      }
    } else {
      c->slow = 0;
    }
    /* the first probe is a few iterations long, too short to tell (caches
       still cold: d = 2000, batch 100, 2 iterations took 126-166 us each on
       2 threads and 70-81 us on one, 25 us and 39 us once warm), so it is
       taken again as soon as a chunk lasts its full length */
    if (!c->timed && seconds >= CHUNK_SECONDS / 2) {
      c->timed = 1;
      c->left = 0;
    }
    if (--c->left <= 0) {
      c->cur = c->all;
      c->phase = SPLIT_PROBE_WARM;
    }
  }
}

/* every chain started together, then advanced a chunk at a time */
static double run_in_lockstep(const run_context *ctx, chain *chains, progress_line *p) {
  const run_settings *s = ctx->s;
  const int n = s->chains;
  const int nth = s->threads < n ? s->threads : n;
  const double total = (double) s->iter * n, started = wall_seconds();
  double expected = 0;
  for (int k = 0; k < n; k++) chain_start(ctx, &chains[s->order[k]]);
  R_xlen_t reached = 0, chunk = first_chunk(ctx);
  int stop = stop_requested(s);
  if (stop) {
    (void) user_interrupted(s);   /* takes a pending interrupt too (see there) */
    for (int c = 0; c < n; c++) never_run(&chains[c]);
  }
  split_choice split;
  split_begin(&split, ctx->estimator.threads);
#ifdef _OPENMP
  /* chains in threads, each sharing its gradient with threads of its own
     (gradient.c): the gradient's region is nested in the chains' */
  const int levels = omp_get_max_active_levels();
  if (nth > 1 && ctx->estimator.threads > 1 && levels < 2) omp_set_max_active_levels(2);
#endif
  while (reached < s->iter && !stop) {
    const R_xlen_t len = split_chunk(&split, chunk);
    const R_xlen_t target = reached + (len < s->iter - reached ? len : s->iter - reached);
    const double t0 = wall_seconds();
    for (int c = 0; c < n; c++) chains[c].threads = split.cur;
    if (nth > 1) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1)
#endif
      for (int k = 0; k < n; k++) chain_advance(ctx, &chains[s->order[k]], target);
    } else {
      for (int k = 0; k < n; k++) chain_advance(ctx, &chains[s->order[k]], target);
    }
    const double took = wall_seconds() - t0;
    const int probed = split.phase != SPLIT_SETTLED;
    split_next(&split, (double) (target - reached), took);
    reached = target;
    if (!probed) chunk = next_chunk(chunk, took);
    int running = 0;
    for (int c = 0; c < n; c++) {
      stop |= model_gave_up(&chains[c]);
      running |= chains[c].running;
    }
    if (!running) break;
    if (!stop && reached < s->iter && user_interrupted(s)) stop = 1;
    if (stop) for (int c = 0; c < n; c++) interrupt_chain(ctx, &chains[c]);
    estimate_length(ctx, wall_seconds() - started, iterations_done(chains, n), total, &expected);
    progress_update(p, chains, 0);
  }
#ifdef _OPENMP
  omp_set_max_active_levels(levels);
#endif
  return expected;
}

/* chains of a model that calls R: one after the other, on the main thread */
static double run_one_by_one(const run_context *ctx, chain *chains, progress_line *p) {
  const run_settings *s = ctx->s;
  const int n = s->chains;
  const double total = (double) s->iter * n, started = wall_seconds();
  double expected = 0;
  int stop = 0;
  for (int k = 0; k < n && !stop; k++) {
    chain *ch = &chains[s->order[k]];
    chain_start(ctx, ch);
    ch->threads = 1;           /* the model calls R: no threads */
    R_xlen_t chunk = first_chunk(ctx);
    if (stop_requested(s)) {
      stop = 1;
      (void) user_interrupted(s);   /* takes a pending interrupt too */
      never_run(ch);
    }
    while (ch->running && !stop) {
      const double t0 = wall_seconds();
      chain_advance(ctx, ch, ch->t + chunk);
      chunk = next_chunk(chunk, wall_seconds() - t0);
      stop = model_gave_up(ch) || (ch->running && user_interrupted(s));
      if (stop) interrupt_chain(ctx, ch);
      estimate_length(ctx, wall_seconds() - started, iterations_done(chains, n), total,
                      &expected);
      progress_update(p, chains, 0);
    }
  }
  return expected;
}

/* The sampling time is the iterations' alone, so that it can be set beside a
   loop timed the same way (bench/): the whole call also allocates the
   results, and R may collect its garbage then. On Adult, 2 x 10^5 iterations
   with every draw kept (200 MB), that collection took 47-58 ms of a 278 ms
   call (gc.time() around the .Call). */
run_times run_chains(const run_context *ctx, chain *chains) {
  progress_line p;
  const double started = wall_seconds();
  progress_begin(&p, ctx->s->progress, ctx->s->iter, ctx->s->chains);
  run_times times;
  times.expected = ctx->model->main_thread_only ? run_one_by_one(ctx, chains, &p)
                                                : run_in_lockstep(ctx, chains, &p);
  progress_update(&p, chains, 1);
  for (int c = 0; c < ctx->s->chains; c++)
    if (chains[c].res.status != STATUS_NOT_RUN) chain_finish(ctx, &chains[c]);
  times.sampling = wall_seconds() - started;
  return times;
}
