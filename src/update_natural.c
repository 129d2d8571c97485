/*
 * Natural-gradient Langevin dynamics for a square matrix parameter
 * (Amari et al. 1996; Welling and Teh 2011, section 5.3). W is D x D,
 * column-major, and with M = W^T W the step is
 *   W <- W + eta (G M + tau (D + 1) W) + sqrt(2 eta tau) Xi M^{1/2},
 * G being the estimate g_hat of the Euclidean gradient as a D x D matrix and
 * Xi a D x D matrix of standard normals. On vec(W) the preconditioner is
 * P = M (x) I; the term (D + 1) W is sum_b dP_ab / dw_b, which keeps
 * exp(U / tau) invariant when P depends on W (the paper leaves it out; its
 * size relative to G M is about (D + 1) / n). Without kept state, so the step
 * is also mala()'s proposal, with density N(W + eta (G M + tau (D+1) W), 2 eta tau P).
 * M^{1/2} comes from LAPACK's symmetric eigendecomposition.
 */
#include <string.h>
#include "sgld.h"

static int side(int d) {
  int D = (int) floor(sqrt((double) d) + 0.5);
  return D;
}

/* M = W^T W */
static void gram(const double *W, int D, double *M) {
  for (int j = 0; j < D; j++)
    for (int l = 0; l <= j; l++) {
      double s = 0.0;
      for (int r = 0; r < D; r++) s += W[r + j * D] * W[r + l * D];
      M[j + l * D] = M[l + j * D] = s;
    }
}

/* mean = W + eta (G M + tau (D + 1) W) */
static void drift(const double *W, const double *G, const double *M, int D, double eta,
                  double tau, double *mean) {
  for (int j = 0; j < D; j++)
    for (int i = 0; i < D; i++) {
      double s = 0.0;
      for (int l = 0; l < D; l++) s += G[i + l * D] * M[l + j * D];
      mean[i + j * D] = W[i + j * D] + eta * (s + tau * (D + 1) * W[i + j * D]);
    }
}

/* scratch: M, eigenvectors, root, mean (D^2 each), eigenvalues (D), LAPACK work
   (8 D); 9 d doubles cover it, as D <= d */
static size_t natural_scratch_length(int d) {
  return 9 * (size_t) d;
}

static void natural_step(double *w, const double *g_hat, const double *g_bar, double eta,
                         double tau, double *state, sgld_rng *rng, int d,
                         const void *opts) {
  (void) g_bar; (void) opts;
  const int D = side(d);
  double *M = state, *evec = M + d, *root = evec + d, *mean = root + d, *evals = mean + d;
  double *lw = evals + D;
  gram(w, D, M);
  drift(w, g_hat, M, D, eta, tau, mean);
  if (!(tau > 0)) {
    memcpy(w, mean, d * sizeof(double));
    return;
  }
  if (sym_sqrt(M, D, root, evec, evals, lw, 8 * D) != 0) {
    for (int k = 0; k < d; k++) w[k] = NAN;    /* the driver stops the chain */
    return;
  }
  const double sd = sqrt(2.0 * eta * tau);
  /* Xi M^{1/2}, one row of Xi at a time (evec is free again) */
  for (int i = 0; i < D; i++) {
    double *xi = evec;
    for (int l = 0; l < D; l++) xi[l] = rng_norm(rng);
    for (int j = 0; j < D; j++) {
      double s = 0.0;
      for (int l = 0; l < D; l++) s += xi[l] * root[l + j * D];
      w[i + j * D] = mean[i + j * D] + sd * s;
    }
  }
}

static double natural_log_q(const double *to, const double *from, const double *g_from,
                            double eta, double tau, double *scratch, int d,
                            const void *opts) {
  (void) opts;
  const int D = side(d);
  double *M = scratch, *L = M + d, *mean = L + d, *z = mean + d;
  gram(from, D, M);
  if (chol_lower(M, D, L) != 0) return -INFINITY;
  drift(from, g_from, M, D, eta, tau, mean);
  /* tr(R M^{-1} R^T) = sum over rows r of R of |L^{-1} r^T|^2 */
  double q = 0.0;
  for (int i = 0; i < D; i++) {
    for (int j = 0; j < D; j++) {
      double s = to[i + j * D] - mean[i + j * D];
      for (int k = 0; k < j; k++) s -= L[j + k * D] * z[k];
      z[j] = s / L[j + j * D];
      q += z[j] * z[j];
    }
  }
  double log_det = 0.0;
  for (int j = 0; j < D; j++) log_det += 2.0 * log(L[j + j * D]);
  return -q / (4.0 * eta * tau) - 0.5 * D * log_det;
}

/* T = M^{1/2} (x) I on vec(W): T[(i, j), (k, l)] = [i == k] (M^{1/2})_jl */
static void natural_factor(const double *w, const double *state, double *T, double *scratch,
                           int d, const void *opts) {
  (void) state; (void) opts;
  const int D = side(d);
  double *M = scratch, *evec = M + d, *root = evec + d, *evals = root + d, *lw = evals + D;
  gram(w, D, M);
  for (size_t k = 0; k < (size_t) d * d; k++) T[k] = 0.0;
  if (sym_sqrt(M, D, root, evec, evals, lw, 8 * D) != 0) {
    for (size_t k = 0; k < (size_t) d * d; k++) T[k] = NAN;
    return;
  }
  for (int i = 0; i < D; i++)
    for (int j = 0; j < D; j++)
      for (int l = 0; l < D; l++)
        T[(i + j * D) + (size_t) (i + l * D) * d] = root[j + l * D];
}

const sgld_update update_natural = {
  .name = "natural", .scratch_length = natural_scratch_length, .init = update_no_init,
  .step = natural_step, .log_q = natural_log_q,
  .precond_factor = natural_factor
};
