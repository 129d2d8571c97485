# The model contract (R/model.R): generic code asks a model's methods, never
# its class; log_lik() comes from each C table's row log likelihoods.

test_that("no code outside R/model-*.R tests a model's class", {
  # Generic code dispatches on the generics of R/model.R. Until the calls in
  # R/auto.R and R/warnings.R are replaced by model_capabilities() (see
  # ARCHITECTURE.md, "The model contract"), this test fails and lists them.
  dir <- test_path("..", "..", "R")
  skip_if_not(dir.exists(dir), "the package's R sources are not at hand")
  files <- setdiff(list.files(dir, pattern = "[.]R$", full.names = TRUE),
                   list.files(dir, pattern = "^model-.*[.]R$", full.names = TRUE))
  hits <- unlist(lapply(files, function(f) {
    lines <- readLines(f)
    at <- grep("inherits\\([^)]*\"sgld_model_", lines)
    if (length(at)) paste0(basename(f), ":", at, ": ", trimws(lines[at]))
  }))
  expect(length(hits) == 0,
         paste0("generic code tests model classes; use model_capabilities() or another ",
                "generic of R/model.R instead:\n", paste(hits, collapse = "\n")))
})

test_that("log_lik() in C equals the R formulas to 1e-12, for any number of threads", {
  set.seed(1)
  n <- 300; S <- 50
  d <- data.frame(x = rnorm(n), u = runif(n))
  d$y <- 1 + d$x + rnorm(n)
  d$b <- rbinom(n, 1, plogis(d$x))
  X <- cbind(1, d$x, d$u)
  for (m in list(model_linear(y ~ x + u, data = d, weights = rep(1:3, 100), offset = u / 2, prior = prior_nig()),
                 model_logistic(b ~ x + u, data = d, offset = u, prior = prior_normal(0, 10), prior_intercept = NULL),
                 model_logistic(b ~ x + u, data = d, sparse = TRUE, prior = prior_normal(0, 10), prior_intercept = NULL))) {
    W <- matrix(rnorm(S * m$d, 0, 0.3), S)
    eta <- W[, 1:3] %*% t(X)
    ref <- if (m$type == "linear") {
      gam <- W[, 4]
      y <- rep(d$y - d$u / 2, each = S)
      rep(rep(1:3, 100), each = S) *
        (-0.5 * (log(2 * pi) + gam) - 0.5 * exp(-gam) * (y - eta)^2)
    } else {
      e <- eta + if (is.null(m$obs_offset)) 0 else rep(d$u, each = S)
      ifelse(rep(d$b, each = S) == 1, plogis(e, log.p = TRUE), plogis(-e, log.p = TRUE))
    }
    for (threads in 1:2)
      expect_equal(sgld:::model_loglik_rows(m, W, threads), matrix(ref, S), tolerance = 1e-12)
  }
})

# a generic of the package called as the package calls it (its methods are
# found from its namespace)
package_call <- function(fun, ...) eval(as.call(list(as.name(fun), ...)), asNamespace("sgld"))

test_that("every model type answers the contract's generics", {
  m <- model_poisson(breaks ~ wool, data = datasets::warpbreaks, prior = prior_normal(0, 10), prior_intercept = NULL)
  cap <- package_call("model_capabilities", m)
  expect_true(cap$regression && cap$laplace && cap$smooth_likelihood)
  eng <- sgld:::model_engine(m)
  expect_true(eng$loglik_rows && eng$expected_loglik && eng$grad_loglik_local)
  expect_false(sgld:::model_engine(model_negbin(breaks ~ wool, data = datasets::warpbreaks, prior = prior_normal(0, 10), prior_intercept = NULL, prior_overdispersion = 1))$expected_loglik)
  expect_false(package_call("model_capabilities", model_mixture(c(-1, 1, 2)))$laplace)
  expect_true(package_call("model_capabilities", model_linear(breaks ~ wool,
                                                              data = datasets::warpbreaks, prior = prior_nig()))$exact_posterior)
})
