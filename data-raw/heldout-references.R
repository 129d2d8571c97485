# Exact references for bench/heldout.R: the conjugate posterior of each
# linear model and, for each logistic one, 400,000 iterations of mala() with
# its automatic preconditioner and step (10,000 burn-in, every 20th kept),
# stored as means, sds and ESS in bench/heldout-references.rds.
#   Rscript data-raw/heldout-references.R         (from the package's top directory)
#   Rscript data-raw/heldout-references.R --all   (recompute the stored ones too)
# Without --all, only the data sets that have no stored reference yet.
library(sgld)
source("bench/heldout-models.R")
out <- "bench/heldout-references.rds"
refs <- if (file.exists(out) && !"--all" %in% commandArgs(TRUE)) readRDS(out) else list()
for (name in setdiff(names(heldout_models), names(refs))) {
  m <- suppressWarnings(heldout_models[[name]]())
  if (inherits(m, "sgld_model_linear")) {
    ex <- linear_exact_posterior(m)
    refs[[name]] <- list(mean = ex$mean, sd = ex$sd, method = "exact (conjugate)")
  } else {
    set.seed(38)
    fit <- suppressWarnings(mala(m, iter = 410000, burnin = 10000, thin = 20))
    x <- as.matrix(fit)
    s <- summary(fit)$statistics
    refs[[name]] <- list(mean = colMeans(x), sd = apply(x, 2, sd), ess = s[, "ess"],
                         method = sprintf("mala, 400,000 iterations, acceptance %.2f",
                                          fit$acceptance))
  }
  cat(sprintf("%-11s n = %5d d = %2d  %s%s\n", name, m$n, m$d, refs[[name]]$method,
              if (is.null(refs[[name]]$ess)) "" else
                sprintf(", smallest ESS %.0f", min(refs[[name]]$ess))))
  saveRDS(refs, out, version = 2)   # after each: an interruption keeps the others
}
