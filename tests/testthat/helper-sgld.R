# Shared fixtures for the tests.
# The handout's references (linear_exact_posterior()) are those of its
# conjugate prior, prior_nig(), unless another is given.
handout_model <- function(..., prior = prior_nig()) {
  model_linear(y ~ x, data = sgld::handout, prior = prior, ...)
}

# A small simulated regression, for fast tests that do not need the handout data.
small_data <- function(n = 200, seed = 3) {
  set.seed(seed)
  x1 <- rnorm(n)
  x2 <- rnorm(n)
  g <- factor(sample(c("a", "b", "c"), n, replace = TRUE))
  y <- 1 + 0.5 * x1 - 0.25 * x2 + c(a = 0, b = 0.3, c = -0.2)[as.character(g)] + rnorm(n, sd = 0.7)
  data.frame(y = y, x1 = x1, x2 = x2, g = g)
}

central_difference <- function(f, w, h = 1e-5) {
  vapply(seq_along(w), function(j) {
    e <- replace(numeric(length(w)), j, h * max(1, abs(w[j])))
    (f(w + e) - f(w - e)) / (2 * e[j])
  }, numeric(1))
}

# The largest relative errors, max |a - b| / max(1, |b|), of a model's
# likelihood and prior gradients at w against central finite differences of
# its log densities.
gradient_errors <- function(model, w) {
  ev <- log_posterior(model, w)
  fd_lik <- central_difference(function(v) log_posterior(model, v)$loglik, w)
  fd_prior <- central_difference(function(v) log_posterior(model, v)$logprior, w)
  rel <- function(a, b) max(abs(a - b) / pmax(1, abs(b)))
  c(lik = rel(ev$grad_loglik, fd_lik), prior = rel(ev$grad_logprior, fd_prior))
}

# Evaluate expr, returning its value and the messages of every warning it gave.
with_warnings <- function(expr) {
  msgs <- character()
  value <- withCallingHandlers(expr, warning = function(w) {
    msgs <<- c(msgs, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = msgs)
}

# MASS::Pima.tr with standardised covariates: a real data set for logistic regression.
pima <- function() {
  d <- MASS::Pima.tr
  d[1:7] <- scale(d[1:7])
  d
}

# A long random-walk Metropolis run on a model's log posterior (sampler scale),
# with a Gaussian proposal of covariance `scale^2 * S`: an exact reference.
rwm <- function(model, start, S, iter, scale = 2.38 / sqrt(length(start))) {
  R <- chol(S) * scale
  d <- length(start)
  out <- matrix(NA_real_, iter, d)
  w <- start
  lp <- log_posterior(model, w)$logpost
  accepted <- 0
  z <- matrix(rnorm(iter * d), iter, d) %*% R
  u <- log(runif(iter))
  for (t in seq_len(iter)) {
    prop <- w + z[t, ]
    lp_prop <- log_posterior(model, prop)$logpost
    if (u[t] < lp_prop - lp) {
      w <- prop
      lp <- lp_prop
      accepted <- accepted + 1
    }
    out[t, ] <- w
  }
  structure(out, acceptance = accepted / iter)
}

# Interrupts a callr::r_bg() child `settle` seconds after it has written the
# file `flag` (the run under test is then under way), as Ctrl-C would, and
# returns what the child returned.
interrupt_child <- function(child, flag, settle) {
  deadline <- Sys.time() + 60
  while (!file.exists(flag) && Sys.time() < deadline) Sys.sleep(0.1)
  Sys.sleep(settle)
  expect_true(child$is_alive())
  child$interrupt()
  child$wait(30000)
  expect_false(child$is_alive())
  child$get_result()
}

# Runs run(flag) in a callr::r_bg() child with sgld loaded, collecting the
# messages of its warnings, and interrupts it `settle` seconds after the file
# `flag` appears: written just before run() is called, or by run() itself
# once its sampler is under way (flag_first = FALSE). Returns
# list(fit = what run() returned, warnings = ...).
interrupted_run <- function(run, settle, flag_first = TRUE) {
  flag <- tempfile()
  environment(run) <- globalenv()       # travel without the test's frames
  child <- callr::r_bg(function(run, flag, flag_first) {
    library(sgld)
    warnings <- character()
    if (flag_first) writeLines("started", flag)
    fit <- withCallingHandlers(run(flag), warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
    list(fit = fit, warnings = warnings)
  }, args = list(run = run, flag = flag, flag_first = flag_first))
  on.exit(child$kill(), add = TRUE)
  interrupt_child(child, flag, settle)
}
