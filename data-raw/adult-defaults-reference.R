# The reference for Adult at the default priors (rstanarm's: normal(0, 2.5)
# autoscaled on the coefficients, the intercept's on centred predictors),
# for bench/default-call.R: posterior means and sds of the logistic
# regression on the a9a design of Adult's training set with an intercept
# (32,561 rows, 124 coefficients; the one-hot design is rank-deficient and
# holds levels with 1-51 rows, whose autoscaled prior sds reach 451).
# stan_glm() was not run on it: NUTS on this geometry (prior sds up to 451
# beside posterior sds of 0.03, the null directions of the one-hot design)
# would take hours on this machine. Instead mala() (exact whatever its
# step) with the Laplace preconditioner, from the mode: 3 chains of 50,000
# iterations (5,000 burn-in, every 5th kept), run as 3 processes
# (SGLD_REF_CHAIN = 1, 2, 3, seeds 2611-2613), then combined
# (SGLD_REF_CHAIN = combine). Its priors are rstanarm's, checked against
# stan_glm() itself on five data sets by tests/testthat/test-default-priors.R.
# Also stored: each parameter's ESS and R-hat over the chains, so that the
# reference's own Monte Carlo error is known.
#   for k in 1 2 3; do SGLD_REF_CHAIN=$k nice Rscript data-raw/adult-defaults-reference.R & done; wait
#   SGLD_REF_CHAIN=combine Rscript data-raw/adult-defaults-reference.R
library(sgld)
which <- Sys.getenv("SGLD_REF_CHAIN", "combine")
piece <- function(k) sprintf("/tmp/adult-defaults-chain-%s.rds", k)
if (which != "combine") {
  d <- adult[adult$set == "train", ]
  m <- suppressWarnings(model_logistic(cbind("(Intercept)" = 1, adult_design(d)),
                                       adult_response(d)))
  set.seed(2610 + as.integer(which))
  tm <- system.time(fit <- mala(m, iter = 50000, burnin = 5000, thin = 5, chains = 1,
                                threads = 1))
  saveRDS(list(draws = as.matrix(fit), acceptance = fit$acceptance, seconds = tm[["elapsed"]]),
          piece(which), version = 2)
} else {
  pieces <- lapply(1:3, function(k) readRDS(piece(k)))
  chains <- coda::mcmc.list(lapply(pieces, function(p) coda::mcmc(p$draws)))
  r <- do.call(rbind, lapply(pieces, `[[`, "draws"))
  out <- list(mean = colMeans(r), sd = apply(r, 2, sd),
              ess = coda::effectiveSize(chains),
              rhat = coda::gelman.diag(chains, autoburnin = FALSE, multivariate = FALSE)$psrf[, 1],
              acceptance = vapply(pieces, `[[`, 0, "acceptance"),
              seconds = vapply(pieces, `[[`, 0, "seconds"))
  print(summary(out$ess)); print(max(out$rhat)); print(out$acceptance)
  saveRDS(out, "tests/testthat/adult-defaults-reference.rds", version = 2)
}
