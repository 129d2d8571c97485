/* Registration of the routines R calls; nothing else lives here. */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include <R_ext/Visibility.h>
#include "sgld.h"

SEXP sgld_run(SEXP model, SEXP settings);
SEXP sgld_model_eval(SEXP model, SEXP w);
SEXP sgld_rng_draws(SEXP n, SEXP kind, SEXP bound, SEXP stream);
SEXP sgld_schedule_values(SEXP spec, SEXP t, SEXP total);
SEXP sgld_gradient_draws(SEXP model, SEXP settings);

/* through void (*)(void), the one function type any other may be cast to cleanly */
#define CALLDEF(name, n) {#name, (DL_FUNC) (void (*)(void)) &name, n}

static const R_CallMethodDef call_methods[] = {
  CALLDEF(sgld_run, 2),
  CALLDEF(sgld_model_eval, 2),
  CALLDEF(sgld_rng_draws, 4),
  CALLDEF(sgld_schedule_values, 3),
  CALLDEF(sgld_gradient_draws, 2),
  {NULL, NULL, 0}
};

/* the one symbol the package exports: everything else is hidden (src/Makevars) */
void attribute_visible R_init_sgld(DllInfo *dll) {
  rng_init_tables();
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
}
