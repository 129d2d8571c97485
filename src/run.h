/*
 * The driver's own types, shared by its files and by nothing else:
 *   run.c      the entry point: unpack the settings, hand over, pack the results
 *   chunks.c   the chains in chunks of iterations, threads, interrupts, progress
 *   chain.c    one chain's iterations (the package's only loop over iterations)
 *   outputs.c  the output slots and what each chain writes into them
 *   moments.c  running means and variances of every parameter
 *   progress.c the progress display and the wall clock
 * None of these types holds an R object: below the entry point and outputs.c,
 * everything works on plain C memory.
 */
#ifndef SGLD_RUN_H
#define SGLD_RUN_H

#include "sgld.h"

/* chain status, collection modes and diagnostic columns are codes shared
   with R: their enums are in sgld.h and their names in codes.c */

/* Everything a run was asked to do, read once from R's settings list. */
typedef struct run_settings {
  R_xlen_t iter, burnin, thin, capacity;  /* capacity: rows of output per chain */
  int chains, m, replace;
  double tau;
  sgld_schedule schedule;
  int clip_type;
  double clip_threshold;
  int threads;
  int progress;                /* draw the progress display on stderr */
  double long_run_seconds;     /* a longer expected run says so when progress is off */
  R_xlen_t monitor_every;      /* 0: no monitor */
  R_xlen_t n_monitor;          /* evaluations per chain */
  const sgld_model *test;      /* held-out data for the monitor, or NULL */
  int burnin_mode, thin_mode;
  double alpha0, distance;     /* threshold on alpha; summed eta between kept draws */
  R_xlen_t diag_every;         /* 0: no diagnostics */
  R_xlen_t n_diag;
  R_xlen_t diag_sample;        /* items for the score covariance */
  int mala;                    /* Metropolis-Hastings accept step, full data */
  int leapfrog;                /* mala: mean leapfrog steps a proposal (1: MALA itself) */
  const double *metric;        /* their metric's lower factor T (d x d), NULL for I */
  const void *opts;            /* the update rule's own settings (its build()) */
  const void *grad_opts;       /* the gradient estimator's (its build()) */
  int p;                       /* what the rule moves: d + the estimator's extra parameters */
  size_t rule_state, grad_state;  /* doubles of each one's kept state per chain */
  const double *cv_mode, *cv_grad;  /* control variates: a mode and the full gradient there */
  const double *t_offset;      /* per chain: iterations already run (continued runs) */
  const R_xlen_t *all_idx;     /* 0..n-1, for full-data evaluations */
  const double *init;          /* d x chains starting points */
  const double *state_init;    /* the rule's state per chain, or NULL for a fresh one */
  const int *order;            /* chains are offered to threads in this order (0-based) */
  /* coordinates drawn again one at a time after each step (coordinate.c):
     coord[k]'s rows are coord_rows[coord_start[k] .. coord_start[k + 1]) */
  int n_coord;
  const int *coord;
  const R_xlen_t *coord_start, *coord_rows;
  const double *coord_width;   /* slice sampling's first width, per coordinate */
  int n_keep;                  /* parameters whose draws are stored */
  const int *keep;             /* their 0-based indices, or NULL for all d in order */
  const int *moment_scale;     /* per parameter: the scale of its running moments */
  int n_monitor_cols;          /* iteration, log joint per datum, test metrics */
  const char *stop_file;       /* a run as a future: stop, as if interrupted, once it exists, */
  const char *stop_dir;        /* or once its directory (the session's) is gone, */
  int stop_dir_seen;           /* if it existed when the run began */
} run_settings;

/* per-chain memory, allocated before the loop, not kept after the run */
typedef struct chain_scratch {
  double *w, *w_prev, *g;      /* theta (p doubles): w, then the estimator's extra parameters */
  double *g_bar, *work;
  double *state;               /* the rule's state, then its scratch */
  double *grad_state;          /* the estimator's state, then its scratch */
  double *w_new, *g_new, *diag_buf;
  double *noise;   /* the step's normals, drawn during the gradient; NULL: not so drawn */
  double *momentum;            /* leapfrog trajectories' momentum (d), NULL without */
  R_xlen_t *idx, *diag_idx;
  void *batch_memory;
} chain_scratch;

/* where one chain writes its results (views into the R outputs) */
typedef struct chain_output {
  double *draws, *eta, *trace, *iteration, *last, *monitor, *diag, *state;
  double *mean, *m2, *wmean;   /* running moments, d each */
} chain_output;

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
  double weight;               /* summed learning rate of the moments' iterations */
  R_xlen_t moment_n;           /* iterations in the running moments */
} chain_result;

/* One chain between chunks: everything that carries over from one iteration
   to the next lives here or in its scratch, so cutting the run into chunks
   cannot change a single draw. */
typedef struct chain {
  int id;                      /* 0-based */
  R_xlen_t t;                  /* iterations of this run done */
  int running;                 /* 0 once done or stopped */
  sgld_rng rng, diag_rng;
  sgld_minibatch mb;
  double U;                    /* mala: log posterior at w, with g its gradient */
  int collecting;
  R_xlen_t since_kept;
  double eta_since_kept;
  R_xlen_t next_monitor, next_diag;
  /* threads sharing this chain's minibatch gradient in the current chunk,
     at most estimator.threads (chunks.c chooses; the draws do not depend on it) */
  int threads;
  chain_scratch sc;
  chain_output out;
  chain_result res;
} chain;

/* what every chain shares, read-only during the run */
typedef struct run_context {
  const sgld_model *model;
  const sgld_update *rule;
  const sgld_gradient *grad;
  const run_settings *s;
  sgld_estimator estimator;
} run_context;

/* chain.c */
void chain_start(const run_context *ctx, chain *ch);
void chain_advance(const run_context *ctx, chain *ch, R_xlen_t t_end);
void chain_finish(const run_context *ctx, chain *ch);

/* coordinate.c: the coordinate updates of one iteration */
void coordinate_sweep(const sgld_model *model, const run_settings *s, double *w,
                      sgld_rng *rng);

/* chunks.c: run every chain to the end, or until interrupted */
typedef struct {
  double expected;   /* the run's expected length in seconds, estimated from its start */
  double sampling;   /* seconds the chains' iterations took, start to finish */
} run_times;
run_times run_chains(const run_context *ctx, chain *chains);

/* outputs.c: the R side of the results (main thread only); state_len: the
   rule's and the estimator's kept state, one after the other */
SEXP alloc_outputs(const run_settings *s, int d, size_t state_len);
chain_output chain_views(SEXP out, const run_settings *s, int c, int d, size_t state_len);
void write_results(SEXP out, const chain *chains, int n, run_times times);

/* moments.c */
void moments_reset(chain_output *out, chain_result *res, int d);
void moments_add(chain_output *out, chain_result *res, const double *w, double eta,
                 const int *scale, int d);

/* progress.c */
double wall_seconds(void);
typedef struct progress_line {
  int on, drawn;
  double started, last_drawn;
  R_xlen_t total;              /* iterations per chain */
  int chains;
} progress_line;
void progress_begin(progress_line *p, int on, R_xlen_t total, int chains);
void progress_update(progress_line *p, const chain *chains, int final);

#endif
