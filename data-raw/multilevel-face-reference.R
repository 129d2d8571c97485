# rstanarm's own words for the multilevel face's tests
# (tests/testthat/test-multilevel-face.R): for a few stan_glmer() calls at its
# default priors, the adjusted prior scales prior_summary() reports, its
# printed layout, and the column names of as.matrix(). Only the priors and
# names are read, so each fit is a token run (chains = 1, iter = 10); no
# draw is used.
#   Rscript data-raw/multilevel-face-reference.R
library(rstanarm)
options(mc.cores = 1)
`%||%` <- function(a, b) if (is.null(a)) b else a

cb <- lme4::cbpp
gt <- lme4::grouseticks
sl <- lme4::sleepstudy
calls <- list(
  sleepstudy = list(Reaction ~ Days + (Days | Subject), sl, gaussian()),
  sleepstudy_uncorrelated = list(Reaction ~ Days + (Days || Subject), sl, gaussian()),
  cbpp = list(cbind(incidence, size - incidence) ~ period + (1 | herd), cb, binomial()),
  grouseticks = list(TICKS ~ YEAR + HEIGHT + (1 | BROOD) + (1 | LOCATION), gt, poisson()),
  cbpp_offset = list(incidence ~ period + (1 | herd) + offset(log(size)), cb, poisson())
)
ref <- lapply(calls, function(a) {
  fit <- suppressWarnings(stan_glmer(a[[1]], data = a[[2]], family = a[[3]], chains = 1,
                                     iter = 10, seed = 1, refresh = 0))
  ps <- prior_summary(fit)
  list(formula = a[[1]],
       names = colnames(as.matrix(fit)),
       intercept = list(location = ps$prior_intercept$location,
                        scale = ps$prior_intercept$adjusted_scale %||% ps$prior_intercept$scale),
       coef = list(location = ps$prior$location,
                   scale = ps$prior$adjusted_scale %||% ps$prior$scale),
       # prior_summary() stores the exponential's adjusted scale, 1 / rate
       aux_rate = if (!is.null(ps$prior_aux)) 1 / (ps$prior_aux$adjusted_scale %||% ps$prior_aux$scale),
       covariance = ps$prior_covariance[c("regularization", "concentration", "shape", "scale")],
       print = utils::capture.output(print(ps)),
       ngrps = ngrps(fit), nobs = nobs(fit))
})
ref$versions <- c(rstanarm = as.character(packageVersion("rstanarm")),
                  lme4 = as.character(packageVersion("lme4")), R = R.version.string)
for (r in ref[names(calls)]) { cat(r$print, sep = "\n"); print(head(r$names, 8)) }
saveRDS(ref, "tests/testthat/multilevel-face-reference.rds", version = 2)
