# bbb(m) at its defaults on regressions that played no part in choosing
# them, against exact references: the variational optimum computed
# independently (tests/testthat/helper-vi.R: quadrature and Newton or BFGS;
# the linear model's in closed form), and the posterior itself (a long
# mala() run: lr = "auto", the Laplace preconditioner, 41,000 iterations of
# which 1,000 burn-in, for the logistic models; the conjugate posterior for
# the linear one). For each fit: how far q is from its optimum (means in
# q's sds, sds as ratios), how far from the posterior (means in posterior
# sds, sds as ratios), and whether it warned. The package's bar: within
# 0.15 posterior sd and 10% of the posterior, or a warning.
#
# Run from the package root:   Rscript bench/vi-heldout.R
suppressPackageStartupMessages(library(sgld))
source("tests/testthat/helper-vi.R")

logistic_case <- function(formula, data) {
  X <- model.matrix(formula, data)
  y <- model.response(model.frame(formula, data))
  y <- if (is.factor(y)) ifelse(y == levels(y)[2], 1, -1) else ifelse(y == 1, 1, -1)
  list(model = model_logistic(formula, data = data), X = X, y = y)
}
cases <- list(
  "MASS::Pima.te (held-out Pima, n = 332, 7 covariates)" =
    logistic_case(type ~ npreg + glu + bp + skin + bmi + ped + age, MASS::Pima.te),
  "MASS::biopsy (n = 683, 9 covariates)" =
    logistic_case(class ~ V1 + V2 + V3 + V4 + V5 + V6 + V7 + V8 + V9, na.omit(MASS::biopsy)),
  "MASS::birthwt (n = 189, 8 covariates)" =
    logistic_case(low ~ age + lwt + factor(race) + smoke + ptl + ht + ui + ftv, MASS::birthwt),
  "MASS::Boston (linear, n = 506, 13 covariates)" = local({
    f <- medv ~ crim + zn + indus + chas + nox + rm + age + dis + rad + tax + ptratio + black + lstat
    list(model = model_linear(f, data = MASS::Boston), X = model.matrix(f, MASS::Boston),
         y = MASS::Boston$medv, linear = TRUE)
  }))

reference <- function(ex, family) {
  p <- ncol(ex$X)
  if (isTRUE(ex$linear)) {
    post <- linear_exact_posterior(ex$model)
    opt <- if (family == "meanfield")
      meanfield_linear_optimum(ex$X, ex$y, rep(0, p), diag(100, p), 1, 1)
    # the posterior's moments on the sampler's scale (log sigma2), by simulation
    set.seed(1)
    s2 <- 1 / stats::rgamma(2e5, post$a_n, post$b_n)
    beta_sd <- sqrt(diag(post$V_n) * mean(s2))
    return(list(opt = opt, mean = c(post$mu_n, mean(log(s2))), sd = c(beta_sd, sd(log(s2)))))
  }
  opt <- if (family == "meanfield") meanfield_logistic_optimum(ex$X, ex$y, rep(0, p), rep(10, p))
         else fullrank_logistic_optimum(ex$X, ex$y, rep(0, p), rep(10, p))
  set.seed(1)
  ref <- suppressWarnings(mala(ex$model, iter = 41000, burnin = 1000))
  r <- as.matrix(ref, scale = "sampler")
  list(opt = opt, mean = colMeans(r), sd = apply(r, 2, stats::sd))
}

cat("## bbb(m) at its defaults on held-out regressions\n\n")
cat(sprintf("*`Rscript bench/vi-heldout.R`, %s; R %s, sgld %s; load average at start: %s.*\n\n",
            format(Sys.time(), "%Y-%m-%d %H:%M"), getRversion(), packageVersion("sgld"),
            readLines("/proc/loadavg", warn = FALSE)[1]))
cat("Against its optimum: largest |mean error| in q's sds and largest |sd ratio - 1|.",
    "Against the posterior (mala(), 40,000 draws; Boston: the conjugate posterior):",
    "largest |mean error| in posterior sds and the range of sd ratios. Warned: the fit's",
    "check (k-hat above 0.7, or importance sampling moving q by more than 0.15 sd or 10%).\n\n")
cat("| data | family | vs optimum: mean, sd | vs posterior: mean (sd) | sd ratios | k-hat | warned | s |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (name in names(cases)) for (family in c("meanfield", "fullrank")) {
  ex <- cases[[name]]
  if (isTRUE(ex$linear) && family == "fullrank") next
  ref <- reference(ex, family)
  set.seed(1)
  warned <- character()
  t0 <- proc.time()[["elapsed"]]
  fit <- withCallingHandlers(suppressMessages(bbb(ex$model, family = family)),
                             warning = function(w) {
                               warned <<- c(warned, conditionMessage(w))
                               invokeRestart("muffleWarning")
                             })
  secs <- proc.time()[["elapsed"]] - t0
  mu <- fit$variational$mean[1, ]
  s <- fit$variational$sd[1, ]
  opt_err <- c(max(abs(mu - ref$opt$mean) / ref$opt$sd), max(abs(s / ref$opt$sd - 1)))
  post_err <- max(abs(mu - ref$mean) / ref$sd)
  ratios <- range(s / ref$sd)
  cat(sprintf("| %s | %s | %.4f, %.4f | %.3f | %.2f-%.2f | %.2f | %s | %.1f |\n", name, family,
              opt_err[1], opt_err[2], post_err, ratios[1], ratios[2], fit$khat$khat,
              if (length(warned)) "yes" else "no", secs))
  message(name, " ", family, ": ", paste(substr(warned, 1, 100), collapse = " | "))
}
cat(sprintf("\nLoad average at the end: %s.\n", readLines("/proc/loadavg", warn = FALSE)[1]))
