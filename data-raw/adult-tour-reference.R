# The exact reference of the tour vignette (vignettes/sgld.Rmd): posterior
# means, sds and 2.5%/97.5% quantiles of its logistic regression on Adult's
# training set, from a long mala() run (Metropolis-adjusted, so exact up to
# Monte Carlo error): 4 chains of 25,000 iterations after mala()'s own
# warm-up, every 5th kept. Stored with the run's ESS and R-hat so the
# vignette can say how precise the reference is.
#   Rscript data-raw/adult-tour-reference.R
library(sgld)
train <- adult[adult$set == "train", ]
m <- model_logistic(income ~ age + education_num + sex + hours_per_week + capital_gain +
                      relationship, data = train, prior = prior_normal(0, 10), prior_intercept = NULL)
set.seed(2026)
t0 <- proc.time()
ref <- mala(m, iter = 25000, thin = 5, chains = 4)
cpu <- (proc.time() - t0)[["user.self"]]
r <- as.matrix(ref)
s <- summary(ref)$statistics
out <- list(mean = colMeans(r), sd = apply(r, 2, stats::sd),
            q025 = apply(r, 2, stats::quantile, 0.025), q975 = apply(r, 2, stats::quantile, 0.975),
            ess = s[, "ess"], rhat = s[, "rhat"], draws = nrow(r), cpu_seconds = cpu,
            made = format(Sys.time(), "%Y-%m-%d"), sgld_version = as.character(packageVersion("sgld")))
saveRDS(out, "inst/extdata/adult-tour-reference.rds", version = 2)
print(out[c("ess", "rhat", "draws", "cpu_seconds")])
