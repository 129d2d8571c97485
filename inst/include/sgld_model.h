/*
 * sgld_model.h: hand sgld a model written in C from another package.
 *
 * A model is a table of functions over the plug-in's own data. sgld's samplers
 * (sgld(), sgd(), mala(), posterior_mode(), log_posterior(), ...) call them in
 * their inner loop, without any R in between, so a compiled model runs at the
 * speed of sgld's built-in models and its chains can run in parallel threads.
 *
 * How to use it from a package (see inst/examples/sgldpoisson in sgld's
 * sources for a complete one):
 *
 *   DESCRIPTION:  Imports: sgld      LinkingTo: sgld
 *   NAMESPACE:    importFrom(sgld, model_compiled)   (so sgld is loaded first)
 *   C:            #include <sgld_model.h>
 *                 fill an sgld_model_table, then return
 *                 sgld_model_pointer(&table, keep_alive) from a .Call routine
 *   R:            sgld::model_compiled(.Call(<that routine>, ...), names = ...)
 *
 * sgld copies the table, so it may live on the stack. It does not copy the
 * data: keep whatever owns them (R vectors, an external pointer with a
 * finalizer, ...) in `keep_alive`, which the returned object references for as
 * long as the model exists. Do not modify the data while a model uses them.
 *
 * The rules every function of the table must follow:
 *   - Chains may run in OpenMP threads, several at once on the same data.
 *     The functions must be thread-safe (no writable globals or statics) and
 *     must not call the R API: no allocation, no error(), no warning(), no
 *     Rprintf(), no R_CheckUserInterrupt(), no R's RNG. A non-finite value is
 *     the way to report trouble: the sampler stops that chain and says where.
 *   - The data are read-only during a run.
 *   - Item indices idx[] are 0-based: 0 <= idx[k] < n. They may repeat
 *     (minibatches drawn with replacement) and come in any order.
 *   - Gradient functions ADD into g; they never overwrite or clear it.
 *   - w has d elements: the unconstrained parameters the samplers move (any
 *     transformation to the user's scale is done in R by model_compiled()'s
 *     `transform`, and its Jacobian belongs in logprior).
 *   - work points to work_size doubles of scratch owned by the calling chain
 *     (grad_loglik and loglik both receive it), with undefined contents on
 *     entry.
 *
 * A plug-in compiled against one version of this interface is refused by an
 * sgld implementing another (SGLD_MODEL_ABI_VERSION below), with an error
 * naming both versions and telling the user to reinstall the plug-in: a
 * table of another version has other function types, which sgld cannot
 * call safely. Version 1 had no `work` argument in loglik; a version-1
 * plug-in needs only to add that argument and be reinstalled.
 */
#ifndef SGLD_MODEL_H
#define SGLD_MODEL_H

#include <stddef.h>
#include <Rinternals.h>        /* SEXP, R_xlen_t */
#include <R_ext/Rdynload.h>    /* R_GetCCallable */

#ifdef __cplusplus
extern "C" {
#endif

/* Changes whenever the layout of sgld_model_table or the meaning of one of
   its fields changes. 2: loglik gained the `work` argument. */
#define SGLD_MODEL_ABI_VERSION 2

typedef struct sgld_model_table {
  /* number of unconstrained parameters, >= 1 */
  int d;
  /* number of data items (observations), >= 1 */
  R_xlen_t n;
  /* passed unchanged as the first argument of every function below */
  const void *data;

  /* Required. Add sum over k in [0, m) of grad_w log f(z_{idx[k]} | w) into
     g[0..d). */
  void (*grad_loglik)(const void *data, const double *w, const R_xlen_t *idx, int m,
                      double *g, double *work);

  /* Required. Return sum over k in [0, m) of log f(z_{idx[k]} | w); when idx
     is NULL, the sum over all n items (m is then n). Normalising constants
     are welcome but not needed by the samplers. work: as for grad_loglik. */
  double (*loglik)(const void *data, const double *w, const R_xlen_t *idx, R_xlen_t m,
                   double *work);

  /* Required. Add grad_w log p(w) into g[0..d). */
  void (*grad_logprior)(const void *data, const double *w, double *g);

  /* Required. Return log p(w), including the log Jacobian of any
     transformation to the unconstrained scale. */
  double (*logprior)(const void *data, const double *w);

  /* Optional (NULL if not needed). Return 0 when a finite w is still outside
     what the model can represent (say, a log scale so large that its
     exponential overflows); the sampler then stops the chain as diverged. */
  int (*in_domain)(const void *data, const double *w);

  /* doubles of scratch each chain passes to grad_loglik and loglik as
     `work`; 0 if none */
  size_t work_size;
} sgld_model_table;

/* The signature of the callable sgld registers as "sgld_model_pointer". */
typedef SEXP (*sgld_model_pointer_fn)(const sgld_model_table *table, int abi_version,
                                      SEXP keep_alive);

/* Check `table` and return an external pointer to sgld's copy of it, for
   sgld::model_compiled(). `keep_alive` (any R object, R_NilValue for none) is
   kept alive as long as the pointer is. Call it on R's main thread (from a
   .Call routine): invalid tables are reported by an R error. */
static inline SEXP sgld_model_pointer(const sgld_model_table *table, SEXP keep_alive) {
  /* looked up on each call: it is cheap next to building a model, and a
     cached address would go stale if sgld were unloaded and loaded again */
  /* through void (*)(void), the one function type any other converts to
     without a -Wcast-function-type warning */
  sgld_model_pointer_fn fn = (sgld_model_pointer_fn) (void (*)(void))
    R_GetCCallable("sgld", "sgld_model_pointer");
  return fn(table, SGLD_MODEL_ABI_VERSION, keep_alive);
}

/* The interface version of the sgld that is loaded, for plug-ins that want
   to check it themselves (sgld_model_pointer() checks it anyway). */
static inline int sgld_model_abi_version(void) {
  int (*fn)(void) = (int (*)(void)) (void (*)(void))
    R_GetCCallable("sgld", "sgld_model_abi_version");
  return fn();
}

#ifdef __cplusplus
}
#endif

#endif /* SGLD_MODEL_H */
