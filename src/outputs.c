/*
 * The results of a run: one R list whose slots are named in one table
 * (OUTPUT_SLOTS), allocated once before the chains start and filled in place.
 * Each chain gets views into the slots (chain_output) and writes only there,
 * so chains in threads never share a byte of output.
 */
#include <string.h>
#include <R.h>
#include <Rinternals.h>
#include "run.h"

/* every slot of the result: its index and the name R reads it by */
#define OUTPUT_SLOTS(X)                                                              \
  X(OUT_DRAWS, "draws")             /* per chain: kept draws x kept parameters */    \
  X(OUT_ETA, "eta")                 /* learning rate of each kept draw */            \
  X(OUT_ITERATION, "iteration")     /* iteration of each kept draw */                \
  X(OUT_TRACE, "trace")             /* the estimator's trace per kept draw, or NA */ \
  X(OUT_KEPT, "kept")                                                                \
  X(OUT_STATUS, "status")                                                            \
  X(OUT_STOP_ITER, "stop_iter")                                                      \
  X(OUT_CLIP_COUNT, "clip_count")                                                    \
  X(OUT_LAST, "last")               /* d x chains: final parameters */               \
  X(OUT_STATE, "state")             /* the rule's, then the estimator's state */     \
  X(OUT_RNG, "rng")                 /* both random streams per chain */              \
  X(OUT_MONITOR, "monitor")                                                          \
  X(OUT_MONITORED, "monitored")                                                      \
  X(OUT_DIAGNOSTICS, "diagnostics")                                                  \
  X(OUT_DIAGNOSED, "diagnosed")                                                      \
  X(OUT_ACCEPTED, "accepted")                                                        \
  X(OUT_COLLECT_FROM, "collect_from")                                                \
  X(OUT_MEAN, "moment_mean")        /* d x chains running moments */                 \
  X(OUT_M2, "moment_m2")                                                             \
  X(OUT_WMEAN, "moment_wmean")                                                       \
  X(OUT_WEIGHT, "moment_weight")                                                     \
  X(OUT_MOMENT_N, "moment_count")   /* iterations in each chain's moments */         \
  X(OUT_EXPECTED, "expected_seconds")                                               \
  X(OUT_SAMPLING, "sampling_seconds")   /* the iterations' own time (chunks.c) */

#define SLOT_INDEX(index, name) index,
#define SLOT_NAME(index, name) name,
enum { OUTPUT_SLOTS(SLOT_INDEX) N_OUTPUT_SLOTS };
static const char *output_names[] = {OUTPUT_SLOTS(SLOT_NAME) ""};   /* mkNamed takes it non-const */

static double *slot(SEXP out, int i) { return REAL(VECTOR_ELT(out, i)); }

SEXP alloc_outputs(const run_settings *s, int d, size_t state_len) {
  const int chains = s->chains;
  const R_xlen_t cap = s->capacity;
  SEXP out = PROTECT(mkNamed(VECSXP, output_names));
  SEXP draws = allocVector(VECSXP, chains);
  SET_VECTOR_ELT(out, OUT_DRAWS, draws);
  for (int c = 0; c < chains; c++) SET_VECTOR_ELT(draws, c, allocMatrix(REALSXP, cap, s->n_keep));
  SET_VECTOR_ELT(out, OUT_ETA, allocMatrix(REALSXP, cap, chains));
  SET_VECTOR_ELT(out, OUT_ITERATION, allocMatrix(REALSXP, cap, chains));
  /* NA where the estimator keeps no trace (sgld.h: trace) */
  SEXP trace = allocMatrix(REALSXP, cap, chains);
  SET_VECTOR_ELT(out, OUT_TRACE, trace);
  for (R_xlen_t k = 0; k < XLENGTH(trace); k++) REAL(trace)[k] = NA_REAL;
  SET_VECTOR_ELT(out, OUT_STATUS, allocVector(INTSXP, chains));
  SET_VECTOR_ELT(out, OUT_LAST, allocMatrix(REALSXP, d, chains));
  SET_VECTOR_ELT(out, OUT_STATE, allocMatrix(REALSXP, (int) state_len, chains));
  SET_VECTOR_ELT(out, OUT_RNG, allocVector(RAWSXP, 2 * chains * (R_xlen_t) sizeof(sgld_rng)));
  /* per chain, one row per evaluation */
  SET_VECTOR_ELT(out, OUT_MONITOR, allocVector(REALSXP, (R_xlen_t) s->n_monitor_cols *
                                                          s->n_monitor * chains));
  SET_VECTOR_ELT(out, OUT_DIAGNOSTICS, allocVector(REALSXP, (R_xlen_t) DIAG_COLS * s->n_diag * chains));
  SET_VECTOR_ELT(out, OUT_MEAN, allocMatrix(REALSXP, d, chains));
  SET_VECTOR_ELT(out, OUT_M2, allocMatrix(REALSXP, d, chains));
  SET_VECTOR_ELT(out, OUT_WMEAN, allocMatrix(REALSXP, d, chains));
  const int per_chain[] = {OUT_KEPT, OUT_STOP_ITER, OUT_CLIP_COUNT, OUT_MONITORED,
                           OUT_DIAGNOSED, OUT_ACCEPTED, OUT_COLLECT_FROM, OUT_WEIGHT,
                           OUT_MOMENT_N};
  for (size_t k = 0; k < sizeof per_chain / sizeof *per_chain; k++)
    SET_VECTOR_ELT(out, per_chain[k], allocVector(REALSXP, chains));
  SET_VECTOR_ELT(out, OUT_EXPECTED, allocVector(REALSXP, 1));
  SET_VECTOR_ELT(out, OUT_SAMPLING, allocVector(REALSXP, 1));
  UNPROTECT(1);
  return out;
}

/* chain c's views into the outputs */
chain_output chain_views(SEXP out, const run_settings *s, int c, int d, size_t state_len) {
  const R_xlen_t cap = s->capacity;
  chain_output v;
  v.draws = REAL(VECTOR_ELT(VECTOR_ELT(out, OUT_DRAWS), c));
  v.eta = slot(out, OUT_ETA) + (R_xlen_t) c * cap;
  v.iteration = slot(out, OUT_ITERATION) + (R_xlen_t) c * cap;
  v.trace = slot(out, OUT_TRACE) + (R_xlen_t) c * cap;
  v.last = slot(out, OUT_LAST) + (R_xlen_t) c * d;
  v.state = slot(out, OUT_STATE) + c * state_len;
  v.monitor = slot(out, OUT_MONITOR) + (R_xlen_t) c * s->n_monitor * s->n_monitor_cols;
  v.diag = slot(out, OUT_DIAGNOSTICS) + (R_xlen_t) c * s->n_diag * DIAG_COLS;
  v.mean = slot(out, OUT_MEAN) + (R_xlen_t) c * d;
  v.m2 = slot(out, OUT_M2) + (R_xlen_t) c * d;
  v.wmean = slot(out, OUT_WMEAN) + (R_xlen_t) c * d;
  return v;
}

/* what the chains left in their records, into the per-chain slots */
/* A chain may keep fewer draws than the capacity (a run that stopped early,
   thinning by distance, the sampling parts of a cyclical schedule, whose
   capacity is an upper bound): the rows it did not write are set to NA, so
   that no output holds uninitialised memory. */
static void mark_unwritten(SEXP out, int c, R_xlen_t kept) {
  SEXP draws = VECTOR_ELT(VECTOR_ELT(out, OUT_DRAWS), c);
  const R_xlen_t cap = nrows(draws), cols = ncols(draws);
  for (R_xlen_t j = 0; j < cols; j++)
    for (R_xlen_t i = kept; i < cap; i++) REAL(draws)[i + j * cap] = NA_REAL;
  for (R_xlen_t i = kept; i < cap; i++) {
    slot(out, OUT_ETA)[i + c * cap] = NA_REAL;
    slot(out, OUT_ITERATION)[i + c * cap] = NA_REAL;
  }
}

void write_results(SEXP out, const chain *chains, int n, run_times times) {
  unsigned char *rng = RAW(VECTOR_ELT(out, OUT_RNG));
  for (int c = 0; c < n; c++) {
    const chain_result *r = &chains[c].res;
    mark_unwritten(out, c, r->kept);
    slot(out, OUT_KEPT)[c] = (double) r->kept;
    INTEGER(VECTOR_ELT(out, OUT_STATUS))[c] = r->status;
    slot(out, OUT_STOP_ITER)[c] = r->stop_iter;
    slot(out, OUT_CLIP_COUNT)[c] = r->clip_count;
    slot(out, OUT_MONITORED)[c] = (double) r->monitored;
    slot(out, OUT_DIAGNOSED)[c] = (double) r->diagnosed;
    slot(out, OUT_ACCEPTED)[c] = r->accepted;
    slot(out, OUT_COLLECT_FROM)[c] = r->collect_from;
    slot(out, OUT_WEIGHT)[c] = r->weight;
    slot(out, OUT_MOMENT_N)[c] = (double) r->moment_n;
    /* the layout a continued run reads: every chain's stream, then every
       chain's diagnostics stream */
    memcpy(rng + c * sizeof(sgld_rng), &chains[c].rng, sizeof(sgld_rng));
    memcpy(rng + (n + c) * sizeof(sgld_rng), &chains[c].diag_rng, sizeof(sgld_rng));
  }
  slot(out, OUT_EXPECTED)[0] = times.expected;
  slot(out, OUT_SAMPLING)[0] = times.sampling;
}
