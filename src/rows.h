/*
 * A regression's data rows, dense or sparse, behind one set of inline
 * accessors (model_poisson.c, model_negbin.c, model_linear.c).
 *
 * Dense: z is (p + 1) x n, column i is (x_i, y_i). Sparse (a design that is
 * mostly zeros, such as text features or one-hot factors of many levels):
 * observation i has the non-zeros val[k] in the 0-based columns col[k], for
 * k in start[i] .. start[i+1]-1 (columns increasing within a row), val NULL
 * when every non-zero is 1, and the responses y apart.
 *
 * Every sum runs over the row's columns in increasing order from the value
 * the caller starts it at; the terms a sparse row skips are exact zeros
 * (0 * w_j), so both storages give the same bits for finite coefficients,
 * and the same draws.
 */
#ifndef SGLD_ROWS_H
#define SGLD_ROWS_H

#include "sgld.h"

typedef struct design_rows {
  int p;
  const double *z;                  /* dense, or NULL */
  const double *start, *val, *y;    /* sparse */
  const int *col;
} design_rows;

/* The model's rows from its spec: sparse when spec$sparse is 1 (sp_start,
   sp_col, sp_val or sp_binary = 1, sp_y), else the dense z (model_rows()). */
void rows_from_spec(design_rows *X, SEXP spec, int p, R_xlen_t n);

/* s + x_i' w */
static inline double rows_dot(const design_rows *X, R_xlen_t i, const double *w, double s) {
  if (X->z) {
    const double *zi = X->z + i * (X->p + 1);
    for (int j = 0; j < X->p; j++) s += zi[j] * w[j];
    return s;
  }
  const R_xlen_t lo = (R_xlen_t) X->start[i], hi = (R_xlen_t) X->start[i + 1];
  if (X->val) for (R_xlen_t q = lo; q < hi; q++) s += X->val[q] * w[X->col[q]];
  else for (R_xlen_t q = lo; q < hi; q++) s += w[X->col[q]];
  return s;
}

static inline double rows_y(const design_rows *X, R_xlen_t i) {
  return X->z ? X->z[i * (X->p + 1) + X->p] : X->y[i];
}

/* y_i - x_i' w, subtracting the terms in order from y_i */
static inline double rows_residual(const design_rows *X, R_xlen_t i, const double *w) {
  if (X->z) {
    const double *zi = X->z + i * (X->p + 1);
    double r = zi[X->p];
    for (int j = 0; j < X->p; j++) r -= zi[j] * w[j];
    return r;
  }
  double r = X->y[i];
  const R_xlen_t lo = (R_xlen_t) X->start[i], hi = (R_xlen_t) X->start[i + 1];
  if (X->val) for (R_xlen_t q = lo; q < hi; q++) r -= X->val[q] * w[X->col[q]];
  else for (R_xlen_t q = lo; q < hi; q++) r -= w[X->col[q]];
  return r;
}

/* x_ij (a sparse row's non-zeros are few: a scan) */
static inline double rows_entry(const design_rows *X, R_xlen_t i, int j) {
  if (X->z) return X->z[i * (X->p + 1) + j];
  for (R_xlen_t q = (R_xlen_t) X->start[i]; q < (R_xlen_t) X->start[i + 1]; q++)
    if (X->col[q] == j) return X->val ? X->val[q] : 1.0;
  return 0.0;
}

/* g += c x_i */
static inline void rows_axpy(const design_rows *X, R_xlen_t i, double c, double *g) {
  if (X->z) {
    const double *zi = X->z + i * (X->p + 1);
    for (int j = 0; j < X->p; j++) g[j] += c * zi[j];
    return;
  }
  for (R_xlen_t q = (R_xlen_t) X->start[i]; q < (R_xlen_t) X->start[i + 1]; q++)
    g[X->col[q]] += c * (X->val ? X->val[q] : 1.0);
}

/* Under q = N(mu, diag(sd^2)) row i's x_i' w is N(a - a0, v): *a = a0 +
   x_i' mu, *v = sum_j x_ij^2 sd_j^2 */
static inline void rows_moments(const design_rows *X, R_xlen_t i, const double *mu,
                                const double *sd, double a0, double *a, double *v) {
  double m = a0, s2 = 0.0;
  if (X->z) {
    const double *zi = X->z + i * (X->p + 1);
    for (int j = 0; j < X->p; j++) {
      const double xs = zi[j] * sd[j];
      m += zi[j] * mu[j];
      s2 += xs * xs;
    }
  } else {
    for (R_xlen_t q = (R_xlen_t) X->start[i]; q < (R_xlen_t) X->start[i + 1]; q++) {
      const double x = X->val ? X->val[q] : 1.0, xs = x * sd[X->col[q]];
      m += x * mu[X->col[q]];
      s2 += xs * xs;
    }
  }
  *a = m;
  *v = s2;
}

/* g_mu += c x_i and g_sd += f x_i^2 sd (elementwise) */
static inline void rows_add_gradients(const design_rows *X, R_xlen_t i, double c, double f,
                                      const double *sd, double *g_mu, double *g_sd) {
  if (X->z) {
    const double *zi = X->z + i * (X->p + 1);
    for (int j = 0; j < X->p; j++) {
      g_mu[j] += c * zi[j];
      g_sd[j] += f * zi[j] * zi[j] * sd[j];
    }
    return;
  }
  for (R_xlen_t q = (R_xlen_t) X->start[i]; q < (R_xlen_t) X->start[i + 1]; q++) {
    const int j = X->col[q];
    const double x = X->val ? X->val[q] : 1.0;
    g_mu[j] += c * x;
    g_sd[j] += f * x * x * sd[j];
  }
}

#endif
