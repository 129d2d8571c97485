/*
 * The update rules by name: R passes rule$name and the rule's own options
 * list, and this is the only place that maps one to the other. The driver
 * asks the rule itself for everything else (its options, the sizes of its
 * state and scratch), so it never names a rule.
 */
#include <string.h>
#include <R.h>
#include "sgld.h"

static const sgld_update *const update_table[] = {
  &update_sgld, &update_precond, &update_psgld, &update_sghmc, &update_momentum,
  &update_adagrad, &update_rmsprop, &update_adam, &update_natural,
  &update_whiten,
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
