# rstanarm's decov() for a term of 3 coefficients, as its Stan code builds it
# (make_theta_L in inst/stan/functions/common_functions.stan, rstanarm 2.21.3:
# the onion step scales row j+1's off-diagonal entries by row j's sd), against
# decov() as documented (shares ~ Dirichlet, correlations ~ LKJ, here LKJ(1)
# drawn as the uniform law on 3 x 3 correlation matrices), at decov()'s
# defaults. src/model_glmm.c follows the documented prior.
#   Rscript bench/glmm-decov-rstanarm.R     (figures in bench/glmm-mala.md)
rstanarm_sigma <- function(r) {
  tau <- rgamma(1, 1)
  zeta <- rgamma(r, 1)
  pi <- zeta / sum(zeta)
  trace <- r * tau^2
  nu <- 1 + 0.5 * (r - 2)
  T <- matrix(0, r, r)
  sd <- sqrt(pi[1] * trace)
  T[1, 1] <- sd
  sd <- sqrt(pi[2] * trace)
  t21 <- 2 * rbeta(1, nu, nu) - 1
  T[2, 1:2] <- sd * c(t21, sqrt(1 - t21^2))
  for (j in 2:(r - 1)) {
    nu <- nu - 0.5
    rho <- rbeta(1, 0.5 * j, nu)
    row <- rnorm(j)
    factor <- sqrt(rho / sum(row^2)) * sd     # row j's sd, as rstanarm has it
    sd <- sqrt(pi[j + 1] * trace)
    T[j + 1, 1:j] <- row * factor
    T[j + 1, j + 1] <- sqrt(1 - rho) * sd
  }
  tcrossprod(T)
}
documented_sigma <- function() {
  tau <- rgamma(1, 1)
  pi <- rgamma(3, 1)
  sd <- sqrt(pi / sum(pi) * 3 * tau^2)
  repeat {
    q <- runif(3, -1, 1)
    R <- matrix(c(1, q[1], q[2], q[1], 1, q[3], q[2], q[3], 1), 3)
    if (min(eigen(R, symmetric = TRUE, only.values = TRUE)$values) > 0) break
  }
  outer(sd, sd) * R
}
summaries <- function(S) c(share1 = S[1, 1] / sum(diag(S)), share3 = S[3, 3] / sum(diag(S)),
                           cor31 = S[3, 1] / sqrt(S[1, 1] * S[3, 3]),
                           cor32 = S[3, 2] / sqrt(S[2, 2] * S[3, 3]))
set.seed(2)
a <- replicate(20000, summaries(rstanarm_sigma(3)))
b <- replicate(20000, summaries(documented_sigma()))
print(signif(rbind(rstanarm_sd = apply(a, 1, sd), documented_sd = apply(b, 1, sd),
                  ks_p = sapply(1:4, function(i) suppressWarnings(ks.test(a[i, ], b[i, ])$p.value))), 3))
