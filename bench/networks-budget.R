# Default network fits on small regressions: CPU seconds, test RMSE and log
# predictive density of `sgld(model_mlp(y ~ ., train, hidden = 50))` with
# every other setting the default (threads = 1 so CPU seconds compare).
#
#   Rscript bench/networks-budget.R LABEL SPLITS SET1,SET2,...
#
# runs whichever sgld is first on .libPaths() (R_LIBS=... chooses the
# version), and prints one line per split on stdout:
#   label set split n_train cpu_s rmse ll stop_reason
# Random 80/20 splits, seeds 1..SPLITS. Sets used to design the stopping rule
# (faithful, quakes300, LifeCycleSavings) and held out for the final check
# (boston300: 300 rows of MASS::Boston; airquality's complete cases;
# MASS::cpus with log performance; mtcars; trees; swiss; sim300, the
# simulated regression of bench/networks-time.R).
suppressPackageStartupMessages(library(sgld))
args <- commandArgs(TRUE)
label <- args[1]
n_splits <- as.integer(args[2])
sets <- strsplit(args[3], ",")[[1]]

datasets <- list(
  faithful = function() list(data = datasets::faithful, f = eruptions ~ .),
  quakes300 = function() {
    set.seed(7)
    list(data = datasets::quakes[sample(nrow(datasets::quakes), 300), c("mag", "lat", "long", "depth", "stations")],
         f = mag ~ .)
  },
  LifeCycleSavings = function() list(data = datasets::LifeCycleSavings, f = sr ~ .),
  boston300 = function() {
    set.seed(11)
    list(data = MASS::Boston[sample(nrow(MASS::Boston), 300), ], f = medv ~ .)
  },
  airquality = function() list(data = stats::na.omit(datasets::airquality), f = Ozone ~ .),
  cpus = function() {
    d <- MASS::cpus[, c("syct", "mmin", "mmax", "cach", "chmin", "chmax", "perf")]
    d$perf <- log(d$perf)
    list(data = d, f = perf ~ .)
  },
  mtcars = function() list(data = datasets::mtcars, f = mpg ~ .),
  trees = function() list(data = datasets::trees, f = Volume ~ .),
  swiss = function() list(data = datasets::swiss, f = Fertility ~ .),
  # held out after the rule was merged (29 Nov): birth weight in kg, 189 rows
  birthwt = function() {
    d <- MASS::birthwt[, c("bwt", "age", "lwt", "race", "smoke", "ptl", "ht", "ui", "ftv")]
    d$bwt <- d$bwt / 1000
    list(data = d, f = bwt ~ .)
  },
  # bench/networks-time.R's simulated regression, 300 rows of 8 inputs
  sim300 = function() {
    set.seed(300)
    x <- matrix(stats::rnorm(300 * 8), 300, 8, dimnames = list(NULL, paste0("x", 1:8)))
    list(data = data.frame(x, y = sin(2 * x[, 1]) + x[, 2] * x[, 3] + 0.5 * x[, 4] +
                                  stats::rnorm(300, sd = 0.5)), f = y ~ .)
  })

score <- function(fit, test, y) {
  mu <- predict(fit, test, draws = TRUE)                  # rows x draws
  s <- sqrt(as.matrix(fit)[, "sigma2"]) * fit$model$y_sd
  dens <- stats::dnorm(y, mu, matrix(s, length(y), length(s), byrow = TRUE), log = TRUE)
  mx <- apply(dens, 1, max)
  c(rmse = sqrt(mean((rowMeans(mu) - y)^2)), ll = mean(mx + log(rowMeans(exp(dens - mx)))))
}

for (set in sets) {
  ds <- datasets[[set]]()
  resp <- all.vars(ds$f)[1]
  for (s in seq_len(n_splits)) {
    set.seed(s)
    test <- sample(nrow(ds$data), round(0.2 * nrow(ds$data)))
    train <- ds$data[-test, ]
    set.seed(100 + s)
    t0 <- proc.time()
    fit <- suppressWarnings(sgld(model_mlp(ds$f, train, hidden = 50), threads = 1))
    t1 <- proc.time() - t0
    sc <- score(fit, ds$data[test, ], ds$data[test, resp])
    why <- if (is.null(fit$auto$stopped)) "-" else fit$auto$stopped
    cat(sprintf("%s\t%s\t%d\t%d\t%.1f\t%.4f\t%.4f\t%s\n", label, set, s, nrow(train),
                t1[["user.self"]] + t1[["sys.self"]], sc[["rmse"]], sc[["ll"]], why))
    flush(stdout())
  }
}
