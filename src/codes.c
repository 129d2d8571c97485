/*
 * The one source of every code R and C share (see "shared codes" in
 * sgld.h). Each table lists the names by code, so a name and its code are
 * written once. R passes names, which list_code() turns into codes; R reads
 * the names of what C reports back (chain status, diagnostics columns,
 * held-out metrics) from sgld_codes(), which returns them all.
 */
#include <string.h>
#include <R.h>
#include "sgld.h"

static const char *const schedule_names[] = {
  [SCHEDULE_CONSTANT] = "constant", [SCHEDULE_POLY] = "poly",
  [SCHEDULE_PIECEWISE] = "piecewise", [SCHEDULE_EXP] = "exp",
  [SCHEDULE_CYCLICAL] = "cyclical", NULL
};
static const char *const clip_names[] = {
  [CLIP_NONE] = "none", [CLIP_NORM] = "norm", [CLIP_VALUE] = "value", NULL
};
static const char *const burnin_names[] = {
  [BURNIN_COUNT] = "count", [BURNIN_THRESHOLD] = "threshold", NULL
};
static const char *const thin_names[] = {
  [THIN_COUNT] = "count", [THIN_DISTANCE] = "distance", NULL
};
static const char *const moment_scale_names[] = {
  [MOMENT_IDENTITY] = "identity", [MOMENT_EXP] = "exp", [MOMENT_TANH] = "tanh",
  [MOMENT_EXP_PLUS2] = "exp_plus2", NULL
};
static const char *const link_names[] = {
  [LINK_IDENTITY] = "identity", [LINK_LOGIT] = "logit", [LINK_LOG] = "log", NULL
};
static const char *const status_names[] = {
  [STATUS_DONE] = "done", [STATUS_NONFINITE_PARAMETER] = "nonfinite_parameter",
  [STATUS_NONFINITE_GRADIENT] = "nonfinite_gradient", [STATUS_INTERRUPTED] = "interrupted",
  [STATUS_NOT_RUN] = "not_run", [STATUS_MODEL_FAILED] = "model_failed", NULL
};
static const char *const diagnostic_names[] = {
  [DIAG_ITERATION] = "iteration", [DIAG_ETA] = "lr", [DIAG_ALPHA] = "alpha",
  [DIAG_VAR_INJECTED] = "var_injected", [DIAG_VAR_GRADIENT] = "var_gradient",
  [DIAG_REJECTION] = "rejection", NULL
};

/* Each table under the name sgld_codes() gives it in R, with what it names
   for messages. The first ones, indexed by code_table, are those R passes
   names from; the others name what C reports back. */
typedef struct { const char *key, *what; const char *const *names; } name_table;
static const name_table tables[] = {
  [CODES_SCHEDULE] = {"schedule", "schedule type", schedule_names},
  [CODES_CLIP] = {"clip", "clip type", clip_names},
  [CODES_BURNIN] = {"burnin", "burn-in mode", burnin_names},
  [CODES_THIN] = {"thin", "thinning mode", thin_names},
  [CODES_MOMENT_SCALE] = {"moment_scale", "moment scale", moment_scale_names},
  [CODES_LINK] = {"link", "link", link_names},
  {"status", "chain status", status_names},
  {"diagnostics", "diagnostics column", diagnostic_names},
};
#define N_TABLES ((int) (sizeof tables / sizeof *tables))

int name_count(const char *const *names) {
  int n = 0;
  while (names && names[n]) n++;
  return n;
}

static int code_of_string(const name_table *t, const char *s) {
  for (int k = 0; t->names[k]; k++)
    if (strcmp(s, t->names[k]) == 0) return k;
  error("internal: unknown %s '%s'", t->what, s);
  return -1; /* not reached */
}

static int code_of(const name_table *t, SEXP name) {
  if (TYPEOF(name) != STRSXP || XLENGTH(name) != 1 || STRING_ELT(name, 0) == NA_STRING)
    error("internal: a %s must be given as one name", t->what);
  return code_of_string(t, CHAR(STRING_ELT(name, 0)));
}

int *list_codes(SEXP list, const char *name, R_xlen_t len, code_table table) {
  const name_table *t = &tables[table];
  SEXP names = list_elt(list, name);
  if (TYPEOF(names) != STRSXP || XLENGTH(names) != len)
    error("internal: '%s' must hold %lld names of a %s", name, (long long) len, t->what);
  int *codes = (int *) R_alloc(len + 1, sizeof(int));
  for (R_xlen_t i = 0; i < len; i++) {
    if (STRING_ELT(names, i) == NA_STRING) error("internal: a %s must not be NA", t->what);
    codes[i] = code_of_string(t, CHAR(STRING_ELT(names, i)));
  }
  return codes;
}

int name_code(SEXP name, code_table table) {
  return code_of(&tables[table], name);
}

int list_code(SEXP list, const char *name, code_table table) {
  return code_of(&tables[table], list_elt(list, name));
}

static SEXP names_vector(const char *const *names) {
  const int n = name_count(names);
  SEXP out = PROTECT(allocVector(STRSXP, n));
  for (int k = 0; k < n; k++) SET_STRING_ELT(out, k, mkChar(names[k]));
  UNPROTECT(1);
  return out;
}

/* the names name_of(0), name_of(1), ... up to the first NULL */
static SEXP names_from(const char *(*name_of)(int)) {
  int n = 0;
  while (name_of(n)) n++;
  SEXP out = PROTECT(allocVector(STRSXP, n));
  for (int i = 0; i < n; i++) SET_STRING_ELT(out, i, mkChar(name_of(i)));
  UNPROTECT(1);
  return out;
}

/* the held-out metrics' names, a list named by model type */
static SEXP metric_names(void) {
  SEXP types = PROTECT(names_from(model_type_name));
  const int n = (int) XLENGTH(types);
  SEXP out = PROTECT(allocVector(VECSXP, n));
  for (int i = 0; i < n; i++) SET_VECTOR_ELT(out, i, names_vector(model_metric_names(i)));
  setAttrib(out, R_NamesSymbol, types);
  UNPROTECT(2);
  return out;
}

/* the limits C holds the user's arguments to, named */
static SEXP limits(void) {
  SEXP out = PROTECT(allocVector(INTSXP, 1));
  INTEGER(out)[0] = VI_MAX_SAMPLES;
  setAttrib(out, R_NamesSymbol, mkString("vi_samples"));
  UNPROTECT(1);
  return out;
}

/* Every name R and C share, each character vector in code order (element
   k + 1 names code k), the metrics' names by model type and the limits, for
   R to read once per session. */
SEXP sgld_codes(void) {
  SEXP out = PROTECT(allocVector(VECSXP, N_TABLES + 3));
  SEXP keys = PROTECT(allocVector(STRSXP, N_TABLES + 3));
  for (int t = 0; t < N_TABLES; t++) {
    SET_VECTOR_ELT(out, t, names_vector(tables[t].names));
    SET_STRING_ELT(keys, t, mkChar(tables[t].key));
  }
  SET_VECTOR_ELT(out, N_TABLES, metric_names());
  SET_STRING_ELT(keys, N_TABLES, mkChar("metrics"));
  SET_VECTOR_ELT(out, N_TABLES + 1, names_from(update_rule_name));
  SET_STRING_ELT(keys, N_TABLES + 1, mkChar("rules"));
  SET_VECTOR_ELT(out, N_TABLES + 2, limits());
  SET_STRING_ELT(keys, N_TABLES + 2, mkChar("limits"));
  setAttrib(out, R_NamesSymbol, keys);
  UNPROTECT(2);
  return out;
}

/* For the tests: the code C reads for `name` from the table that
   sgld_codes() calls `table`, one of those R passes names from. */
SEXP sgld_code_of(SEXP table, SEXP name) {
  if (TYPEOF(table) != STRSXP || XLENGTH(table) != 1) error("internal: 'table' must be a name");
  for (int t = 0; t < CODES_INPUT_TABLES; t++)
    if (strcmp(CHAR(STRING_ELT(table, 0)), tables[t].key) == 0)
      return ScalarInteger(code_of(&tables[t], name));
  error("internal: unknown code table '%s'", CHAR(STRING_ELT(table, 0)));
  return R_NilValue; /* not reached */
}
