/* A regression's rows from its spec, dense or sparse (rows.h). */
#include <R.h>
#include "rows.h"

void rows_from_spec(design_rows *X, SEXP spec, int p, R_xlen_t n) {
  X->p = p;
  X->z = NULL;
  X->start = X->val = X->y = NULL;
  X->col = NULL;
  SEXP sparse = list_optional(spec, "sparse");
  if (sparse == R_NilValue || !asInteger(sparse)) {
    X->z = model_rows(spec, (R_xlen_t) (p + 1) * n);
    return;
  }
  X->start = list_doubles(spec, "sp_start", n + 1);
  if (X->start[0] != 0) error("internal: 'sp_start' must begin at 0");
  for (R_xlen_t i = 0; i < n; i++)
    if (!(X->start[i] <= X->start[i + 1])) error("internal: 'sp_start' must not decrease");
  const R_xlen_t nnz = (R_xlen_t) X->start[n];
  X->val = list_int(spec, "sp_binary") ? NULL : list_doubles(spec, "sp_val", nnz);
  X->y = list_doubles(spec, "sp_y", n);
  SEXP col = list_elt(spec, "sp_col");
  if (TYPEOF(col) != INTSXP || XLENGTH(col) != nnz)
    error("internal: 'sp_col' must be an integer vector with one entry per non-zero");
  X->col = INTEGER(col);
  for (R_xlen_t k = 0; k < nnz; k++)
    if (X->col[k] < 0 || X->col[k] >= p) error("internal: 'sp_col' out of range");
}
