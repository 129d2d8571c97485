# The exact reference for the Adult acceptance test of sgld(model)
# (tests/testthat/test-auto.R): posterior means and sds of the logistic
# regression on the a9a design of Adult's training set (with an intercept,
# the default prior_normal(0, 10)), from 150,000 MALA iterations with the
# Laplace preconditioner (5,000 burn-in, every 5th kept; acceptance 0.76,
# smallest ESS about 2,000; 6.5 minutes on one core).
#   Rscript data-raw/adult-reference.R
library(sgld)
d <- adult[adult$set == "train", ]
m <- suppressWarnings(model_logistic(cbind("(Intercept)" = 1, adult_design(d)), adult_response(d), prior = prior_normal(0, 10), prior_intercept = NULL))
set.seed(99)
ref <- mala(m, iter = 150000, burnin = 5000, thin = 5)
r <- as.matrix(ref)
out <- list(mean = colMeans(r), sd = apply(r, 2, sd))
saveRDS(out, "tests/testthat/adult-reference.rds", version = 2)
