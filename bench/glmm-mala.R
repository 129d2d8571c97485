# What samples the multilevel model (model_glmm(), internal) by hand, for the
# automatic settings still to come: on sleepstudy (Reaction ~ Days + (Days |
# Subject), rstanarm's priors as tests/testthat/test-model-glmm.R passes them)
#   1. the joint posterior mode in the sampler's (non-centred) coordinates
#      against the posterior's means, and mala() preconditioned by the
#      Laplace approximation there;
#   2. mala() with a diagonal guess of the posterior's scales, a pilot;
#   3. mala() preconditioned by the pilot's covariance: acceptance, effective
#      draws of the slowest coordinate and per CPU second.
#   Rscript bench/glmm-mala.R     (figures in bench/glmm-mala.md)
library(sgld)
ref <- readRDS("inst/extdata/glmm-reference.rds")$sleepstudy
d <- lme4::sleepstudy
d$Days_c <- d$Days - mean(d$Days)
m <- sgld:::model_glmm(Reaction ~ Days_c + (Days | Subject), d, "gaussian",
                       prior_loc = c(ref$prior$intercept_loc, ref$prior$coef_loc),
                       prior_scale = c(ref$prior$intercept_scale, ref$prior$coef_scale),
                       aux_rate = ref$prior$aux_rate)
m$local_parameters <- FALSE      # run_sampler() refuses a d x d preconditioner otherwise
cat("machine load:", readLines("/proc/loadavg"), "\n", format(Sys.time(), tz = "UTC"), "UTC\n")

mo <- posterior_mode(m, covariance = TRUE)
cat("joint mode: sds", round(exp(mo$sampler[39:40]), 1), "sigma", round(exp(mo$sampler[42]), 1),
    "; posterior means: sds", round(ref$mean[c("sd[Subject:(Intercept)]", "sd[Subject:Days]")], 1),
    "sigma", round(ref$mean[["sigma"]], 1), "\n")
for (lr in c(0.01, 0.05, 0.5)) {
  set.seed(1)
  f <- suppressWarnings(mala(m, lr = lr, iter = 5000, init = mo$mode,
                             precondition = mo$covariance))
  cat("mala, Laplace at the joint mode, lr", lr, ": acceptance", f$acceptance, "\n")
}

f <- lme4::lmer(Reaction ~ Days_c + (Days | Subject), d)
vc <- lme4::VarCorr(f)$Subject
z <- solve(t(chol(vc[1:2, 1:2])), t(as.matrix(lme4::ranef(f)$Subject)))
init <- c(lme4::fixef(f), as.vector(z), log(attr(vc, "stddev")),
          atanh(attr(vc, "correlation")[2, 1]), log(sigma(f)))
P0 <- diag(c(10^2, 1.7^2, rep(0.3^2, 36), 0.25^2, 0.25^2, 0.5^2, 0.06^2))
for (lr in c(0.01, 0.02, 0.05)) {
  set.seed(1)
  f <- suppressWarnings(mala(m, lr = lr, iter = 5000, init = init, precondition = P0))
  cat("mala, diagonal guess, lr", lr, ": acceptance", f$acceptance, "\n")
}
set.seed(1)
pilot <- suppressWarnings(mala(m, lr = 0.01, iter = 50000, burnin = 10000, thin = 5,
                               precondition = P0, init = init, pars = TRUE))
P <- stats::cov(as.matrix(pilot, scale = "sampler"))
for (lr in c(0.02, 0.05, 0.1, 0.2)) {
  set.seed(2)
  cpu <- system.time(f <- suppressWarnings(mala(m, lr = lr, iter = 100000, burnin = 5000,
                                                thin = 5, precondition = P,
                                                init = pilot$last, pars = TRUE)))[["user.self"]]
  ess <- coda::effectiveSize(as.matrix(f, scale = "sampler"))
  cat(sprintf("mala, pilot covariance, lr %.2f: acceptance %.2f, smallest ESS %.0f (%s), %.0f per CPU s\n",
              lr, f$acceptance, min(ess), names(which.min(ess)), min(ess) / cpu))
}
