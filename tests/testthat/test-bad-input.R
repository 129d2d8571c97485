# Malformed calls to the exported functions, one row each: the call, and a
# pattern the error message must match, which names the argument (or the
# data column) and the rule. None may crash, hang, warn, or return.

bad_input_fixtures <- function() {
  set.seed(1)
  df <- data.frame(y = rnorm(30), x = rnorm(30), g = factor(sample(c("a", "b"), 30, TRUE)))
  m <- model_linear(y ~ x, data = df, prior = prior_nig())
  # (a short run for the methods below: its checks warn)
  fit <- expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 5, iter = 200, chains = 1))
  list(df = df, m = m, X = cbind(1, df$x), fit = fit,
       lg = model_logistic(g ~ x, data = df, prior = prior_normal(0, 10), prior_intercept = NULL),
       ica = model_ica(cbind(df$x, df$y)),
       gl = function(w, batch) -nrow(batch) * w, gp = function(w) -w,
       cm = model_custom(cbind(1, df$x), function(w, batch) -nrow(batch) * w, function(w) -w,
                         d = 2))
}

bad_calls <- list(
  # models: data of the wrong kind, shape or content
  list(quote(model_linear(y ~ x + z, data = transform(df, z = 1), prior = prior_nig())), "`data`: the formula gives the constant column 'z'"),
  list(quote(model_linear(y ~ x + z, data = transform(df, z = x), prior = prior_nig())), "`data`: the formula gives two identical columns, 'x' and 'z'"),
  list(quote(model_linear(y ~ x, data = df[1, ], prior = prior_nig())), "`data` must have at least 2 observations"),
  list(quote(model_linear(y ~ x, data = df[0, ], prior = prior_nig())), "`data` has no rows"),
  list(quote(model_linear(X, as.list(df$y), prior = prior_nig())), "`y` must be a finite numeric vector"),
  list(quote(model_linear(y ~ x, data = transform(df, y = g), prior = prior_nig())), "response of `x` must be a numeric vector"),
  list(quote(model_linear(matrix(numeric(0), 0, 2), numeric(0), prior = prior_nig())), "`x` must have at least one row"),
  list(quote(model_linear(X * c(NaN, rep(1, 29)), df$y, prior = prior_nig())), "`x` must be finite; it has NaN in row 1"),
  list(quote(model_linear(y ~ x, data = list(y = 1:3, x = 1:3), prior = prior_nig())), "`data` must be a data frame"),
  list(quote(model_logistic(x ~ y, data = transform(df, x = rep(1:3, 10)), prior = prior_normal(0, 10), prior_intercept = NULL)), "must be 0/1, -1/\\+1, logical or a two-level factor"),
  list(quote(model_logistic(X, rep(1, 30), prior = prior_normal(0, 10), prior_intercept = NULL)), "`y` must have two classes"),
  list(quote(model_logistic(X, c(NA, rep(0:1, length.out = 29)), prior = prior_normal(0, 10), prior_intercept = NULL)), "`y` must not be NA"),
  list(quote(model_logistic(X, rep(0:1, 15), prior = prior_nig(), prior_intercept = NULL)), "`prior` must be made by prior_normal\\(\\) or prior_laplace\\(\\)"),
  list(quote(model_logistic(X, rep(0:1, 15), sparse = "yes", prior = prior_normal(0, 10), prior_intercept = NULL)), "`sparse` must be TRUE or FALSE"),
  list(quote(model_mixture(letters)), "`x` must be a numeric vector"),
  list(quote(model_mixture(numeric(0))), "`x` must have at least one value"),
  list(quote(model_mixture(c(1, Inf))), "`x` must be finite; it has Inf at position 2"),
  list(quote(model_mixture(1:3, sigma2_x = -1)), "`sigma2_x` must be greater than 0"),
  list(quote(model_ica(matrix(1:10, 10, 1))), "`X` must have at least two columns"),
  list(quote(model_ica(cbind(df$x, 1))), "`X` has a constant column \\(2\\)"),
  list(quote(model_ica(cbind(df$x, c(NA, df$y[-1])))), "`X` must be finite"),
  list(quote(model_custom(list(1), gl, gp, d = 1)), "`data` must be a matrix or a data frame, one row per data item"),
  list(quote(model_custom(X[0, ], gl, gp, d = 1)), "`data` has no rows"),
  list(quote(model_custom(X, gl, gp)), "give the number of parameters: `d` or `names`"),
  list(quote(model_custom(X, "f", gp, d = 2)), "`grad_loglik` must be a function or NULL, not \"f\""),
  list(quote(model_custom(X, NULL, gp, d = 2)), "`grad_loglik` must be a function \\(it may be NULL only when `loglik` is given"),
  list(quote(model_custom(X, gl, NULL, d = 2)), "`grad_logprior` must be a function \\(it may be NULL only when `logprior` is given"),
  list(quote(model_custom(X, gl, gp, loglik = 1, d = 2)), "`loglik` must be a function or NULL"),
  list(quote(model_custom(X, gl, gp, d = 2, n = 10)), "`n` must be the number of rows of `data` \\(30\\), not 10"),
  list(quote(model_custom(X, gl, gp, d = 0)), "`d` must be a whole number between 1"),
  list(quote(model_custom(X, gl, gp, d = 2, names = "a")), "`names` must be 2 non-empty names"),
  list(quote(model_custom(X, gl, gp, names = c("a", "a"))), "`names` must be distinct; 'a' appears twice"),
  list(quote(model_custom(X, gl, gp, d = 2, transform = exp)), "`transform` must be NULL or list\\(to_user = , to_sampler = \\)"),
  list(quote(model_custom(X, gl, gp, d = 2, init = 1)), "`init` must be NULL or a finite numeric vector of length 2"),
  list(quote(model_custom(X, gl, gp, d = 2, transform = list(to_user = exp, to_sampler = exp), init = c(1, 1))),
       "`transform`: to_user\\(to_sampler\\(init\\)\\) does not give `init` back"),
  list(quote(model_custom(X, gl, gp, d = 2, transform = list(to_user = function(w) w[1], to_sampler = identity))),
       "`transform\\$to_user` must return a numeric vector of length 2"),
  list(quote(mala(cm, lr = 1e-4, chains = 1)), "mala\\(\\) needs the log densities of the model, but model_custom\\(\\) was given no `loglik` and `logprior`"),
  list(quote(sgld(cm, lr = 1e-4, monitor = monitor_every(10), chains = 1)), "`monitor` needs the log densities of the model, but model_custom\\(\\) was given no `loglik`"),
  list(quote(model_compiled(NULL)), "`pointer` must be an external pointer made by sgld_model_pointer\\(\\) in compiled code, not NULL"),
  list(quote(model_compiled(1:3)), "`pointer` must be an external pointer .* not an integer vector of length 3"),
  list(quote(model_compiled(sgld:::C_sgld_run$address)), "`pointer` is an external pointer, but not one made by sgld_model_pointer\\(\\)"),
  # priors
  list(quote(prior_normal(0, -1)), "`sd` must be positive and finite"),
  list(quote(prior_normal("a", 1)), "`mean` must be a numeric vector of finite values"),
  list(quote(prior_laplace(0, 0)), "`scale` must be positive and finite"),
  list(quote(prior_nig(shape = Inf)), "`shape` must be a single finite number"),
  # sampler arguments
  list(quote(sgld(m, lr = -1, chains = 1)), "`lr` must be a positive finite learning rate"),
  list(quote(sgld(m, lr = c(1, 2), chains = 1)), "`lr` must be a positive number or a schedule"),
  list(quote(sgld(m, lr = NA, chains = 1)), "`lr` must be a positive number or a schedule"),
  list(quote(sgld(m, lr = "fast", chains = 1)), "`lr` must be a positive number or a schedule"),
  list(quote(sgld(m, lr = list(1e-4), chains = 1)), "`lr` must be a positive number or a schedule"),
  list(quote(sgld(m, lr = 1e-4, batch_size = 31, chains = 1)), "`batch_size` must be a whole number between 1 and 30"),
  list(quote(sgld(m, lr = 1e-4, batch_size = 2.5, chains = 1)), "`batch_size` must be a single whole number"),
  list(quote(sgld(m, lr = 1e-4, batch_size = -3, chains = 1)), "`batch_size` must be a whole number between 1 and 30"),
  list(quote(sgld(m, lr = 1e-4, iter = 1e300, chains = 1)), "`iter` must be a whole number between 1 and"),
  list(quote(sgld(m, lr = 1e-4, iter = 0, chains = 1)), "`iter` must be a whole number between 1 and"),
  list(quote(sgld(m, lr = 1e-4, iter = list(10), chains = 1)), "`iter` must be a single whole number"),
  # with lr = "auto" too, before burnin's default reads it
  list(quote(sgld(m, iter = "1000", chains = 1)), "`iter` must be a single whole number"),
  list(quote(mala(m, iter = "1000", chains = 1)), "`iter` must be a single whole number"),
  list(quote(sghmc(m, lr = 1e-4, iter = "1000", chains = 1)), "`iter` must be a single whole number"),
  list(quote(psgld(m, lr = 1e-4, iter = "1000", chains = 1)), "`iter` must be a single whole number"),
  list(quote(sgd(m, lr = 1e-4, iter = "1000")), "`iter` must be a single whole number"),
  list(quote(gd(m, lr = 1e-4, iter = "1000")), "`iter` must be a single whole number"),
  list(quote(bbb(m, iter = "1000")), "`iter` must be a single whole number"),
  # a one-row data set: `data` and the rule, not the response's checks
  list(quote(model_linear(y ~ x, data = df[1, ], prior = prior_nig())), "`data` must have at least 2 observations, not 1"),
  list(quote(model_logistic(g ~ x, data = df[1, ], prior = prior_normal(0, 10), prior_intercept = NULL)), "`data` must have at least 2 observations, not 1"),
  list(quote(model_poisson(round(exp(x)) ~ 1, data = df[1, ], prior = prior_normal(0, 10), prior_intercept = NULL)), "`data` must have at least 2 observations, not 1"),
  list(quote(model_negbin(round(exp(x)) ~ 1, data = df[1, ], prior = prior_normal(0, 10), prior_intercept = NULL, prior_overdispersion = 1)), "`data` must have at least 2 observations, not 1"),
  list(quote(model_linear(y ~ x, data = df, subset = x >= max(x), prior = prior_nig())), "`data` must have at least 2 observations left after `subset` and `na.action`, not 1"),
  list(quote(sgld(g ~ x, data = df[1, ], family = binomial, chains = 1)), "`data` must have at least 2 observations, not 1"),
  list(quote(model_linear(y ~ x, data = df, subset = "a", prior = prior_nig())), "`subset` must be TRUE/FALSE for each of the 30 rows"),
  list(quote(model_linear(y ~ x, data = df, subset = c(NA, x[-1] > 0), prior = prior_nig())), "`subset` must be TRUE/FALSE .* \\(no NA\\)"),
  list(quote(model_linear(y ~ x, data = df, subset = 31, prior = prior_nig())), "`subset` must be .* row numbers between 1 and 30"),
  list(quote(sgld(m, lr = 1e-4, iter = 100, thin = 1000, chains = 1)), "`thin` must be at most iter - burnin = 50"),
  list(quote(sgld(m, lr = 1e-4, iter = 100, burnin = 100, chains = 1)), "`burnin` must be smaller than `iter`"),
  list(quote(sgld(m, lr = 1e-4, burnin = -1, chains = 1)), "`burnin` must be a whole number"),
  list(quote(sgld(m, lr = 1e-4, temperature = -1, chains = 1)), "`temperature` must be at least 0"),
  list(quote(sgld(m, lr = 1e-4, temperature = Inf, chains = 1)), "`temperature` must be a single finite number"),
  list(quote(sgld(m, lr = 1e-4, chains = 0)), "`chains` must be a whole number between 1 and 1,000"),
  list(quote(sgld(m, lr = 1e-4, chains = 1e6)), "`chains` must be a whole number between 1 and 1,000"),
  list(quote(sgld(m, lr = 1e-4, init = 1:2, chains = 1)), "`init` must have length 3"),
  list(quote(sgld(m, lr = 1e-4, init = c(1, NA, 1), chains = 1)), "`init` must be finite"),
  list(quote(sgld(m, lr = 1e-4, init = c(0, 0, -1), chains = 1)), "`init`: sigma2 must be positive"),
  list(quote(sgld(m, lr = 1e-4, init = "zero", chains = 1)), "`init` must be NULL, a numeric vector of length 3"),
  list(quote(sgld(m, lr = 1e-4, chains = 2, init = matrix(1, 3, 3))), "`init` must be a 2 x 3 matrix"),
  list(quote(sgld(m, lr = 1e-4, replace = "no", chains = 1)), "`replace` must be TRUE or FALSE"),
  list(quote(sgld(m, lr = 1e-4, clip = 5, chains = 1)), "`clip` must be NULL, clip_norm\\(\\) or clip_value\\(\\)"),
  list(quote(sgld(m, lr = 1e-4, threads = 0, chains = 1)), "`threads` must be a whole number between 1 and 1,024"),
  list(quote(sgld(m, lr = 1e-4, monitor = 100, chains = 1)), "`monitor` must be NULL or made by monitor_every\\(\\)"),
  list(quote(sgld(m, lr = 1e-4, diagnostics = TRUE, chains = 1)), "`diagnostics` must be NULL or made by diagnostics_every\\(\\)"),
  list(quote(sgld(m, lr = 1e-4, iters = 10, chains = 1)), "unknown argument: `iters`"),
  list(quote(sgld(list(), lr = 1e-4, chains = 1)), "`model` must be a model made by model_linear\\(\\)"),
  list(quote(sgld(model_linear(cbind(1, matrix(rnorm(300), 30)), df$y, prior = prior_nig()), lr = 1e-4, iter = 1e9, burnin = 0,
                  thin = 1, chains = 1)),
       "the run would keep up to 1e\\+09 draws of 12 parameters"),
  list(quote(sgld(m, lr = lr_poly(1e-6, 1, 0.55), iter = 4e15, thin = mixing_distance(1e-9), chains = 1)),
       "the run would keep up to .* draws"),
  list(quote(sgld(m, lr = 1e-4, control_variates = "yes", chains = 1)), "`control_variates` must be TRUE, FALSE, a fit"),
  list(quote(sgld(m, lr = 1e-4, control_variates = c(1, 2), chains = 1)), "`control_variates` must be a finite numeric vector of length 3"),
  list(quote(sgld(m, lr = 1e-4, precondition = matrix(c(1, 2, 0, 1, 1, 0, 0, 0, 1), 3), chains = 1)), "`precondition` must be symmetric"),
  list(quote(sgld(m, lr = 1e-4, precondition = function(w) w, chains = 1)), "`precondition` must be NULL"),
  list(quote(sgld(m, lr = 1e-4, init = fit, chains = 3)), "`init`: the fit to continue has 1 chain; set `chains = 1`"),
  list(quote(sgd(m, lr = 1e-4, optimizer = list())), "`optimizer` must be NULL, a name"),
  list(quote(gd(m, lr = 0)), "`lr` must be a positive finite learning rate"),
  list(quote(mala(m, lr = 1e-4, temperature = 0, chains = 1)), "`temperature` must be greater than 0"),
  list(quote(mala(m, lr = 1e-4, precondition = diag(2), chains = 1)), "`precondition` must be a finite 3 x 3 matrix"),
  list(quote(mala(m, lr = 1e-4, precondition = "rmsprop", chains = 1)), "`precondition` for mala\\(\\) must be NULL"),
  list(quote(sghmc(m, lr = 1e-4, friction = -0.1, chains = 1)), "`friction` must be greater than 0"),
  list(quote(psgld(m, lr = 1e-4, lambda = -1, chains = 1)), "`lambda` must be greater than 0"),
  list(quote(sgld(ica, lr = 1e-4, init = c(1, 1, 1, 1), chains = 1)), "`init`: the unmixing matrix must be invertible"),
  # schedules, clipping, collection and monitors
  list(quote(lr_poly(1, 1, gamma = -1)), "`gamma` must be greater than 0"),
  list(quote(lr_range(1e-3, 1e-2)), "`end` must be smaller than `start`"),
  list(quote(lr_piecewise(1e-3, T0 = 10, T1 = 5)), "`T1` must be greater than `T0`"),
  list(quote(lr_exp(NA, 1e-3)), "`start` must be a single finite number"),
  list(quote(lr_constant(Inf)), "`eta` must be a single finite number"),
  list(quote(lr_values(1e-3, t = 0)), "`t` must be whole numbers from 1"),
  list(quote(clip_norm(-1)), "`threshold` must be greater than 0"),
  list(quote(clip_value("a")), "`threshold` must be a single finite number"),
  list(quote(monitor_every(0)), "`every` must be a whole number between 1"),
  list(quote(sgld(m, lr = 1e-4, monitor = monitor_every(10, newdata = data.frame(x = 1)), chains = 1)), "`newdata` has no response column 'y'"),
  list(quote(diagnostics_every(1.5)), "`every` must be a single whole number"),
  list(quote(sampling_threshold(alpha = 0)), "`alpha` must be greater than 0"),
  list(quote(mixing_distance(-1)), "`D0` must be greater than 0"),
  list(quote(opt_adam(beta1 = 1)), "`beta1` must be less than 1"),
  # evaluation, estimation and prediction
  list(quote(log_posterior(m, c(1, 2))), "`w` must be a finite numeric vector of length 3"),
  list(quote(log_posterior(m, c(1, NA, 2))), "`w` must be a finite numeric vector of length 3"),
  list(quote(posterior_mode(m, init = c(1, 1, -1))), "`init`: sigma2 must be positive"),
  list(quote(posterior_mode(m, maxit = 0)), "`maxit` must be a whole number between 1"),
  list(quote(stochastic_gradients(m, at = 1:2)), "`at` must be a finite numeric vector of length 3"),
  list(quote(stochastic_gradients(m, at = c(0, 1, 1), batch_size = 5, times = 0)), "`times` must be a whole number between 1"),
  list(quote(predict(fit, newdata = data.frame(z = 1))), "`newdata` has no column named 'x'"),
  list(quote(predict(fit, type = "prob")), "`type` must be one of \"response\", \"link\", \"class\""),
  list(quote(predict(fit, draws = NA)), "`draws` must be TRUE or FALSE"),
  list(quote(as.matrix(fit, scale = "log")), "`scale` must be one of \"user\", \"sampler\""),
  list(quote(coef(fit, weighted = "yes")), "`weighted` must be TRUE or FALSE"),
  list(quote(posterior_mean(list())), "`fit` must be an sgld_fit"),
  list(quote(posterior_expectation(fit, fun = 3)), "`fun` must be a function"),
  list(quote(linear_exact_posterior(lg)), "`model` must be made by model_linear\\(\\)"),
  list(quote(grid_posterior(m, 1:3, 1:3)), "`model` must have two parameters"),
  list(quote(amari_distance("a", diag(2))), "`W` must be a finite square numeric matrix"),
  list(quote(ica_data(df = 2)), "`df` must be greater than 2"),
  list(quote(mixture_data(10, theta = 1)), "`theta` must be two finite numbers"),
  list(quote(adult_design(1:3)), "`data` must be a data frame such as `adult`"),
  list(quote(logistic_split_runs(m, lr = 1e-4)), "`x` must be a formula or a numeric design matrix")
)

test_that("every malformed call gives an error naming the argument and the rule", {
  fx <- bad_input_fixtures()
  expect_gte(length(bad_calls), 50)
  for (case in bad_calls) {
    label <- paste(deparse(case[[1]], width.cutoff = 500L), collapse = " ")
    # a warning on the way to the error would be a warn-and-continue: fail on it
    expect_error(withCallingHandlers(eval(case[[1]], fx),
                                     warning = function(w) stop("warned: ", conditionMessage(w))),
                 case[[2]], label = label)
  }
})

test_that("an interrupt in a child R process returns the draws made so far", {
  skip_if_not_installed("callr")
  skip_on_os("windows")
  out <- interrupted_run(function(flag) {
    m <- model_linear(y ~ x, data = handout, prior = prior_nig())
    set.seed(1)
    sgld(m, lr = 1e-7, batch_size = 10, iter = 1e9, burnin = 0, thin = 1e4, chains = 2,
         threads = 2)
  }, settle = 2)   # well into the billion iterations
  fit <- out$fit
  expect_true(all(fit$status %in% c("interrupted", "not run")))
  expect_true(any(fit$status == "interrupted"))
  expect_true(any(grepl("interrupted by the user", out$warnings)))
  # the draws made before the interrupt are all there, at the right iterations
  stopped <- which(fit$status == "interrupted")
  expect_true(all(fit$kept[stopped] >= 1))
  expect_true(all(fit$stop_iter[stopped] >= 1e4 * fit$kept[stopped]))
  expect_identical(fit$state$iteration[stopped], fit$stop_iter[stopped])
  expect_true(all(is.finite(fit$last)))
  # and the run continues from where it stopped
  more <- expect_run_warnings(sgld(fit$model, lr = 1e-7, batch_size = 10, iter = 1000, burnin = 0,
                                chains = 2, init = fit))
  expect_identical(more$iteration[1, stopped], fit$stop_iter[stopped] + 1)
})

test_that("extreme data give finite draws or a clear divergence report, never NaN draws", {
  set.seed(1)
  x <- rnorm(200)
  finite_or_reported <- function(fit) {
    all_draws <- c(as.matrix(fit), unlist(lapply(fit$partial, as.vector)))
    expect_true(all(is.finite(all_draws)))
    expect_true(all(fit$status %in% c("done", "diverged")))
  }
  run <- function(expr) {
    msgs <- character()
    fit <- withCallingHandlers(expr, warning = function(w) {
      msgs <<- c(msgs, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
    if (any(fit$status == "diverged")) expect_true(any(grepl("diverged at iteration", msgs)))
    finite_or_reported(fit)
    fit
  }
  # values of 1e8
  run(sgld(model_linear(cbind(1, x * 1e8), 1e8 * x + rnorm(200) * 1e8, prior = prior_nig()), lr = 1e-6,
           batch_size = 20, iter = 2000, chains = 1))
  # an exact linear fit: sigma2 heads for 0
  run(sgld(model_linear(cbind(1, x), 1 + 2 * x, prior = prior_nig()), lr = 1e-3, batch_size = 20, iter = 5000, chains = 1))
  # separable logistic data with a vague prior: the slope runs off, gradients stay finite
  m3 <- model_logistic(cbind(1, x), as.numeric(x > 0), prior = prior_normal(0, 1e6), prior_intercept = NULL)
  run(sgld(m3, lr = 1e-2, batch_size = 20, iter = 20000, chains = 1))
  lp <- log_posterior(m3, c(0, -1e6))
  expect_true(is.finite(lp$logpost) && all(is.finite(lp$grad_logpost)))
  # a step far too large: reported, not silent
  fit <- run(sgld(model_linear(cbind(1, x), 1 + 2 * x + rnorm(200), prior = prior_nig()), lr = 10, batch_size = 20,
                  iter = 1000, burnin = 0, chains = 1))
  expect_identical(fit$status, "diverged")
  # mixture data far from both means, and ICA data of very different scales
  run(sgld(model_mixture(c(1e8, -1e8, 0)), lr = 1e-3, batch_size = 1, iter = 1000, chains = 1))
  run(sgld(model_ica(cbind(rnorm(100) * 1e8, rnorm(100))), lr = 1e-3, batch_size = 10, iter = 1000, chains = 1))
})

test_that("defaults computed from other arguments follow the values the user gave", {
  m <- bad_input_fixtures()$m
  # burnin's default is half of the user's iter, for a given lr and for lr = "auto"
  set.seed(1)
  expect_equal(expect_run_warnings(sgld(m, lr = 1e-4, iter = 100, chains = 1))$settings$burnin, 50)
  expect_equal(expect_run_warnings(sghmc(m, lr = 1e-5, iter = 100, chains = 1))$settings$burnin, 50)
  expect_equal(expect_run_warnings(psgld(m, lr = 1e-4, iter = 100, chains = 1))$settings$burnin, 50)
  auto <- quietly_checked(sgld(m, iter = 100, chains = 1))
  expect_equal(c(auto$auto$iter, auto$auto$burnin), c(100, 50))
  auto <- quietly_checked(mala(m, iter = 300, chains = 1))
  expect_equal(c(auto$auto$iter, auto$auto$burnin), c(300, 150))
  expect_equal(auto$settings$iter, 300)
  # a burn-in the user gives is theirs to get right
  expect_error(mala(m, iter = 300, burnin = 400, chains = 1), "`burnin` must be smaller than `iter`")
})
