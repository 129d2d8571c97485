/* Registration of the routines R calls; nothing else lives here. */
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Rdynload.h>
#include <R_ext/Visibility.h>
#include "sgld.h"
#include <sgld_model.h>

SEXP sgld_run(SEXP model, SEXP settings);
SEXP sgld_model_eval(SEXP model, SEXP w);
SEXP sgld_model_moves(SEXP model, SEXP w, SEXP times);
SEXP sgld_log_joint_draws(SEXP model, SEXP draws);
SEXP sgld_imh_batch(SEXP model, SEXP location, SEXP factor, SEXP df, SEXP K, SEXP from_w,
                    SEXP from_lw, SEXP stream);
SEXP sgld_ess_ar(SEXP x);
SEXP sgld_model_expected(SEXP model, SEXP mu, SEXP sd);
SEXP sgld_loglik_draws(SEXP model, SEXP W, SEXP items);
SEXP sgld_model_fused(SEXP model, SEXP w);
SEXP sgld_posterior_mode(SEXP model, SEXP settings);
SEXP sgld_model_info(SEXP model);
SEXP sgld_pointwise_loglik(SEXP model, SEXP draws, SEXP threads);
SEXP sgld_whiten_eval(SEXP model, SEXP w, SEXP tau, SEXP inverse);
SEXP sgld_rng_draws(SEXP n, SEXP kind, SEXP bound, SEXP stream);
SEXP sgld_streams(SEXP chains);
SEXP sgld_state_sizes(SEXP model, SEXP rule, SEXP gradient, SEXP gradient_opts);
SEXP sgld_rule_factor(SEXP model, SEXP rule, SEXP opts, SEXP w, SEXP state);
SEXP sgld_leapfrog(SEXP model, SEXP factor, SEXP w, SEXP r, SEXP step);
SEXP sgld_file_rows(SEXP args);
SEXP sgld_rows_lost_since(void);
SEXP sgld_allow_interrupts(void);
SEXP sgld_stack_rows(SEXP X, SEXP y);
SEXP sgld_float_rows(SEXP z);
SEXP sgld_sparse_gram_rank(SEXP row_start, SEXP col, SEXP val, SEXP d, SEXP tol);
SEXP sgld_schedule_values(SEXP spec, SEXP t, SEXP total);
SEXP sgld_gradient_draws(SEXP model, SEXP settings);
SEXP sgld_compiled_info(SEXP pointer);
SEXP sgld_codes(void);
SEXP sgld_code_of(SEXP table, SEXP name);
SEXP sgld_predict(SEXP X, SEXP chains, SEXP pick, SEXP offset, SEXP link, SEXP keep,
                  SEXP threads);
SEXP sgld_predict_mixture(SEXP x, SEXP chains, SEXP pick, SEXP sigma2_x, SEXP keep);
SEXP sgld_ksd(SEXP x, SEXP scores, SEXP c, SEXP beta);
SEXP sgld_psis_loo(SEXP ll, SEXP chains, SEXP r_eff, SEXP zn, SEXP weights, SEXP threads);
/* callables for other packages' compiled models (model_compiled.c) */
SEXP compiled_model_pointer(const sgld_model_table *table, int abi_version, SEXP keep_alive);
int compiled_abi_version(void);

/* through void (*)(void), the one function type any other may be cast to cleanly */
#define CALLDEF(name, n) {#name, (DL_FUNC) (void (*)(void)) &name, n}

static const R_CallMethodDef call_methods[] = {
  CALLDEF(sgld_run, 2),
  CALLDEF(sgld_model_eval, 2),
  CALLDEF(sgld_model_moves, 3),
  CALLDEF(sgld_log_joint_draws, 2),
  CALLDEF(sgld_imh_batch, 8),
  CALLDEF(sgld_ess_ar, 1),
  CALLDEF(sgld_model_expected, 3),
  CALLDEF(sgld_loglik_draws, 3),
  CALLDEF(sgld_model_fused, 2),
  CALLDEF(sgld_posterior_mode, 2),
  CALLDEF(sgld_model_info, 1),
  CALLDEF(sgld_pointwise_loglik, 3),
  CALLDEF(sgld_whiten_eval, 4),
  CALLDEF(sgld_rng_draws, 4),
  CALLDEF(sgld_streams, 1),
  CALLDEF(sgld_state_sizes, 4),
  CALLDEF(sgld_rule_factor, 5),
  CALLDEF(sgld_leapfrog, 5),
  CALLDEF(sgld_file_rows, 1),
  CALLDEF(sgld_rows_lost_since, 0),
  CALLDEF(sgld_allow_interrupts, 0),
  CALLDEF(sgld_stack_rows, 2),
  CALLDEF(sgld_float_rows, 1),
  CALLDEF(sgld_sparse_gram_rank, 5),
  CALLDEF(sgld_schedule_values, 3),
  CALLDEF(sgld_gradient_draws, 2),
  CALLDEF(sgld_compiled_info, 1),
  CALLDEF(sgld_codes, 0),
  CALLDEF(sgld_code_of, 2),
  CALLDEF(sgld_predict, 7),
  CALLDEF(sgld_predict_mixture, 5),
  CALLDEF(sgld_ksd, 4),
  CALLDEF(sgld_psis_loo, 6),
  {NULL, NULL, 0}
};

/* the one symbol the package exports: everything else is hidden (src/Makevars) */
void attribute_visible R_init_sgld(DllInfo *dll) {
  rng_init_tables();
  R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
  /* the names and signatures sgld_model.h's wrappers expect; assigning to the
     header's function type makes the compiler check the signature */
  const sgld_model_pointer_fn model_pointer = compiled_model_pointer;
  R_RegisterCCallable("sgld", "sgld_model_pointer", (DL_FUNC) (void (*)(void)) model_pointer);
  R_RegisterCCallable("sgld", "sgld_model_abi_version",
                      (DL_FUNC) (void (*)(void)) compiled_abi_version);
  R_useDynamicSymbols(dll, FALSE);
  R_forceSymbols(dll, TRUE);
}
