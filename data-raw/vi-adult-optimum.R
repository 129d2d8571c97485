# The mean-field optimum of the logistic regression on Adult's a9a design
# (training set, intercept, N(0, 10^2) on every raw coefficient, the former
# default prior) for the
# acceptance test of bbb() (tests/testthat/test-vi.R), computed from the
# data alone by tests/testthat/helper-vi.R: each observation's expected log
# likelihood by quadrature, damped Newton from the Laplace approximation.
# Gradient at the optimum 8.3e-13; about a minute on one core.
#   Rscript data-raw/vi-adult-optimum.R
library(sgld)
source("tests/testthat/helper-vi.R")
d <- adult[adult$set == "train", ]
X <- cbind("(Intercept)" = 1, adult_design(d))
y <- ifelse(adult_response(d) == 1, 1, -1)
p <- ncol(X)
opt <- meanfield_logistic_optimum(X, y, rep(0, p), rep(10, p))
stopifnot(max(abs(opt$gradient)) < 1e-8)
out <- list(mean = opt$mean, sd = opt$sd, elbo = opt$elbo, gradient = max(abs(opt$gradient)))
saveRDS(out, "tests/testthat/vi-adult-optimum.rds", version = 2)
