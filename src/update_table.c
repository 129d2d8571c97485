/*
 * The update rules by name: R passes rule$name and the rule's own options
 * list, and this is the only place that maps one to the other. The driver
 * asks the rule itself for everything else (its options, the sizes of its
 * state and scratch), so it never names a rule.
 */
#include <string.h>
#include <R.h>
#include <Rinternals.h>
#include "sgld.h"

static const sgld_update *const update_table[] = {
  &update_sgld, &update_precond, &update_psgld, &update_sghmc, &update_momentum,
  &update_adagrad, &update_rmsprop, &update_adam, &update_natural,
  &update_whiten, &update_whiten_lm, &update_precond_lm,
};
#define N_UPDATES ((int) (sizeof update_table / sizeof *update_table))

const sgld_update *find_update(const char *name) {
  for (int i = 0; i < N_UPDATES; i++)
    if (strcmp(name, update_table[i]->name) == 0) return update_table[i];
  error("internal: unknown update rule '%s'", name);
  return NULL; /* not reached */
}

/* the name of the i-th rule, NULL past the last (for sgld_codes()) */
const char *update_rule_name(int i) {
  return i >= 0 && i < N_UPDATES ? update_table[i]->name : NULL;
}

const void *update_build_opts(const sgld_update *u, SEXP opts, int d, const sgld_model *model) {
  if (TYPEOF(opts) != VECSXP)
    error("internal: the options of update rule '%s' must be a list", u->name);
  if (u->build_model) {
    if (!model) error("internal: update rule '%s' needs the run's model", u->name);
    return u->build_model(opts, model);
  }
  return u->build ? u->build(opts, d) : NULL;
}

size_t update_state_length(const sgld_update *u, int d) {
  return u->state_length ? u->state_length(d) : 0;
}

size_t update_scratch_length(const sgld_update *u, int d) {
  return u->scratch_length ? u->scratch_length(d) : 0;
}

/* What a chain's saved state must hold, for R to check a fit before it is
   continued: the rule's state for the parameters it moves (w and the gradient
   estimator's own, e.g. a variational q's scales) followed by the estimator's
   state, as run.c lays them out; and the bytes of one random stream. */
SEXP sgld_state_sizes(SEXP model_spec, SEXP rule, SEXP gradient, SEXP gradient_opts) {
  if (TYPEOF(rule) != STRSXP || XLENGTH(rule) != 1 || STRING_ELT(rule, 0) == NA_STRING)
    error("internal: 'rule' must be one rule name");
  if (TYPEOF(gradient) != STRSXP || XLENGTH(gradient) != 1 || STRING_ELT(gradient, 0) == NA_STRING)
    error("internal: 'gradient' must be one estimator name");
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  const sgld_update *u = find_update(CHAR(STRING_ELT(rule, 0)));
  const sgld_gradient *g = find_gradient(CHAR(STRING_ELT(gradient, 0)));
  const void *gopts = gradient_build_opts(g, gradient_opts, &model);
  const size_t p = (size_t) d + gradient_extra_length(g, d, gopts);
  SEXP out = PROTECT(allocVector(REALSXP, 2));
  REAL(out)[0] = (double) (update_state_length(u, (int) p) + gradient_state_length(g, d, gopts));
  REAL(out)[1] = (double) sizeof(sgld_rng);
  UNPROTECT(1);
  return out;
}

/* The factor T (d x d, column-major) of a rule's preconditioner at w, given
   the rule's state for that chain, as the run's own threshold diagnostics
   take it (chain.c); for R's threshold check after a run (R/warnings.R), so
   that each rule's preconditioner is written once, in its rule. NULL for a
   rule without one (plain SGLD: the identity). */
SEXP sgld_rule_factor(SEXP model_spec, SEXP rule, SEXP opts, SEXP w, SEXP state) {
  if (TYPEOF(rule) != STRSXP || XLENGTH(rule) != 1 || STRING_ELT(rule, 0) == NA_STRING)
    error("internal: 'rule' must be one rule name");
  sgld_model model = find_model(model_spec);
  const int d = model.d;
  const sgld_update *u = find_update(CHAR(STRING_ELT(rule, 0)));
  if (!u->precond_factor) return R_NilValue;
  if (!isReal(w) || XLENGTH(w) != d) error("internal: 'w' must hold %d numbers", d);
  const size_t state_len = update_state_length(u, d);
  if (!isReal(state) || (size_t) XLENGTH(state) < state_len)
    error("internal: 'state' must hold the rule's %lu numbers", (unsigned long) state_len);
  const void *o = update_build_opts(u, opts, d, &model);
  /* the rule's state followed by its scratch, as a chain lays them out */
  double *buf = (double *) R_alloc(state_len + update_scratch_length(u, d) + 1, sizeof(double));
  if (state_len) memcpy(buf, REAL(state), state_len * sizeof(double));
  SEXP T = PROTECT(allocMatrix(REALSXP, d, d));
  u->precond_factor(REAL(w), buf, REAL(T), buf + state_len, d, o);
  UNPROTECT(1);
  return T;
}
