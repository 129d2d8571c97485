/*
 * Reading the R-side model and settings lists. These run on the main thread
 * before any sampling; a malformed list is an R error, never a crash.
 */
#include <string.h>
#include <R.h>
#include "sgld.h"

SEXP list_elt(SEXP list, const char *name) {
  if (TYPEOF(list) != VECSXP) error("internal: expected a list holding '%s'", name);
  SEXP names = getAttrib(list, R_NamesSymbol);
  R_xlen_t n = XLENGTH(list);
  if (names != R_NilValue)
    for (R_xlen_t i = 0; i < n; i++)
      if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
  error("internal: element '%s' is missing", name);
  return R_NilValue; /* not reached */
}

/* the element, or R_NilValue when the list has none of that name */
SEXP list_optional(SEXP list, const char *name) {
  if (TYPEOF(list) != VECSXP) error("internal: expected a list holding '%s'", name);
  SEXP names = getAttrib(list, R_NamesSymbol);
  if (names == R_NilValue) return R_NilValue;
  for (R_xlen_t i = 0; i < XLENGTH(list); i++)
    if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return VECTOR_ELT(list, i);
  return R_NilValue;
}

/* the element, or NULL when the list has none of that name or it is empty:
   for the optional per-observation fields of a model */
const double *list_optional_doubles(SEXP list, const char *name, R_xlen_t len) {
  SEXP x = list_optional(list, name);
  if (x == R_NilValue || XLENGTH(x) == 0) return NULL;
  return list_doubles(list, name, len);
}

double list_real(SEXP list, const char *name) {
  SEXP x = list_elt(list, name);
  if ((TYPEOF(x) != REALSXP && TYPEOF(x) != INTSXP && TYPEOF(x) != LGLSXP) || XLENGTH(x) != 1)
    error("internal: '%s' must be a single number", name);
  double v = asReal(x);
  if (ISNAN(v)) error("internal: '%s' is NA", name);
  return v;
}

int list_int(SEXP list, const char *name) {
  double v = list_real(list, name);
  if (v != floor(v) || fabs(v) > INT_MAX) error("internal: '%s' must be an integer", name);
  return (int) v;
}

const double *list_doubles(SEXP list, const char *name, R_xlen_t len) {
  SEXP x = list_elt(list, name);
  if (TYPEOF(x) != REALSXP) error("internal: '%s' must be a double vector", name);
  if (len >= 0 && XLENGTH(x) != len)
    error("internal: '%s' has length %lld, expected %lld", name,
          (long long) XLENGTH(x), (long long) len);
  return REAL(x);
}

/* an optional single-precision array of len floats, held by R as a raw vector
   of 4 len bytes (the native byte order, as writeBin(size = 4) writes it), or
   NULL when the list has no such element */
const float *list_optional_floats(SEXP list, const char *name, R_xlen_t len) {
  SEXP x = list_optional(list, name);
  if (x == R_NilValue) return NULL;
  if (TYPEOF(x) != RAWSXP || XLENGTH(x) != len * (R_xlen_t) sizeof(float))
    error("internal: '%s' must be a raw vector of %lld floats", name, (long long) len);
  return (const float *) RAW(x);
}
