/*
 * Small dense linear algebra through R's LAPACK, for models and update rules
 * whose parameter is a matrix. Matrices are column-major D x D. Nothing here
 * touches R's memory manager, so these run inside threads.
 */
#define USE_FC_LEN_T
#include <string.h>
#include <R_ext/Lapack.h>
#include "sgld.h"
#ifndef FCONE
#define FCONE
#endif

int mat_inverse(const double *A, int D, double *Ainv, double *log_abs_det, double *work,
                int lwork, int *ipiv) {
  int info = 0;
  memcpy(Ainv, A, (size_t) D * D * sizeof(double));
  F77_CALL(dgetrf)(&D, &D, Ainv, &D, ipiv, &info);
  if (info != 0) return info;
  double ld = 0.0;
  for (int i = 0; i < D; i++) ld += log(fabs(Ainv[i + (size_t) i * D]));
  *log_abs_det = ld;
  F77_CALL(dgetri)(&D, Ainv, &D, ipiv, work, &lwork, &info);
  return info;
}

int sym_sqrt(const double *S, int D, double *root, double *evec, double *evals, double *work,
             int lwork) {
  int info = 0;
  memcpy(evec, S, (size_t) D * D * sizeof(double));
  F77_CALL(dsyev)("V", "L", &D, evec, &D, evals, work, &lwork, &info FCONE FCONE);
  if (info != 0) return info;
  for (int k = 0; k < D; k++) evals[k] = evals[k] > 0 ? sqrt(evals[k]) : 0.0;
  /* root = U diag(sqrt(lambda)) U^T */
  for (int j = 0; j < D; j++)
    for (int i = 0; i <= j; i++) {
      double s = 0.0;
      for (int k = 0; k < D; k++)
        s += evec[i + (size_t) k * D] * evals[k] * evec[j + (size_t) k * D];
      root[i + (size_t) j * D] = root[j + (size_t) i * D] = s;
    }
  return 0;
}

int chol_lower(const double *S, int D, double *L) {
  int info = 0;
  memcpy(L, S, (size_t) D * D * sizeof(double));
  F77_CALL(dpotrf)("L", &D, L, &D, &info FCONE);
  if (info != 0) return info;
  for (int j = 1; j < D; j++)
    for (int i = 0; i < j; i++) L[i + (size_t) j * D] = 0.0;
  return 0;
}
