/*
 * Kernel Stein discrepancy with the inverse multiquadric kernel
 * k(x, y) = (c^2 + |x - y|^2)^beta (Gorham and Mackey 2017; REFERENCE.md
 * section 9). For draws x_1..x_N with scores b_i = grad log pi(x_i), r = x - y
 * and u = c^2 + |r|^2, the Stein kernel is
 *   k0(x, y) = (b_x . b_y) u^beta - 2 beta (b_x . r) u^(beta - 1)
 *            + 2 beta (b_y . r) u^(beta - 1) - 2 beta d u^(beta - 1)
 *            - 4 beta (beta - 1) |r|^2 u^(beta - 2),
 * and KSD = sqrt(sum_{i,j} k0(x_i, x_j)) / N. k0 is symmetric, so the double
 * sum is the diagonal plus twice the upper triangle: N (N + 1) / 2 terms of
 * O(d) each.
 */
#include <math.h>
#include <R.h>
#include <Rinternals.h>

/* one Stein kernel value; x, y, bx, by of length d */
static double stein_imq(const double *x, const double *y, const double *bx, const double *by,
                        int d, double c2, double beta) {
  double rr = 0.0, bxby = 0.0, bxr = 0.0, byr = 0.0;
  for (int k = 0; k < d; k++) {
    const double r = x[k] - y[k];
    rr += r * r;
    bxby += bx[k] * by[k];
    bxr += bx[k] * r;
    byr += by[k] * r;
  }
  const double u = c2 + rr;
  const double ub = pow(u, beta);          /* u^beta */
  const double ub1 = ub / u;               /* u^(beta - 1) */
  const double ub2 = ub1 / u;              /* u^(beta - 2) */
  return bxby * ub + 2.0 * beta * (byr - bxr) * ub1 - 2.0 * beta * d * ub1
         - 4.0 * beta * (beta - 1.0) * rr * ub2;
}

/* the double sum over N draws stored draw by draw (x[i * d + k]) */
static double stein_sum(const double *x, const double *b, R_xlen_t N, int d, double c2,
                        double beta) {
  double diag = 0.0, upper = 0.0;
  for (R_xlen_t i = 0; i < N; i++) {
    const double *xi = x + i * d, *bi = b + i * d;
    diag += stein_imq(xi, xi, bi, bi, d, c2, beta);
    double row = 0.0;
    for (R_xlen_t j = i + 1; j < N; j++)
      row += stein_imq(xi, x + j * d, bi, b + j * d, d, c2, beta);
    upper += row;
  }
  return diag + 2.0 * upper;
}

/* x, scores: d x N double matrices (one draw per column); c > 0; beta in (-1, 0).
   Returns the double sum; the R side takes sqrt(.) / N. */
SEXP sgld_ksd(SEXP x, SEXP scores, SEXP c_, SEXP beta_) {
  if (TYPEOF(x) != REALSXP || TYPEOF(scores) != REALSXP || !isMatrix(x) || !isMatrix(scores))
    error("internal: 'x' and 'scores' must be double matrices");
  const int d = nrows(x);
  const R_xlen_t N = ncols(x);
  if (nrows(scores) != d || ncols(scores) != N)
    error("internal: 'scores' must have the dimensions of 'x'");
  if (TYPEOF(c_) != REALSXP || XLENGTH(c_) != 1 || TYPEOF(beta_) != REALSXP ||
      XLENGTH(beta_) != 1)
    error("internal: 'c' and 'beta' must be single doubles");
  const double c = REAL(c_)[0], beta = REAL(beta_)[0];
  if (!(c > 0) || !(beta > -1 && beta < 0)) error("internal: need c > 0 and -1 < beta < 0");
  const double *px = REAL(x), *pb = REAL(scores);
  for (R_xlen_t k = 0; k < (R_xlen_t) d * N; k++)
    if (!R_FINITE(px[k]) || !R_FINITE(pb[k])) error("internal: non-finite draws or scores");
  return ScalarReal(stein_sum(px, pb, N, d, c * c, beta));
}
