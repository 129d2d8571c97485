# Every built-in model against every method of the table of ?sgld_fit_methods
# (R/capabilities.R): each combination either answers with the right shape
# (and, where the answer is exact, the right value) or stops with the reason
# the model declares. The fits are tiny and short: the methods are checked
# against the draws the fit holds, whatever their quality.

grid_data <- local({
  set.seed(54)
  n <- 24
  d <- data.frame(x = rnorm(n), x2 = rnorm(n))
  d$y <- 1 + d$x + rnorm(n, sd = 0.5)
  d$k <- rpois(n, exp(0.3 + 0.5 * d$x))
  d$b <- rbinom(n, 1, plogis(d$x))
  d$g <- factor(sample(c("u", "v", "w"), n, TRUE))
  d
})

grid_custom <- function(d) {
  # y ~ N(m, 1): one parameter, its log likelihood written in R
  model_custom(cbind(y = d$y), loglik = function(w, batch) sum(dnorm(batch[, 1], w[1], 1, log = TRUE)),
               grad_loglik = function(w, batch) sum(batch[, 1] - w[1]),
               logprior = function(w) dnorm(w[1], 0, 10, log = TRUE),
               grad_logprior = function(w) -w[1] / 100, init = 0, names = "m")
}

grid_fits <- local({
  d <- grid_data
  run <- function(m, ...) sgld(m, chains = 2, iter = 400, burnin = 200, thin = 20,
                               pars = TRUE, ...)
  set.seed(541)
  quietly_checked(list(
    linear = run(model_linear(y ~ x, data = d), lr = 1e-3, batch_size = 8),
    logistic = run(model_logistic(b ~ x, data = d), lr = 1e-3, batch_size = 8),
    poisson = run(model_poisson(k ~ x, data = d), lr = 1e-3, batch_size = 8),
    negbin = run(model_negbin(k ~ x, data = d), lr = 1e-3, batch_size = 8),
    mixture = run(model_mixture(d$x), lr = 1e-3, batch_size = 8),
    ica = run(model_ica(cbind(d$x, d$x2)), lr = 1e-3, batch_size = 8),
    sv = run(model_sv(d$y - 1), lr = 0.01),
    mlp_regression = run(model_mlp(y ~ x, data = d, hidden = 3), lr = 1e-3, batch_size = 8),
    mlp_two_classes = run(model_mlp(factor(b) ~ x, data = d, hidden = 3), lr = 1e-3,
                          batch_size = 8),
    mlp_classes = run(model_mlp(g ~ x, data = d, hidden = 3), lr = 1e-3, batch_size = 8),
    custom = run(grid_custom(d), lr = 1e-3, batch_size = 8),
    glmm = run(model_glmer(y ~ x + (1 | g), data = d), lr = 1e-4, batch_size = 24)
  ))
})

# The exact log likelihood of each training row at each draw (draws x rows),
# from the model's definition written out in R.
exact_log_lik <- function(fit) {
  m <- fit$model
  u <- as.matrix(fit)                       # user scale, chain after chain
  W <- as.matrix(fit, scale = "sampler")
  X <- if (!is.null(m$p) && !inherits(m, "sgld_model_glmm")) sgld:::design_for_newdata(m, NULL)
  beta <- function() u[, colnames(X), drop = FALSE]
  ll <- switch(class(m)[1],
    sgld_model_linear = {
      mu <- beta() %*% t(X)
      dnorm(rep(grid_data$y, each = nrow(mu)), mu, sqrt(u[, "sigma2"]), log = TRUE)
    },
    sgld_model_logistic = {
      p <- plogis(beta() %*% t(X))
      dbinom(rep(grid_data$b, each = nrow(p)), 1, p, log = TRUE)
    },
    sgld_model_poisson = {
      mu <- exp(beta() %*% t(X))
      dpois(rep(grid_data$k, each = nrow(mu)), mu, log = TRUE)
    },
    sgld_model_negbin = {
      mu <- exp(beta() %*% t(X))
      dnbinom(rep(grid_data$k, each = nrow(mu)), size = u[, "phi"], mu = mu, log = TRUE)
    },
    sgld_model_mixture = {
      x <- rep(grid_data$x, each = nrow(u))
      s <- sqrt(m$sigma2_x)
      log(0.5 * dnorm(x, u[, 1], s) + 0.5 * dnorm(x, u[, 1] + u[, 2], s))
    },
    sgld_model_ica = {
      Xc <- scale(cbind(grid_data$x, grid_data$x2), scale = FALSE)
      t(apply(u, 1, function(w) {
        Wm <- matrix(w, 2)
        s <- Xc %*% t(Wm)
        log(abs(det(Wm))) - rowSums(2 * log(cosh(s / 2)) + log(4))
      }))
    },
    sgld_model_sv = {
      h <- u[, m$k + seq_len(m$n)]
      dnorm(rep(m$y, each = nrow(h)), 0, exp(h / 2), log = TRUE)
    },
    sgld_model_mlp = {
      f <- sgld:::mlp_outputs(m, X, W)          # a forward pass in R, per output
      y <- m$z[m$p + 1, ]
      if (m$family == "gaussian")
        return(t(dnorm(m$y_mean + m$y_sd * y, m$y_mean + m$y_sd * f[[1]],
                       rep(sqrt(u[, "sigma2"]) * m$y_sd, each = nrow(X)), log = TRUE)))
      if (m$family == "binomial") return(t(dbinom(y, 1, plogis(f[[1]]), log = TRUE)))
      lse <- log(Reduce(`+`, lapply(f, exp)))
      vapply(seq_along(y), function(i) f[[y[i] + 1]][i, ] - lse[i, ], numeric(nrow(W)))
    },
    sgld_model_custom = {
      outer(u[, 1], grid_data$y, function(a, b) dnorm(b, a, 1, log = TRUE))
    },
    sgld_model_glmm = {
      # rstanarm's parameters: the fixed part plus the row's group's effect
      b <- u[, paste0("b[(Intercept) g:", grid_data$g, "]")]
      mu <- u[, "(Intercept)"] + u[, "x"] %o% grid_data$x + b
      dnorm(rep(grid_data$y, each = nrow(mu)), mu, u[, "sigma"], log = TRUE)
    })
  matrix(ll, nrow(u))
}

# Each method of the table called on a fit; its result checked. `n` rows,
# `S` draws.
grid_call <- list(
  predict = function(fit, n, S) {
    p <- predict(fit)
    expect_equal(NROW(p), n)
  },
  predict_interval = function(fit, n, S) {
    for (iv in c("confidence", "prediction")) {
      p <- predict(fit, interval = iv, level = 0.8)
      expect_identical(dim(p), c(n, 3L))
      expect_identical(colnames(p), c("fit", "lwr", "upr"))
      expect_true(all(p[, "lwr"] <= p[, "upr"]))
    }
    # the interval's centre is predict()'s posterior mean
    expect_equal(unname(p[, "fit"]), unname(predict(fit)), tolerance = 1e-9)
  },
  posterior_predict = function(fit, n, S) {
    expect_identical(dim(rstantools::posterior_predict(fit)), c(S, n))
    expect_identical(dim(rstantools::posterior_predict(fit, ndraws = 3)), c(3L, n))
  },
  predictive_interval = function(fit, n, S) {
    set.seed(5)
    iv <- rstantools::predictive_interval(fit, prob = 0.8)
    expect_identical(dim(iv), c(n, 2L))
    set.seed(5)
    yrep <- rstantools::posterior_predict(fit)
    expect_equal(unname(iv), unname(t(apply(yrep, 2, quantile, c(0.1, 0.9)))))
  },
  pp_check = function(fit, n, S) {
    skip_if_not_installed("bayesplot")
    expect_s3_class(bayesplot::pp_check(fit, ndraws = 5), "ggplot")
  },
  posterior_epred = function(fit, n, S) {
    mu <- rstantools::posterior_epred(fit)
    expect_identical(dim(mu), c(S, n))
    expect_identical(dim(rstantools::posterior_linpred(fit)), c(S, n))
    expect_equal(rstantools::posterior_linpred(fit, transform = TRUE), mu)
    # predict() averages the same draws in C
    expect_equal(unname(colMeans(mu)), unname(predict(fit)), tolerance = 1e-9)
  },
  log_lik = function(fit, n, S) {
    ll <- rstantools::log_lik(fit)
    expect_identical(dim(ll), c(S, n))
    expect_equal(unname(ll), unname(exact_log_lik(fit)), tolerance = 1e-9)
    l <- suppressWarnings(loo::loo(fit))
    expect_s3_class(l, "psis_loo")
    expect_identical(dim(l$pointwise)[1], n)
    expect_s3_class(suppressWarnings(loo::waic(fit)), "waic")
  },
  fitted = function(fit, n, S) {
    mu <- fitted(fit)
    expect_length(mu, n)
    expect_equal(unname(residuals(fit)), unname(sgld:::replicated_response(fit$model) - mu))
  },
  family = function(fit, n, S) expect_s3_class(family(fit), "family"),
  posterior_interval = function(fit, n, S) {
    d <- ncol(as.matrix(fit))                 # the parameters, and sigma beside sigma2
    expect_identical(dim(rstantools::posterior_interval(fit)), c(d, 2L))
    expect_identical(dim(confint(fit)), c(d, 2L))
  }
)

test_that("every model answers every method of the table or stops with its reason", {
  skip_if_not_installed("rstantools")
  skip_if_not_installed("loo")
  expect_setequal(names(grid_call), names(sgld:::fit_methods))
  answered <- 0
  for (name in names(grid_fits)) {
    fit <- grid_fits[[name]]
    n <- as.integer(fit$model$n)
    S <- nrow(as.matrix(fit))
    declared <- sgld:::method_table(list(fit$model))[[1]]
    for (method in names(grid_call)) {
      label <- paste(name, method)
      if (isTRUE(declared[[method]])) {
        answered <- answered + 1
        failure <- tryCatch({grid_call[[method]](fit, n, S); NULL}, error = conditionMessage)
        expect_null(failure, label = label)
      } else {
        expect_type(declared[[method]], "character")
        expect_error(grid_call[[method]](fit, n, S),
                     paste0("is not available for ", class(fit$model)[1], ": ",
                            declared[[method]]), fixed = TRUE, label = label)
      }
    }
  }
  # the regressions and the multilevel model answer all 10, networks and the others fewer (the
  # compiled model is checked in test-model-compiled.R, which builds one)
  expect_gte(answered, 5 * 10 + 9 + 8 + 5)
})

test_that("ARCHITECTURE.md's method table is the one the declarations generate", {
  path <- test_path("..", "..", "ARCHITECTURE.md")
  skip_if_not(file.exists(path), "ARCHITECTURE.md is not in the built package")
  text <- readLines(path)
  begin <- grep("<!-- method-table: begin", text, fixed = TRUE)
  end <- grep("<!-- method-table: end", text, fixed = TRUE)
  expect_length(begin, 1)
  expect_identical(text[seq_len(end - begin - 1) + begin], sgld:::method_table_markdown(),
                   label = "the table in ARCHITECTURE.md (run Rscript tools/method-table.R)")
})

test_that("?sgld_fit_methods holds the generated table", {
  rd <- test_path("..", "..", "man", "sgld_fit_methods.Rd")
  skip_if_not(file.exists(rd), "man/ is not in the installed package")
  # roxygen turns the reasons' markdown into Rd and refills the lines
  plain <- function(x) gsub("\\s+", " ", gsub("\\\\code\\{([^}]*)\\}|`([^`]*)`", "\\1\\2", x))
  text <- plain(paste(readLines(rd), collapse = " "))
  table <- sgld:::method_table()
  for (model in names(table)) {
    expect_true(grepl(paste0("\\item{", model, "}"), text, fixed = TRUE), label = model)
    for (why in Filter(is.character, table[[model]]))
      expect_true(grepl(plain(why), text, fixed = TRUE), label = why)
  }
})

test_that("a network's log likelihood is the same on any number of threads", {
  fit <- grid_fits$mlp_classes
  W <- as.matrix(fit, scale = "sampler")
  expect_identical(sgld:::model_loglik_rows(fit$model, W, threads = 1L),
                   sgld:::model_loglik_rows(fit$model, W, threads = 2L))
})

test_that("loo ranks a network and a linear model as their held-out log densities do", {
  skip_if_not_installed("rstantools")
  skip_if_not_installed("loo")
  # a curve a straight line cannot follow: the network's held-out density is
  # far higher, and loo on the training rows must say so
  set.seed(7)
  n <- 160
  x <- runif(2 * n, -3, 3)
  d <- data.frame(x = x, y = sin(1.5 * x) + 0.3 * x + rnorm(2 * n, sd = 0.3))
  train <- d[seq_len(n), ]
  test <- d[n + seq_len(n), ]
  set.seed(71)
  lin <- sgld(model_linear(y ~ x, data = train), chains = 2, lr = 1e-3, batch_size = n,
              iter = 4000, burnin = 1000, thin = 15)
  # the automatic settings' step is chosen large for mixing (the fit warns
  # that its draws spread wider than the posterior: loo on them had 70-90% of
  # Pareto k above 0.7 and p_loo 30-120); a tenth of it from where those
  # chains ended gives draws whose loo is reliable (every k below 0.7, p_loo
  # 8-10 over seeds 71-73)
  net_model <- model_mlp(y ~ x, data = train, hidden = 10, activation = "tanh")
  # a pilot: its automatic step may be large for exact draws (the network's
  # step warning), which the run below divides by 10
  pilot <- quietly_checked(sgld(net_model, chains = 2, iter = 20000), c(run_check_kinds, "mlp_step"))
  net <- quietly_checked(sgld(net_model, chains = 2, init = pilot$last, lr = pilot$auto$lr / 10,
                               batch_size = 32, iter = 20000, burnin = 5000, thin = 15,
                               pars = TRUE))
  # the sum over held-out rows of the log of the posterior mean density
  heldout <- function(fit) {
    ll <- rstantools::log_lik(fit, newdata = test)
    expect_identical(dim(ll), c(nrow(as.matrix(fit)), as.integer(n)))
    sum(apply(ll, 2, function(v) max(v) + log(mean(exp(v - max(v))))))
  }
  held <- c(lin = heldout(lin), net = heldout(net))
  looes <- suppressWarnings(list(lin = loo::loo(lin), net = loo::loo(net)))
  elpd <- vapply(looes, function(l) l$estimates["elpd_loo", "Estimate"], 0)
  cmp <- loo::loo_compare(looes$lin, looes$net)
  # measured: held-out -184.7 (linear) and -37.5 (network); loo -182.9 and
  # -56.9, a difference of 126 with se 8.7
  expect_gt(held[["net"]] - held[["lin"]], 50)
  expect_identical(sign(elpd[["net"]] - elpd[["lin"]]), sign(held[["net"]] - held[["lin"]]))
  expect_gt(abs(cmp[2, "elpd_diff"]) / cmp[2, "se_diff"], 4)
  expect_true(all(looes$net$diagnostics$pareto_k < 0.7))
  # the network's 90% prediction intervals on the held-out rows
  set.seed(74)
  iv <- predict(net, newdata = test, interval = "prediction", level = 0.9)
  cover <- mean(test$y >= iv[, "lwr"] & test$y <= iv[, "upr"])
  # measured 0.95; 0.9 +- 3.3 binomial sds of 160 rows
  expect_gt(cover, 0.82)
  expect_lt(cover, 0.98)
  # a new observation's interval is wider than its mean's (widths measured
  # 1.11-1.23 against 0.25-0.44)
  conf <- predict(net, newdata = test, interval = "confidence", level = 0.9)
  expect_true(all(iv[, "upr"] - iv[, "lwr"] > conf[, "upr"] - conf[, "lwr"]))
  expect_equal(unname(conf[, "fit"]), unname(predict(net, newdata = test)), tolerance = 1e-9)
  # the linear model's loo is close to its held-out density (one posterior
  # mode, no influential row)
  expect_lt(abs(elpd[["lin"]] - held[["lin"]]), 3 * looes$lin$estimates["elpd_loo", "SE"])
})

test_that("stochastic volatility's log_lik is each day's t density given the path", {
  set.seed(55)
  y <- rnorm(30)
  for (type in c("rw", "ar1")) {
    m <- model_sv(y, type = type, errors = "t")
    W <- matrix(rnorm(4 * m$d, sd = 0.5), 4)      # sampler scale: globals, then the path
    ll <- sgld:::model_loglik_rows(m, W, threads = 2L)
    path <- W[, m$k + seq_len(m$n)]
    if (type == "rw") {
      nu <- exp(W[, 2])                                   # log nu
      scale <- exp(path)                                  # y ~ t_nu(0, e^s)
    } else {
      nu <- 2 + exp(W[, 4])                               # log(nu - 2)
      scale <- exp(path / 2) * sqrt((nu - 2) / nu)        # a t of variance e^h
    }
    expect_equal(ll, dt(rep(y, each = 4) / scale, nu, log = TRUE) - log(scale),
                 tolerance = 1e-10, ignore_attr = TRUE, label = type)
  }
})
