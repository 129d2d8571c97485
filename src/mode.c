/*
 * The posterior mode and the Hessian there, by Newton's method, for models
 * with a Hessian of their own (sgld.h: hess_loglik and hess_logprior):
 * each evaluation is one pass over the data that gives the log posterior,
 * its gradient and its Hessian, and a handful of them reach the mode to
 * machine precision where quasi-Newton steps in R took hundreds of passes
 * (bench/defaults.md: 45 of 49 s of a default sgld() call at n = 10^6,
 * d = 31, went to the mode).
 *
 * Steps are Levenberg-Marquardt's: (H + lambda D) p = -g, with D the
 * diagonal of H, so the steps do not depend on the predictors' scales, and
 * lambda > 0 only after a step that failed to lower minus the log posterior
 * as its quadratic model promised (or where H is not positive definite).
 *
 * On large data (n at least 4 max(16384, 64 d)) the search starts on
 * subsamples: the first of max(16384, 64 d) items, scaled by n over their
 * number, each next one 8 times larger while 4 times it is at most n, the
 * full data last; each stage starts from the last one's mode,
 * which is a few of the next stage's posterior sds away, so most steps cost
 * a fraction of a pass. The subsamples are evenly spread over the items
 * (the Weyl sequence k a mod n, a near n times the golden ratio and coprime
 * with n), so data sorted by any variable are sampled across its range, and
 * the result is a function of the data alone.
 *
 * Full passes go through the items in chunks of 65,536, with an interrupt
 * poll between chunks; everything is R_alloc'd, so an interrupt frees it.
 */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Lapack.h>
#include <float.h>
#include <stdlib.h>
#include "sgld.h"

#ifndef FCONE
#define FCONE
#endif

#define MODE_CHUNK 65536
#define MODE_STAGE_GROWTH 8

typedef struct objective {
  const sgld_model *model;
  const R_xlen_t *idx;   /* the stage's items, or NULL for all */
  R_xlen_t m;            /* how many */
  double scale;          /* n / m */
  R_xlen_t *chunk;       /* MODE_CHUNK indices, for full passes */
  double *work;          /* work_size + 4 d doubles */
  double passes;         /* evaluations so far, in full passes */
} objective;

typedef struct point {
  double f;              /* minus the log posterior */
  double *g, *H;         /* its gradient and Hessian */
  int ok;                /* finite, and inside the model's domain */
} point;

/* minus the log posterior, its gradient and Hessian at w */
static void evaluate(objective *ob, const double *w, point *pt) {
  const sgld_model *M = ob->model;
  const int d = M->d;
  const R_xlen_t dd = (R_xlen_t) d * d;
  for (int j = 0; j < d; j++) pt->g[j] = 0.0;
  for (R_xlen_t k = 0; k < dd; k++) pt->H[k] = 0.0;
  pt->ok = !M->in_domain || M->in_domain(M->data, w);
  if (!pt->ok) return;
  double ll = 0.0;
  if (ob->idx) {
    ll = M->hess_loglik(M->data, w, ob->idx, ob->m, pt->g, pt->H, ob->work);
  } else {
    for (R_xlen_t start = 0; start < M->n; start += MODE_CHUNK) {
      const R_xlen_t len = M->n - start < MODE_CHUNK ? M->n - start : MODE_CHUNK;
      for (R_xlen_t k = 0; k < len; k++) ob->chunk[k] = start + k;
      ll += M->hess_loglik(M->data, w, ob->chunk, len, pt->g, pt->H, ob->work);
      R_CheckUserInterrupt();
    }
  }
  ob->passes += (double) ob->m / (double) M->n;
  const double s = ob->scale;
  for (int j = 0; j < d; j++) pt->g[j] *= s;
  for (R_xlen_t k = 0; k < dd; k++) pt->H[k] *= s;
  M->grad_logprior(M->data, w, pt->g);
  M->hess_logprior(M->data, w, pt->H);
  pt->f = -(s * ll + M->logprior(M->data, w));
  for (int j = 0; j < d; j++) pt->g[j] = -pt->g[j];
  for (R_xlen_t k = 0; k < dd; k++) pt->H[k] = -pt->H[k];
  if (!R_FINITE(pt->f)) pt->ok = 0;
  for (int j = 0; j < d && pt->ok; j++) if (!R_FINITE(pt->g[j])) pt->ok = 0;
  for (R_xlen_t k = 0; k < dd && pt->ok; k++) if (!R_FINITE(pt->H[k])) pt->ok = 0;
}

/* Solves (H + lambda D) p = -g by Cholesky (A: d x d scratch); 0 if that
   matrix is not positive definite */
static int lm_step(int d, const double *H, const double *g, const double *D, double lambda,
                   double *A, double *p) {
  const R_xlen_t dd = (R_xlen_t) d * d;
  for (R_xlen_t k = 0; k < dd; k++) A[k] = H[k];
  for (int j = 0; j < d; j++) A[j + (R_xlen_t) j * d] += lambda * D[j];
  int info = 0, one = 1;
  F77_CALL(dpotrf)("L", &d, A, &d, &info FCONE);
  if (info != 0) return 0;
  for (int j = 0; j < d; j++) p[j] = -g[j];
  F77_CALL(dpotrs)("L", &d, &one, A, &d, p, &d, &info FCONE);
  if (info != 0) return 0;
  for (int j = 0; j < d; j++) if (!R_FINITE(p[j])) return 0;
  return 1;
}

/* Newton's method on one stage from w (overwritten by the stage's mode),
   until the Newton decrement g' H^-1 g (the squared distance to the mode in
   posterior sds, for a Gaussian) is below tol. `at` holds the evaluation at
   w on entry and on exit; `trial` and the rest are scratch. Returns 1 when
   converged, with the last Newton step (not taken) in p, or 0 when maxit
   steps were not enough or no step could be taken. */
static int newton_stage(objective *ob, double *w, point *at, point *trial, double tol,
                        int maxit, int *steps, double *A, double *p, double *D, double *wt) {
  const int d = ob->model->d;
  double lambda = 0.0, last_decrement = R_PosInf, grow = 2.0;
  for (int it = 0; it < maxit; it++) {
    double dmax = 0.0;
    for (int j = 0; j < d; j++) {
      D[j] = fabs(at->H[j + (R_xlen_t) j * d]);
      if (D[j] > dmax) dmax = D[j];
    }
    for (int j = 0; j < d; j++) D[j] += 1e-12 * dmax + DBL_MIN;
    /* the smallest lambda whose matrix is positive definite, from the last one */
    int solved = lm_step(d, at->H, at->g, D, lambda, A, p);
    while (!solved) {
      lambda = lambda > 0 ? 10.0 * lambda : 1e-6;
      if (lambda > 1e30) return 0;
      solved = lm_step(d, at->H, at->g, D, lambda, A, p);
    }
    double gp = 0.0, pHp = 0.0;
    for (int j = 0; j < d; j++) {
      gp += at->g[j] * p[j];
      double hp = 0.0;
      for (int k = 0; k < d; k++) hp += at->H[j + (R_xlen_t) k * d] * p[k];
      pHp += p[j] * hp;
    }
    /* converged: the Newton decrement, from lambda = 0 (a damped step's
       is smaller), below tol */
    if (-gp < tol) {
      if (lambda == 0.0) return 1;
      if (-gp < 1e-4 && lm_step(d, at->H, at->g, D, 0.0, A, wt)) {
        double dec = 0.0;
        for (int j = 0; j < d; j++) dec -= at->g[j] * wt[j];
        for (int j = 0; j < d; j++) p[j] = wt[j];
        if (dec < tol) return 1;
      }
    }
    const double predicted = -(gp + 0.5 * pHp);
    /* below a few ulps of f the change in f is rounding: a step the
       quadratic model trusts is then taken on its word, and where such
       steps stop shrinking the decrement the gradient is rounding too */
    const double noise = 64.0 * DBL_EPSILON * fabs(at->f);
    if (lambda == 0.0 && predicted <= noise && -gp > 0.5 * last_decrement) {
      for (int j = 0; j < d; j++) p[j] = 0.0;
      return 1;
    }
    if (lambda == 0.0) last_decrement = -gp;
    for (int j = 0; j < d; j++) wt[j] = w[j] + p[j];
    evaluate(ob, wt, trial);
    (*steps)++;
    const double actual = at->f - trial->f;
    const int accept = trial->ok && (actual >= 0.1 * predicted ||
                                     (predicted <= noise && actual >= -noise));
    if (accept) {
      for (int j = 0; j < d; j++) w[j] = wt[j];
      point tmp = *at;
      *at = *trial;
      *trial = tmp;
      /* Nielsen's update, with a floor of 1/10: lambda shrinks as the
         quadratic model proves right (rho = actual / predicted near 1),
         and below 1e-6 it is dropped for pure Newton steps */
      const double rho = predicted > noise ? actual / predicted : 1.0, c = 2.0 * rho - 1.0;
      lambda *= fmax(0.1, 1.0 - c * c * c);
      if (lambda < 1e-6) lambda = 0.0;
      grow = 2.0;
    } else {
      lambda = lambda > 0 ? grow * lambda : 1e-3;
      grow *= 2.0;
      if (lambda > 1e30) return 0;
    }
  }
  return 0;
}

static R_xlen_t gcd_of(R_xlen_t a, R_xlen_t b) {
  while (b) {
    const R_xlen_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static int compare_index(const void *a, const void *b) {
  const R_xlen_t x = *(const R_xlen_t *) a, y = *(const R_xlen_t *) b;
  return (x > y) - (x < y);
}

/* m items spread over n: k a mod n for k < m, sorted (reads in order) */
static R_xlen_t *spread_items(R_xlen_t n, R_xlen_t m) {
  R_xlen_t a = (R_xlen_t) (0.6180339887498949 * (double) n);
  if (a < 1) a = 1;
  while (gcd_of(a, n) != 1) a++;
  R_xlen_t *idx = (R_xlen_t *) R_alloc(m, sizeof(R_xlen_t));
  R_xlen_t i = 0;
  for (R_xlen_t k = 0; k < m; k++) {
    idx[k] = i;
    i += a;
    if (i >= n) i -= n;
  }
  qsort(idx, (size_t) m, sizeof(R_xlen_t), compare_index);
  return idx;
}

/* settings: init (sampler scale), maxit, tol. NULL when the model has no
   Hessian (or its prior has none at init): the caller then searches
   otherwise. */
SEXP sgld_posterior_mode(SEXP model_spec, SEXP settings) {
  sgld_model model = find_model(model_spec);
  if (!model.hess_loglik || !model.hess_logprior || model.main_thread_only) return R_NilValue;
  const int d = model.d;
  const R_xlen_t n = model.n, dd = (R_xlen_t) d * d;
  double *w = (double *) R_alloc(d, sizeof(double));
  const double *init = list_doubles(settings, "init", d);
  for (int j = 0; j < d; j++) w[j] = init[j];
  const int maxit = list_int(settings, "maxit");
  const double tol = list_real(settings, "tol");
  {
    double *probe = (double *) R_alloc(dd, sizeof(double));
    for (R_xlen_t k = 0; k < dd; k++) probe[k] = 0.0;
    if (!model.hess_logprior(model.data, w, probe)) return R_NilValue;
  }
  point at = {0, (double *) R_alloc(d, sizeof(double)), (double *) R_alloc(dd, sizeof(double)), 0};
  point trial = {0, (double *) R_alloc(d, sizeof(double)), (double *) R_alloc(dd, sizeof(double)), 0};
  double *A = (double *) R_alloc(dd, sizeof(double));
  double *p = (double *) R_alloc(d, sizeof(double));
  double *D = (double *) R_alloc(d, sizeof(double));
  double *wt = (double *) R_alloc(d, sizeof(double));
  objective ob = {&model, NULL, n, 1.0, (R_xlen_t *) R_alloc(MODE_CHUNK, sizeof(R_xlen_t)),
                  (double *) R_alloc(model.work_size + 4 * (size_t) d + 1, sizeof(double)), 0.0};
  R_xlen_t first = 64 * (R_xlen_t) d;
  if (first < 16384) first = 16384;
  int steps = 0, converged = 0;
  for (R_xlen_t m = first; ; m *= MODE_STAGE_GROWTH) {
    const int full = m * 4 > n;
    ob.m = full ? n : m;
    ob.idx = full ? NULL : spread_items(n, m);
    ob.scale = full ? 1.0 : (double) n / (double) m;
    evaluate(&ob, w, &at);
    if (!at.ok) {
      if (full) break;
      continue;   /* a start the subsample cannot evaluate: on to a larger one */
    }
    /* a subsample's mode is about sqrt(n / m) of the full data's posterior
       sds from the full data's: a tenth of its own sd is close enough */
    converged = newton_stage(&ob, w, &at, &trial, full ? tol : 1e-2, maxit, &steps, A, p, D, wt);
    if (full) break;
  }
  if (!at.ok) error("the log posterior or its gradient is not finite at the start of the "
                    "search for the mode");
  /* the mode is the last point plus its Newton step, whose length is below
     1e-6 posterior sds: taken, it leaves an error of the order of its
     square. The gradient and log posterior are recomputed there; the
     Hessian, which moves by a relative 1e-6 at most, is the last point's. */
  if (converged) {
    double *wn = wt;
    for (int j = 0; j < d; j++) wn[j] = w[j] + p[j];
    if (!model.in_domain || model.in_domain(model.data, wn)) {
      double *g = trial.g;
      for (int j = 0; j < d; j++) g[j] = 0.0;
      full_grad_loglik(&model, wn, g, ob.work);
      model.grad_logprior(model.data, wn, g);
      const double f = -(model.loglik(model.data, wn, NULL, n, ob.work) +
                         model.logprior(model.data, wn));
      int finite = R_FINITE(f);
      for (int j = 0; j < d; j++) finite = finite && R_FINITE(g[j]);
      if (finite) {
        for (int j = 0; j < d; j++) {
          w[j] = wn[j];
          at.g[j] = -g[j];
        }
        at.f = f;
        ob.passes += 2;
      }
    }
  }
  const char *names[] = {"sampler", "log_posterior", "gradient", "hessian", "iterations",
                         "passes", "converged", ""};
  SEXP out = PROTECT(mkNamed(VECSXP, names));
  SEXP w_ = allocVector(REALSXP, d);
  SET_VECTOR_ELT(out, 0, w_);
  SEXP g_ = allocVector(REALSXP, d);
  SET_VECTOR_ELT(out, 2, g_);
  SEXP H_ = allocMatrix(REALSXP, d, d);
  SET_VECTOR_ELT(out, 3, H_);
  for (int j = 0; j < d; j++) {
    REAL(w_)[j] = w[j];
    REAL(g_)[j] = -at.g[j];
  }
  for (R_xlen_t k = 0; k < dd; k++) REAL(H_)[k] = -at.H[k];
  SET_VECTOR_ELT(out, 1, ScalarReal(-at.f));
  SET_VECTOR_ELT(out, 4, ScalarInteger(steps));
  SET_VECTOR_ELT(out, 5, ScalarReal(ob.passes));
  SET_VECTOR_ELT(out, 6, ScalarLogical(converged));
  UNPROTECT(1);
  return out;
}
