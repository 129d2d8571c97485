/*
 * The exact Langevin pieces shared by mala() and the diagnostics of sgld():
 * the full-data log posterior and gradient, and Metropolis-Hastings with an
 * update rule as the proposal (the rule's step taken with the full-data
 * gradient; see log_q in sgld.h), for the target exp(U / tau).
 */
#include <string.h>
#include "sgld.h"

/* U(w) = log prior + full-data log likelihood, and its gradient into g */
double full_log_post(const sgld_model *model, const double *w, double *g,
                     const R_xlen_t *all_idx, double *work) {
  for (int j = 0; j < model->d; j++) g[j] = 0.0;
  if (model->loglik_grad) {
    const double ll = model->loglik_grad(model->data, w, all_idx, model->n, g, work);
    model->grad_logprior(model->data, w, g);
    return ll + model->logprior(model->data, w);
  }
  model->grad_loglik(model->data, w, all_idx, (int) model->n, g, work);
  model->grad_logprior(model->data, w, g);
  return model->loglik(model->data, w, NULL, model->n, work) + model->logprior(model->data, w);
}

/* The Leimkuhler-Matthews noise (update_whiten.c's whiten_lm,
   update_precond.c's precond_lm): xi = (r_prev + r) / 2 from this step's
   normals r and the last step's, which prev[0..d) keeps, prev[d] flagging
   that they were drawn (the first step draws them). */
void lm_normals(double *prev, double *xi, sgld_rng *rng, int d) {
  if (prev[d] == 0.0) {
    for (int j = 0; j < d; j++) prev[j] = rng_norm(rng);
    prev[d] = 1.0;
  }
  for (int j = 0; j < d; j++) {
    const double r = rng_norm(rng);
    xi[j] = 0.5 * (prev[j] + r);
    prev[j] = r;
  }
}

int update_is_proposal(const sgld_update *rule, int d) {
  return rule->log_q && update_state_length(rule, d) == 0;
}

/* The plain Langevin step stands in for rules that cannot be a proposal
   (kept state, or no proposal density): the diagnostic then describes plain
   SGLD at the same state and learning rate, as its documentation says. */
const sgld_update *diagnostic_proposal(const sgld_update *rule, int d, const void **opts) {
  if (update_is_proposal(rule, d)) return rule;
  *opts = NULL;    /* the plain step has no options */
  return &update_sgld;
}

void mh_propose(const sgld_update *rule, const double *w, const double *g, double eta,
                double tau, double *scratch, sgld_rng *rng, double *w_new, int d,
                const void *opts) {
  memcpy(w_new, w, d * sizeof(double));
  rule->step(w_new, g, NULL, eta, tau, scratch, rng, d, opts);
}

double mh_log_ratio(const sgld_update *rule, const double *w, double U, const double *g,
                    const double *w_new, double U_new, const double *g_new, double eta,
                    double tau, double *scratch, int d, const void *opts) {
  const double fwd = rule->log_q(w_new, w, g, eta, tau, scratch, d, opts);
  const double bwd = rule->log_q(w, w_new, g_new, eta, tau, scratch, d, opts);
  return (U_new - U) / tau + bwd - fwd;
}
