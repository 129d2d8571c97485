/*
 * The models by type: R's model object names its type (spec$type), and this
 * table maps it to the builder and to the names of the model's held-out
 * metrics, which sgld_codes() reports to R. The builders need not count
 * their metrics: the count comes from the names here.
 */
#include <string.h>
#include <R.h>
#include "sgld.h"

typedef struct model_entry {
  const char *name;
  sgld_model (*build)(SEXP spec);
  const char *const *metrics;     /* NULL-terminated, or NULL: none */
} model_entry;

static const model_entry model_table[] = {
  {"linear", model_linear_build, model_linear_metrics},
  {"logistic", model_logistic_build, model_logistic_metrics},
  {"mixture", model_mixture_build, model_mixture_metrics},
  {"ica", model_ica_build, model_ica_metrics},
  {"sv", model_sv_build, NULL},
  {"poisson", model_poisson_build, model_poisson_metrics},
  {"negbin", model_negbin_build, model_negbin_metrics},
  {"glmm", model_glmm_build, NULL},
  /* one builder, two types: the held-out metrics differ by family */
  {"mlp_regression", model_mlp_build, model_mlp_regression_metrics},
  {"mlp_classification", model_mlp_build, model_mlp_classification_metrics},
  {"compiled", model_compiled_build, NULL},
  {"r", model_r_build, NULL},
};
#define N_MODELS ((int) (sizeof model_table / sizeof *model_table))

sgld_model find_model(SEXP spec) {
  const char *type = CHAR(asChar(list_elt(spec, "type")));
  for (int i = 0; i < N_MODELS; i++) {
    if (strcmp(type, model_table[i].name) != 0) continue;
    sgld_model model = model_table[i].build(spec);
    model.n_metrics = model.metrics ? name_count(model_table[i].metrics) : 0;
    return model;
  }
  error("internal: unknown model type '%s'", type);
  return model_table[0].build(spec); /* not reached */
}

const char *model_type_name(int i) {
  return i >= 0 && i < N_MODELS ? model_table[i].name : NULL;
}

const char *const *model_metric_names(int i) {
  return i >= 0 && i < N_MODELS ? model_table[i].metrics : NULL;
}
