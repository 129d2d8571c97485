/*
 * Sums of weighted outer products of data rows, sum_i h_i x_i x_i', the
 * Hessian of a log likelihood that depends on its coefficients through x_i'
 * beta (model_logistic.c, model_linear.c: their hess_loglik, for Newton's
 * steps to the posterior mode, mode.c).
 *
 * Rows come four at a time and are added into the upper triangle of the
 * column-major d x d matrix H (H[j + k d], j <= k), one column at a time:
 * the innermost loop runs down a column and along the four rows together,
 * so it vectorises without reordering any sum (each H[j + k d] gets
 * ((a0 x0j + a1 x1j) + (a2 x2j + a3 x3j)) whatever the vector width), and
 * H is read and written once per four rows. At d = 31 the matrix (3.8 kB
 * of it) stays in L1.
 */
#include "sgld.h"

/* rows x0..x3 (their first p entries) weighted by h[0..4), into the upper
   triangle of the leading p x p block of H (leading dimension ld) */
SGLD_WIDE void hess_rows4(double *H, R_xlen_t ld, int p, const double *x0, const double *x1,
                          const double *x2, const double *x3, const double *h) {
  for (int k = 0; k < p; k++) {
    const double a0 = h[0] * x0[k], a1 = h[1] * x1[k], a2 = h[2] * x2[k], a3 = h[3] * x3[k];
    double *col = H + k * ld;
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int j = 0; j <= k; j++)
      col[j] += (a0 * x0[j] + a1 * x1[j]) + (a2 * x2[j] + a3 * x3[j]);
  }
}

/* `rows` (1 to 4) rows x[b] weighted by h[b] */
void hess_rows(double *H, R_xlen_t ld, int p, const double *const *x, const double *h,
               int rows) {
  if (rows == 4) hess_rows4(H, ld, p, x[0], x[1], x[2], x[3], h);
  else for (int b = 0; b < rows; b++) hess_row(H, ld, p, x[b], h[b]);
}

void hess_row(double *H, R_xlen_t ld, int p, const double *x, double h) {
  for (int k = 0; k < p; k++) {
    const double a = h * x[k];
    double *col = H + k * ld;
    for (int j = 0; j <= k; j++) col[j] += a * x[j];
  }
}

/* One row given by its non-zeros (values val, NULL for all 1, in columns
   col[0..nnz)), into the upper triangle whatever the columns' order: each
   pair of entries (a, b) with col[a] <= col[b] once, which is x x' (a
   column repeated in the row counts as the sum of its entries). */
void hess_sparse_row(double *H, R_xlen_t ld, const int *col, const double *val, R_xlen_t nnz,
                     double h) {
  for (R_xlen_t a = 0; a < nnz; a++) {
    const double ha = h * (val ? val[a] : 1.0);
    for (R_xlen_t b = 0; b < nnz; b++)
      if (col[a] <= col[b]) H[col[a] + col[b] * ld] += ha * (val ? val[b] : 1.0);
  }
}

/* the lower triangle from the upper, once the upper holds a symmetric
   matrix's sums: H[k + j d] = H[j + k d] for j < k */
void hess_mirror(double *H, int d) {
  for (R_xlen_t k = 0; k < d; k++)
    for (R_xlen_t j = 0; j < k; j++) H[k + j * d] = H[j + k * d];
}
