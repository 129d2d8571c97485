/*
 * What the count models (model_poisson.c, model_negbin.c) read of their rows
 * alike: the design with the counts (rows.h), log y_i! once per row, the
 * optional offsets and case weights, and the coefficients' prior
 * (prior_centred.h). One reader, so that the two models cannot drift apart
 * in what a spec means.
 */
#ifndef SGLD_COUNT_ROWS_H
#define SGLD_COUNT_ROWS_H

#include <R.h>
#include <Rmath.h>
#include "sgld.h"
#include "rows.h"
#include "prior_centred.h"

typedef struct count_rows {
  int p;
  R_xlen_t n;
  design_rows X;              /* covariates and counts, dense or sparse */
  const double *log_fact;     /* log y_i!, per row */
  const double *offset, *wt;  /* per row, or NULL */
  coef_prior prior;
} count_rows;

static inline void count_rows_read(count_rows *C, SEXP spec, const char *model) {
  C->p = list_int(spec, "p");
  C->n = (R_xlen_t) list_real(spec, "n");
  if (C->p < 1 || C->n < 1) error("internal: %s model needs p >= 1 and n >= 1", model);
  rows_from_spec(&C->X, spec, C->p, C->n);
  double *lf = (double *) R_alloc((size_t) C->n, sizeof(double));
  for (R_xlen_t i = 0; i < C->n; i++) lf[i] = lgammafn(rows_y(&C->X, i) + 1.0);
  C->log_fact = lf;
  C->offset = list_optional_doubles(spec, "obs_offset", C->n);
  C->wt = list_optional_doubles(spec, "obs_weight", C->n);
  coef_prior_read(&C->prior, spec, C->p);
}

#endif
