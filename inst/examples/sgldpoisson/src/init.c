/* Registration of the package's one .Call routine. */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>

SEXP poisson_pointer(SEXP xt, SEXP y, SEXP log_y_fact, SEXP prior_sd);

static const R_CallMethodDef call_methods[] = {
  /* through void (*)(void), the one function type any other converts to cleanly */
  {"poisson_pointer", (DL_FUNC) (void (*)(void)) &poisson_pointer, 4},
  {NULL, NULL, 0}
};

void R_init_sgldpoisson(DllInfo *dll) {
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
}
