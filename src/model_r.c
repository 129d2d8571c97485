/*
 * A model whose four functions are R closures (model_custom()).
 *
 * The R side hands over one "caller" per function, made by model_custom():
 * callers of the data functions take (w, idx) with 1-based row indices (NULL
 * for all rows) and build the minibatch themselves; the prior callers take
 * (w).
 *
 * Nothing may jump out of the driver, so every call runs under
 * R_ToplevelExec, which stops any jump. A caller's calling handlers record an
 * error or an interrupt in the user's code (in the model's `bridge`
 * environment) and leave by the abort restart, which ends at that top level
 * without printing anything: one handler frame per call, several times
 * cheaper than tryCatch(). A jump with nothing recorded is one the callers
 * could not see (the user's own abort restart, a stack overflow). The price
 * of the top level is that handlers set around the sampler call do not see
 * conditions raised inside the callbacks; the callers collect warnings
 * themselves and the R side re-issues them after the run.
 *
 * After the first failure every function is a no-op and failed() says so;
 * the driver then stops the run and keeps the draws made so far. Every value
 * returned is checked (type, length, NA/NaN, infinities) before it is used.
 *
 * R objects that must outlive one call (the cached calls, the index vector,
 * the slot holding the latest result) live in the bridge environment, which
 * the model object, a .Call argument, keeps reachable for the whole run: no
 * PROTECT has to span the builder and the driver.
 */
#include <string.h>
#include <stdio.h>
#include <R.h>
#include "sgld.h"
#include <R_ext/GraphicsEngine.h>   /* R_interrupts_suspended, as devices use it */

enum { F_GRAD_LOGLIK = 0, F_LOGLIK = 1, F_GRAD_LOGPRIOR = 2, F_LOGPRIOR = 3, N_FUNS = 4 };
static const char *const fun_names[N_FUNS] = {"grad_loglik", "loglik", "grad_logprior",
                                              "logprior"};

typedef struct r_model {
  int d;
  R_xlen_t n;
  SEXP bridge;          /* environment where the callers record failures */
  SEXP call[N_FUNS];    /* caller(w, idx) or caller(w); R_NilValue if not given */
  SEXP holder;          /* list of one: the latest result, reachable while checked */
  SEXP idx;             /* integer row indices, reused while the batch size stays */
  int status;           /* MODEL_OK, MODEL_FAILED or MODEL_INTERRUPTED */
} r_model;

/* The driver passes models as const: this one keeps bookkeeping (the status,
   the cached index vector), which is safe because it runs on the main thread
   only, one call at a time. */
static r_model *writable(const void *data) {
  return (r_model *) data;
}

static void fail(r_model *R, int f, const char *message) {
  R->status = MODEL_FAILED;
  const char *names[] = {"fun", "message", "interrupt", ""};
  SEXP rec = PROTECT(mkNamed(VECSXP, names));
  SET_VECTOR_ELT(rec, 0, mkString(fun_names[f]));
  SET_VECTOR_ELT(rec, 1, mkString(message));
  SET_VECTOR_ELT(rec, 2, ScalarLogical(FALSE));
  defineVar(install("failure"), rec, R->bridge);
  UNPROTECT(1);
}

typedef struct eval_job {
  SEXP call, holder;
} eval_job;

/* the result goes straight into the holder: nothing between eval() and
   the caller's check can then collect it */
static void eval_body(void *p) {
  eval_job *job = p;
  SET_VECTOR_ELT(job->holder, 0, eval(job->call, R_GlobalEnv));
}

/* 1-based indices of the rows, or NULL for all rows in order (the whole
   data, which the caller then passes without copying it) */
static SEXP row_index(r_model *R, const R_xlen_t *idx, R_xlen_t m) {
  if (!idx) return R_NilValue;
  if (m == R->n) {
    R_xlen_t k = 0;
    while (k < m && idx[k] == k) k++;
    if (k == m) return R_NilValue;
  }
  if (R->idx == R_NilValue || XLENGTH(R->idx) != m) {
    SEXP v = PROTECT(allocVector(INTSXP, m));
    defineVar(install("idx"), v, R->bridge);
    UNPROTECT(1);
    R->idx = v;
  }
  int *p = INTEGER(R->idx);
  for (R_xlen_t k = 0; k < m; k++) p[k] = (int) idx[k] + 1;
  return R->idx;
}

/* set while call_r() holds interrupts for a caller (main thread only) */
static int holding_interrupts = 0;

static void check_interrupt_fn(void *unused) {
  (void) unused;
  R_CheckUserInterrupt();
}

/* Calls function f at w (with rows `rows` for the data functions). Returns
   its value, held in R->holder until the next call, or NULL after a failure.
   An interrupt that came while the engine ran is taken here first: left
   pending, R delivers it at some evaluation of the next call, possibly
   before the caller's handlers are set (a SIGINT to a session running such
   a model, non-interactive, was reported as a failed function in 2 of 2
   tries; with this, as an interrupt in 4 of 4). The poll costs nothing
   measurable: the handout's model in R functions took 0.50-0.53 s of CPU
   for 2e4 iterations with it and 0.51-0.52 s without (medians of 9 runs,
   load average 9-10 on 2 cores). */
static SEXP call_r(r_model *R, int f, const double *w, SEXP rows) {
  if (R->status != MODEL_OK) return NULL;
  if (R_ToplevelExec(check_interrupt_fn, NULL) == FALSE) {
    R->status = MODEL_INTERRUPTED;
    return NULL;
  }
  SEXP call = R->call[f];
  if (call == R_NilValue) {
    fail(R, f, "is needed here but was not given to model_custom()");
    return NULL;
  }
  /* a fresh w each time: the user's function may keep a reference to it */
  SEXP wv = allocVector(REALSXP, R->d);
  memcpy(REAL(wv), w, R->d * sizeof(double));
  SETCADR(call, wv);
  if (f == F_GRAD_LOGLIK || f == F_LOGLIK) SETCADDR(call, rows);
  eval_job job = {call, R->holder};
  /* The caller's handlers are not yet set while R evaluates the caller's
     own first lines; an interrupt taken there would leave by a jump nothing
     recorded (seen once in CI: a SIGINT to a future worker reported as a
     failed `grad_logprior`). So interrupts wait until the caller has set its
     handlers and allows them (sgld_allow_interrupts() below); one that came
     meanwhile is then delivered there, to the handlers. */
  Rboolean suspended = R_interrupts_suspended;
  int was_holding = holding_interrupts;
  R_interrupts_suspended = TRUE;
  holding_interrupts = 1;
  Rboolean finished = R_ToplevelExec(eval_body, &job);
  holding_interrupts = was_holding;
  R_interrupts_suspended = suspended;
  SETCADR(call, R_NilValue);
  if (f == F_GRAD_LOGLIK || f == F_LOGLIK) SETCADDR(call, R_NilValue);
  if (!finished) {
    SEXP rec = findVarInFrame(R->bridge, install("failure"));
    if (TYPEOF(rec) == VECSXP)     /* the caller recorded an error or an interrupt */
      R->status = asLogical(list_elt(rec, "interrupt")) == TRUE ? MODEL_INTERRUPTED
                                                                 : MODEL_FAILED;
    else
      fail(R, f, "was left by a jump that skipped its error handling (e.g. an abort restart "
                 "or a stack overflow)");
    return NULL;
  }
  return VECTOR_ELT(R->holder, 0);
}

/* Called by a caller once its handlers are set (R/model-custom-bridge.R):
   ends the hold call_r() began, which restores the former state when the
   caller returns. Outside call_r() (a caller run from R) it does nothing, so
   that it cannot undo a suspension of the user's. */
SEXP sgld_allow_interrupts(void) {
  if (holding_interrupts) {
    holding_interrupts = 0;
    R_interrupts_suspended = FALSE;
    if (R_interrupts_pending) R_CheckUserInterrupt();
  }
  return R_NilValue;
}

static const char *what_type(SEXP x) {
  if (isFactor(x)) return "a factor";
  switch (TYPEOF(x)) {
  case NILSXP: return "NULL";
  case LGLSXP: return "a logical vector";
  case STRSXP: return "a character vector";
  case VECSXP: return "a list";
  case CPLXSXP: return "a complex vector";
  case CLOSXP: case BUILTINSXP: case SPECIALSXP: return "a function";
  default: return "a value that is not a numeric vector";
  }
}

/* Reads `len` numbers from the value of function f into out (adding when
   `add`), after checking them. log densities (len 1) may be -Inf: a point
   of zero density, which MALA rejects like any other. */
static int take_numbers(r_model *R, int f, SEXP res, R_xlen_t len, double *out, int add) {
  char msg[200];
  const char *what = len == 1 ? "a single number" : "a numeric vector";
  if ((TYPEOF(res) != REALSXP && TYPEOF(res) != INTSXP) || isFactor(res)) {
    snprintf(msg, sizeof msg, "returned %s; it must return %s of length %lld", what_type(res),
             what, (long long) len);
    fail(R, f, msg);
    return 0;
  }
  if (XLENGTH(res) != len) {
    snprintf(msg, sizeof msg, "returned a vector of length %lld; it must return %s of length "
             "%lld%s", (long long) XLENGTH(res), what, (long long) len,
             len == 1 ? " (summed over the batch)" : " (one number per parameter)");
    fail(R, f, msg);
    return 0;
  }
  for (R_xlen_t j = 0; j < len; j++) {
    double v = TYPEOF(res) == REALSXP ? REAL(res)[j]
               : INTEGER(res)[j] == NA_INTEGER ? NA_REAL : (double) INTEGER(res)[j];
    if (ISNAN(v) || (isinf(v) && (len > 1 || v > 0))) {
      const char *bad = ISNA(v) ? "NA" : ISNAN(v) ? "NaN" : v > 0 ? "Inf" : "-Inf";
      if (len > 1)
        snprintf(msg, sizeof msg, "returned %s at position %lld; a gradient must be finite",
                 bad, (long long) j + 1);
      else
        snprintf(msg, sizeof msg, "returned %s; a log density must be a number below Inf "
                 "(-Inf is allowed)", bad);
      fail(R, f, msg);
      return 0;
    }
    out[j] = add ? out[j] + v : v;
  }
  return 1;
}

static void r_grad_loglik(const void *data, const double *w, const R_xlen_t *idx, int m,
                          double *g, double *work) {
  (void) work;
  r_model *R = writable(data);
  if (R->status != MODEL_OK) return;
  SEXP res = call_r(R, F_GRAD_LOGLIK, w, row_index(R, idx, m));
  if (res) take_numbers(R, F_GRAD_LOGLIK, res, R->d, g, 1);
}

static double r_loglik(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                       double *work) {
  (void) work;
  r_model *R = writable(data);
  double v = NA_REAL;
  if (R->status != MODEL_OK) return v;
  SEXP res = call_r(R, F_LOGLIK, w, row_index(R, idx, m));
  if (res && !take_numbers(R, F_LOGLIK, res, 1, &v, 0)) v = NA_REAL;
  return v;
}

static void r_grad_logprior(const void *data, const double *w, double *g) {
  r_model *R = writable(data);
  if (R->status != MODEL_OK) return;
  SEXP res = call_r(R, F_GRAD_LOGPRIOR, w, R_NilValue);
  if (res) take_numbers(R, F_GRAD_LOGPRIOR, res, R->d, g, 1);
}

static double r_logprior(const void *data, const double *w) {
  r_model *R = writable(data);
  double v = NA_REAL;
  if (R->status != MODEL_OK) return v;
  SEXP res = call_r(R, F_LOGPRIOR, w, R_NilValue);
  if (res && !take_numbers(R, F_LOGPRIOR, res, 1, &v, 0)) v = NA_REAL;
  return v;
}

static int r_failed(const void *data) {
  return ((const r_model *) data)->status;
}

sgld_model model_r_build(SEXP spec) {
  r_model *R = (r_model *) R_alloc(1, sizeof(r_model));
  R->d = list_int(spec, "d");
  R->n = (R_xlen_t) list_real(spec, "n");
  if (R->d < 1 || R->n < 1) error("internal: an R model needs d >= 1 and n >= 1");
  if (R->n > INT_MAX) error("internal: an R model needs n <= %d", INT_MAX);
  R->bridge = list_elt(spec, "bridge");
  if (TYPEOF(R->bridge) != ENVSXP) error("internal: 'bridge' must be an environment");
  SEXP callers = list_elt(spec, "callers");
  if (TYPEOF(callers) != VECSXP || XLENGTH(callers) != N_FUNS)
    error("internal: 'callers' must be a list of %d functions", N_FUNS);

  /* a fresh run: no failure, no warnings, no cached index vector */
  defineVar(install("failure"), R_NilValue, R->bridge);
  SEXP none = PROTECT(allocVector(INTSXP, 0));
  defineVar(install("warnings"), none, R->bridge);
  UNPROTECT(1);
  defineVar(install("idx"), R_NilValue, R->bridge);
  R->idx = R_NilValue;
  R->status = MODEL_OK;

  SEXP kept = PROTECT(allocVector(VECSXP, N_FUNS + 1));
  for (int f = 0; f < N_FUNS; f++) {
    SEXP fn = VECTOR_ELT(callers, f);
    if (fn == R_NilValue) {
      if (f == F_GRAD_LOGLIK || f == F_GRAD_LOGPRIOR)
        error("internal: the R model has no %s", fun_names[f]);
      R->call[f] = R_NilValue;
      continue;
    }
    if (TYPEOF(fn) != CLOSXP) error("internal: the caller of %s must be a closure", fun_names[f]);
    SEXP call = f == F_GRAD_LOGLIK || f == F_LOGLIK ? lang3(fn, R_NilValue, R_NilValue)
                                                    : lang2(fn, R_NilValue);
    SET_VECTOR_ELT(kept, f, call);
    R->call[f] = call;
  }
  R->holder = allocVector(VECSXP, 1);
  SET_VECTOR_ELT(kept, N_FUNS, R->holder);
  defineVar(install("calls"), kept, R->bridge);
  UNPROTECT(1);

  /* fields not named here (optional functions this model lacks) are zero */
  return (sgld_model) {
    .d = R->d,
    .n = R->n,
    .data = R,
    .grad_loglik = r_grad_loglik,
    .loglik = r_loglik,
    .grad_logprior = r_grad_logprior,
    .logprior = r_logprior,
    .failed = r_failed,
    .main_thread_only = 1
  };
}
