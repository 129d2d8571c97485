/*
 * Models compiled in other packages (the public interface is
 * inst/include/sgld_model.h).
 *
 * A plug-in fills an sgld_model_table and calls the registered callable
 * "sgld_model_pointer", which checks the table and returns an external
 * pointer to sgld's own copy of it. model_compiled() in R wraps that pointer
 * in a model object, and the builder below turns it into the driver's
 * sgld_model like any built-in model's.
 *
 * The copy lives in a raw vector in the pointer's protected slot, next to the
 * plug-in's `keep_alive` object: the garbage collector then frees both with the
 * pointer, without a finalizer. A pointer that went through saveRDS() comes
 * back with a NULL address, which is refused before anything is called.
 */
#include <string.h>
#include <R.h>
#include "sgld.h"
#include <sgld_model.h>

static SEXP compiled_tag(void) {
  return install("sgld_compiled_model");
}

int compiled_abi_version(void) {
  return SGLD_MODEL_ABI_VERSION;
}

SEXP compiled_model_pointer(const sgld_model_table *table, int abi_version, SEXP keep_alive) {
  if (abi_version != SGLD_MODEL_ABI_VERSION)
    error("sgld_model_pointer(): the model was compiled against version %d of sgld's model "
          "interface, but the installed sgld implements version %d; reinstall the package "
          "that defines the model", abi_version, SGLD_MODEL_ABI_VERSION);
  if (!table) error("sgld_model_pointer(): the model table is a NULL pointer");
  if (table->d < 1) error("sgld_model_pointer(): `d` must be at least 1, not %d", table->d);
  if (table->n < 1)
    error("sgld_model_pointer(): `n` must be at least 1, not %.0f", (double) table->n);
  /* the samplers call all four: mala() and the diagnostics need the log
     densities as much as sgld() needs the gradients */
  const char *missing = !table->grad_loglik ? "grad_loglik"
                      : !table->loglik ? "loglik"
                      : !table->grad_logprior ? "grad_logprior"
                      : !table->logprior ? "logprior" : NULL;
  if (missing) error("sgld_model_pointer(): `%s` is required but is a NULL function pointer",
                     missing);
  /* each chain allocates work_size + 1 doubles */
  if (table->work_size > (size_t) (R_XLEN_T_MAX / sizeof(double)) - 1)
    error("sgld_model_pointer(): `work_size` (%.0f doubles) is too large",
          (double) table->work_size);

  SEXP copy = PROTECT(allocVector(RAWSXP, sizeof(sgld_model_table)));
  memcpy(RAW(copy), table, sizeof(sgld_model_table));
  SEXP prot = PROTECT(allocVector(VECSXP, 2));
  SET_VECTOR_ELT(prot, 0, copy);
  SET_VECTOR_ELT(prot, 1, keep_alive);
  SEXP ptr = R_MakeExternalPtr(RAW(copy), compiled_tag(), prot);
  UNPROTECT(2);
  return ptr;
}

/* NULL if ptr is a live pointer made by compiled_model_pointer(), else what is
   wrong with it, to follow "`pointer` " in a message */
static const char *pointer_problem(SEXP ptr) {
  if (TYPEOF(ptr) != EXTPTRSXP)
    return "must be an external pointer made by sgld_model_pointer() in compiled code";
  SEXP prot = R_ExternalPtrProtected(ptr);
  if (R_ExternalPtrTag(ptr) != compiled_tag() || TYPEOF(prot) != VECSXP || XLENGTH(prot) != 2 ||
      TYPEOF(VECTOR_ELT(prot, 0)) != RAWSXP ||
      XLENGTH(VECTOR_ELT(prot, 0)) != (R_xlen_t) sizeof(sgld_model_table))
    return "is an external pointer, but not one made by sgld_model_pointer()";
  if (!R_ExternalPtrAddr(ptr))
    return "is a NULL external pointer: compiled models do not survive saving and "
           "reloading; build the model again in this R session";
  if (R_ExternalPtrAddr(ptr) != (void *) RAW(VECTOR_ELT(prot, 0)))
    return "is an external pointer, but not one made by sgld_model_pointer()";
  return NULL;
}

/* by memcpy, so the read does not depend on how R aligns a raw vector's bytes */
static sgld_model_table pointer_table(SEXP ptr) {
  sgld_model_table t;
  memcpy(&t, R_ExternalPtrAddr(ptr), sizeof t);
  return t;
}

/* for model_compiled(): the problem with `pointer` as a string, or c(d, n) */
SEXP sgld_compiled_info(SEXP ptr) {
  const char *problem = pointer_problem(ptr);
  if (problem) return mkString(problem);
  sgld_model_table t = pointer_table(ptr);
  SEXP out = PROTECT(allocVector(REALSXP, 2));
  REAL(out)[0] = t.d;
  REAL(out)[1] = (double) t.n;
  UNPROTECT(1);
  return out;
}

sgld_model model_compiled_build(SEXP spec) {
  SEXP ptr = list_elt(spec, "pointer");
  const char *problem = pointer_problem(ptr);
  if (problem) error("the compiled model's `pointer` %s", problem);
  sgld_model_table t = pointer_table(ptr);
  /* the R object's d and n size every buffer R allocates for the run */
  if (t.d != list_int(spec, "d") || (double) t.n != list_real(spec, "n"))
    error("the compiled model has d = %d and n = %.0f, but the model object says "
          "d = %d and n = %.0f; build it again with model_compiled()",
          t.d, (double) t.n, list_int(spec, "d"), list_real(spec, "n"));

  /* every field the public table lacks (metrics, and whatever the driver's
     model gains later) is left out, so it reads as absent: 0 or NULL */
  return (sgld_model) {
    .d = t.d,
    .n = t.n,
    .data = t.data,
    .grad_loglik = t.grad_loglik,
    .loglik = t.loglik,
    .grad_logprior = t.grad_logprior,
    .logprior = t.logprior,
    .in_domain = t.in_domain,
    .work_size = t.work_size
  };
}
