# Compiled models from other packages. The example plug-in shipped with sgld
# (inst/examples/sgldpoisson, Bayesian Poisson regression) is built against the
# installed sgld's public header and installed into a temporary library, once
# for this file, exactly as a user's package would be.

r_binary <- function() file.path(R.home("bin"), "R")

# The compiler R was configured with, and R's headers: without them nothing
# can be built, and the tests that need a build are skipped.
skip_without_compiler <- function() {
  skip_on_os("windows")   # would need Rtools; the interface itself is portable
  cc <- tryCatch(suppressWarnings(system2(r_binary(), c("CMD", "config", "CC"),
                                          stdout = TRUE, stderr = FALSE)),
                 error = function(e) "")
  cc <- strsplit(trimws(paste(cc, collapse = " ")), "[[:space:]]+")[[1]]
  skip_if(length(cc) == 0 || !nzchar(Sys.which(cc[1])), "no C compiler")
  skip_if_not(file.exists(file.path(R.home("include"), "Rinternals.h")), "no R headers")
}

# Runs `R CMD <args>` with this session's library path, so that LinkingTo and
# Imports find the sgld under test; fails the test with the log on an error.
r_cmd <- function(args, what) {
  log <- tempfile("r-cmd-", fileext = ".log")
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  status <- system2(r_binary(), c("CMD", args), stdout = log, stderr = log,
                    env = paste0("R_LIBS=", shQuote(libs)))
  if (!identical(status, 0L))
    stop(what, " failed (status ", status, "):\n", paste(readLines(log), collapse = "\n"),
         call. = FALSE)
  invisible(log)
}

poisson_example <- local({
  built <- NULL
  function() {
    skip_without_compiler()
    if (!is.null(built)) return(built)
    src <- system.file("examples", "sgldpoisson", package = "sgld")
    expect_true(nzchar(src))
    expect_true(file.exists(system.file("include", "sgld_model.h", package = "sgld")))
    # a copy: installing from the directory would compile inside sgld's library
    dir <- tempfile("sgldpoisson-")
    dir.create(dir)
    file.copy(src, dir, recursive = TRUE)
    lib <- file.path(dir, "lib")
    dir.create(lib)
    seconds <- system.time(
      r_cmd(c("INSTALL", "--no-docs", "--no-multiarch", paste0("--library=", shQuote(lib)),
              shQuote(file.path(dir, "sgldpoisson"))), "installing the example package")
    )[["elapsed"]]
    # by a variable: R CMD check would take a literal name for an undeclared
    # dependency, but this package exists only for the length of the test
    plugin <- basename(src)
    ns <- loadNamespace(plugin, lib.loc = lib)
    built <<- list(poisson_model = getExportedValue(ns, "poisson_model"), seconds = seconds)
    built
  }
})

poisson_data <- function(n = 500, seed = 7) {
  set.seed(seed)
  X <- cbind(intercept = 1, x1 = rnorm(n), x2 = rnorm(n))
  y <- rpois(n, exp(X %*% c(0.5, -0.3, 0.8)))
  list(X = X, y = y)
}

# The posterior of the Poisson model by importance sampling from its Laplace
# approximation, widened, in plain R: a reference that shares no code with
# sgld. Returns weighted means and sds, and the effective sample size.
poisson_reference <- function(X, y, prior_sd, draws = 20000) {
  log_post <- function(B) {   # one parameter vector per row of B
    eta <- X %*% t(B)
    colSums(y * eta - exp(eta)) - sum(lfactorial(y)) -
      rowSums(B^2) / (2 * prior_sd^2) - ncol(X) * log(prior_sd * sqrt(2 * pi))
  }
  mode <- optim(numeric(ncol(X)), function(b) -log_post(rbind(b)), method = "BFGS",
                control = list(reltol = 1e-14))$par
  H <- crossprod(X * sqrt(exp(drop(X %*% mode)))) + diag(ncol(X)) / prior_sd^2
  R <- 1.3 * chol(solve(H))
  Z <- matrix(rnorm(draws * ncol(X)), draws, ncol(X))
  B <- sweep(Z %*% R, 2, mode, `+`)
  log_w <- log_post(B) + rowSums(Z^2) / 2     # proposal density up to a constant
  w <- exp(log_w - max(log_w))
  w <- w / sum(w)
  mean <- colSums(B * w)
  list(mean = mean, sd = sqrt(colSums(sweep(B, 2, mean)^2 * w)), ess = 1 / sum(w^2))
}

test_that("the example plug-in builds, and its gradients equal central finite differences", {
  ex <- poisson_example()
  dat <- poisson_data()
  m <- ex$poisson_model(dat$X, dat$y, prior_sd = 2)
  expect_s3_class(m, c("sgld_model_compiled", "sgld_model_custom", "sgld_model"), exact = TRUE)
  expect_identical(m$d, 3L)
  expect_identical(m$n, 500)
  expect_identical(m$names, c("intercept", "x1", "x2"))
  expect_output(print(m), "Compiled model: 500 data items, 3 parameters \\(intercept, x1, x2\\)")
  set.seed(21)
  for (k in 1:20) {
    w <- c(0.5, -0.3, 0.8) + rnorm(3, sd = 0.5)
    ev <- log_posterior(m, w)
    # the densities themselves, against R's
    expect_equal(ev$loglik, sum(dpois(dat$y, exp(dat$X %*% w), log = TRUE)), tolerance = 1e-12)
    expect_equal(ev$logprior, sum(dnorm(w, 0, 2, log = TRUE)), tolerance = 1e-12)
    expect_lt(max(gradient_errors(m, w)), 1e-6)
  }
})

test_that("the compiled model samples with sgld() in threads and mala(), matching an exact reference", {
  ex <- poisson_example()
  dat <- poisson_data()
  m <- ex$poisson_model(dat$X, dat$y, prior_sd = 2)
  set.seed(31)
  ref <- poisson_reference(dat$X, dat$y, prior_sd = 2)
  expect_gt(ref$ess, 10000)
  # Monte Carlo standard errors of a mean and of an sd from an effective sample size
  agrees <- function(fit, label) {
    x <- as.matrix(fit)
    ess <- coda::effectiveSize(coda::as.mcmc.list(fit))
    expect_true(all(ess > 500), label = paste(label, "ESS"))
    se_mean <- ref$sd * sqrt(1 / ess + 1 / ref$ess)
    z <- abs(colMeans(x) - ref$mean) / se_mean
    expect_true(all(z < 4), info = paste(label, "mean z:", paste(format(z, digits = 2), collapse = " ")))
    ratio <- apply(x, 2, sd) / ref$sd
    se_ratio <- sqrt(1 / (2 * ess) + 1 / (2 * ref$ess))
    zr <- abs(ratio - 1) / se_ratio
    expect_true(all(zr < 4), info = paste(label, "sd z:", paste(format(zr, digits = 2), collapse = " ")))
  }
  # a step small enough that SGLD's own bias (about 2% in the sds) stays well
  # inside the Monte Carlo tolerance
  run <- function(threads) {
    set.seed(32)
    sgld(m, lr = 5e-6, batch_size = 50, iter = 4e5, burnin = 2e4, thin = 20,
         chains = 2, init = ref$mean, threads = threads)
  }
  two <- run(2)
  expect_identical(two$status, c("done", "done"))
  expect_identical(as.array(two), as.array(run(1)))
  agrees(two, "sgld")
  set.seed(33)
  fit <- mala(m, lr = 5e-4, iter = 30000, burnin = 2000, thin = 5, init = ref$mean, chains = 1)
  expect_true(fit$acceptance > 0.5 && fit$acceptance < 0.95)
  agrees(fit, "mala")
  # the posterior mode, through the same C functions
  mode <- posterior_mode(m)
  expect_true(mode$converged)
  expect_lt(max(abs(mode$gradient)), 1e-3)
})

test_that("a compiled model gives the same draws as its R-function twin", {
  ex <- poisson_example()
  dat <- poisson_data(n = 200)
  s <- 2
  compiled <- ex$poisson_model(dat$X, dat$y, prior_sd = s)
  # the same model in R: a batch is rows of cbind(y, X)
  twin <- model_custom(
    data = cbind(y = dat$y, dat$X),
    grad_loglik = function(w, batch) {
      eta <- drop(batch[, -1, drop = FALSE] %*% w)
      drop(crossprod(batch[, -1, drop = FALSE], batch[, 1] - exp(eta)))
    },
    loglik = function(w, batch) {
      eta <- drop(batch[, -1, drop = FALSE] %*% w)
      sum(batch[, 1] * eta - exp(eta) - lfactorial(batch[, 1]))
    },
    grad_logprior = function(w) -w / s^2,
    logprior = function(w) sum(dnorm(w, 0, s, log = TRUE)),
    d = 3, names = colnames(dat$X)
  )
  # the two sum in different orders: equal up to rounding, which a short run
  # with a contracting drift does not amplify
  tol <- 1e-9
  set.seed(41)
  a <- expect_run_warnings(sgld(compiled, lr = 1e-4, batch_size = 20, iter = 2000, chains = 2))
  set.seed(41)
  b <- expect_run_warnings(sgld(twin, lr = 1e-4, batch_size = 20, iter = 2000, chains = 2))
  expect_lt(max(abs(as.matrix(a) - as.matrix(b))), tol)
  set.seed(42)
  a <- expect_run_warnings(mala(compiled, lr = 1e-3, iter = 1000, chains = 1))
  set.seed(42)
  b <- expect_run_warnings(mala(twin, lr = 1e-3, iter = 1000, chains = 1))
  expect_identical(a$acceptance, b$acceptance)
  expect_lt(max(abs(as.matrix(a) - as.matrix(b))), tol)
})

test_that("a compiled model answers log_lik() and refuses prediction with its declared reason", {
  skip_if_not_installed("rstantools")
  ex <- poisson_example()
  dat <- poisson_data(n = 50)
  m <- ex$poisson_model(dat$X, dat$y, prior_sd = 2)
  set.seed(34)
  fit <- expect_run_warnings(sgld(m, lr = 1e-4, batch_size = 10, iter = 400, burnin = 200, thin = 20,
                               chains = 2))   # a short run: the draws need only exist
  W <- as.matrix(fit, scale = "sampler")
  expect_equal(rstantools::log_lik(fit),
               t(apply(W, 1, function(w) dpois(dat$y, exp(dat$X %*% w), log = TRUE))),
               tolerance = 1e-12, ignore_attr = TRUE)
  declared <- sgld:::method_table(list(m))[[1]]
  expect_true(declared$log_lik)
  expect_error(predict(fit), paste0("not available for sgld_model_compiled: ", declared$predict),
               fixed = TRUE)
})

test_that("compiled models refuse bad pointers, mismatched sizes and stale objects", {
  ex <- poisson_example()
  dat <- poisson_data(n = 50)
  m <- ex$poisson_model(dat$X, dat$y)
  expect_error(model_compiled(m$pointer, d = 4), "`d` is 4 but the compiled model has 3 parameters")
  expect_error(model_compiled(m$pointer, n = 10), "`n` is 10 but the compiled model has 50 data items")
  expect_error(model_compiled(m$pointer, names = c("a", "a", "b")), "`names` must be distinct; 'a' appears twice")
  expect_error(model_compiled(m$pointer, names = "a"), "`names` must be 3 non-empty names \\(one per parameter\\)")
  expect_error(model_compiled(m$pointer, init = c(1, NA, 2)), "`init` must be NULL or a finite numeric vector of length 3")
  expect_error(model_compiled(m$pointer, transform = list(to_user = exp)),
               "`transform` must be NULL or list\\(to_user = , to_sampler = \\) of two functions")
  expect_error(sgld(m, lr = 1e-4, iter = 100, monitor = monitor_every(10, newdata = dat), chains = 1),
               "`monitor`: a compiled model has no held-out metrics")
  # an object whose d was changed by hand would size the run's buffers wrongly
  bad <- m
  bad$d <- 2L
  expect_error(log_posterior(bad, c(0, 0)), "the compiled model has d = 3 and n = 50, but the model object says d = 2")
  # saving loses the pointer; the object is then refused, not called
  file <- tempfile(fileext = ".rds")
  saveRDS(m, file)
  stale <- readRDS(file)
  expect_error(sgld(stale, lr = 1e-4, iter = 10, chains = 1), "is a NULL external pointer: compiled models do not survive saving")
  expect_error(model_compiled(stale$pointer), "`pointer` is a NULL external pointer")
  # the model object alone keeps the plug-in's data alive: the copies the
  # plug-in made are referenced from nowhere else
  fresh <- local(ex$poisson_model(dat$X, dat$y, prior_sd = 3))
  invisible(gc(full = TRUE))
  w <- c(0.1, 0.2, 0.3)
  expect_equal(log_posterior(fresh, w)$logpost,
               sum(dpois(dat$y, exp(dat$X %*% w), log = TRUE)) + sum(dnorm(w, 0, 3, log = TRUE)),
               tolerance = 1e-12)
})

test_that("sgld_model_pointer() refuses incomplete tables and other interface versions", {
  skip_without_compiler()
  # a plug-in that hands over a broken table in each way the checks catch
  dir <- tempfile("badtable-")
  dir.create(dir)
  writeLines(c(
    "#include <sgld_model.h>",
    "static double ll(const void *d, const double *w, const R_xlen_t *i, R_xlen_t m,",
    "                 double *k) { (void) d; (void) w; (void) i; (void) m; (void) k; return 0.0; }",
    "static double lp(const void *d, const double *w) { (void) d; (void) w; return 0.0; }",
    "static void gl(const void *d, const double *w, const R_xlen_t *i, int m, double *g,",
    "               double *k) { (void) d; (void) w; (void) i; (void) m; (void) g; (void) k; }",
    "static void gp(const void *d, const double *w, double *g) { (void) d; (void) w; (void) g; }",
    "SEXP bad_table(SEXP what) {",
    "  sgld_model_table t = {2, 10, NULL, gl, ll, gp, lp, NULL, 0};",
    "  int version = SGLD_MODEL_ABI_VERSION;",
    "  switch (asInteger(what)) {",
    "  case 1: t.loglik = NULL; break;",
    "  case 2: t.grad_logprior = NULL; break;",
    "  case 3: t.d = 0; break;",
    "  case 4: version = SGLD_MODEL_ABI_VERSION + 1; break;",
    "  case 5: return sgld_model_pointer(NULL, R_NilValue);",
    "  }",
    "  sgld_model_pointer_fn make = (sgld_model_pointer_fn) (void (*)(void))",
    "    R_GetCCallable(\"sgld\", \"sgld_model_pointer\");",
    "  return make(&t, version, R_NilValue);",
    "}",
    "SEXP abi(void) { return ScalarInteger(sgld_model_abi_version()); }",
    # a plug-in built against version 1 of the header, written out by hand:
    # its loglik had no work argument
    "typedef struct {",
    "  int d; R_xlen_t n; const void *data;",
    "  void (*grad_loglik)(const void *, const double *, const R_xlen_t *, int, double *, double *);",
    "  double (*loglik_v1)(const void *, const double *, const R_xlen_t *, R_xlen_t);",
    "  void (*grad_logprior)(const void *, const double *, double *);",
    "  double (*logprior)(const void *, const double *);",
    "  int (*in_domain)(const void *, const double *);",
    "  size_t work_size;",
    "} table_v1;",
    "static double ll_v1(const void *d, const double *w, const R_xlen_t *i, R_xlen_t m) {",
    "  (void) d; (void) w; (void) i; (void) m; return 0.0; }",
    "SEXP v1_table(void) {",
    "  table_v1 t = {2, 10, NULL, gl, ll_v1, gp, lp, NULL, 0};",
    "  typedef SEXP (*make_v1)(const table_v1 *, int, SEXP);",
    "  make_v1 make = (make_v1) (void (*)(void)) R_GetCCallable(\"sgld\", \"sgld_model_pointer\");",
    "  return make(&t, 1, R_NilValue);",
    "}"
  ), file.path(dir, "badtable.c"))
  writeLines(paste0("PKG_CPPFLAGS = -I", shQuote(system.file("include", package = "sgld"))),
             file.path(dir, "Makevars"))
  old <- setwd(dir)
  on.exit(setwd(old), add = TRUE)
  r_cmd(c("SHLIB", "badtable.c"), "compiling the broken plug-in")
  dll <- dyn.load(file.path(dir, paste0("badtable", .Platform$dynlib.ext)))
  on.exit(dyn.unload(dll[["path"]]), add = TRUE)
  bad <- function(k) .Call(getNativeSymbolInfo("bad_table", dll), k)
  expect_identical(.Call(getNativeSymbolInfo("abi", dll)), 2L)
  expect_error(bad(1L), "`loglik` is required but is a NULL function pointer")
  expect_error(bad(2L), "`grad_logprior` is required but is a NULL function pointer")
  expect_error(bad(3L), "`d` must be at least 1, not 0")
  expect_error(bad(4L), "compiled against version 3 of sgld's model interface, but the installed sgld implements version 2; reinstall")
  # version 1 (loglik without `work`) is refused, never called through the
  # wrong function type
  expect_error(.Call(getNativeSymbolInfo("v1_table", dll)),
               "compiled against version 1 of sgld's model interface, but the installed sgld implements version 2; reinstall the package that defines the model")
  expect_error(bad(5L), "the model table is a NULL pointer")
  ok <- model_compiled(bad(0L), names = c("a", "b"))
  expect_identical(log_posterior(ok, c(1, 2))$logpost, 0)
})

test_that("bbb() fits the compiled model: full rank matches the exact reference", {
  ex <- poisson_example()
  dat <- poisson_data()
  m <- ex$poisson_model(dat$X, dat$y, prior_sd = 2)
  set.seed(31)
  ref <- poisson_reference(dat$X, dat$y, prior_sd = 2)
  set.seed(32)
  fit <- bbb(m, family = "fullrank", iter = 20000, batch_size = 50,
             lr = lr_exp(0.01, 1e-5), chains = 2, threads = 2, draws = 2000)
  # the posterior of 500 Poisson counts is close to Gaussian: q's means within
  # 0.1 posterior sd and sds within 10% (the reference's own error is 1%)
  for (c in 1:2) {
    expect_lt(max(abs(fit$variational$mean[c, ] - ref$mean) / ref$sd), 0.1)
    expect_lt(max(abs(fit$variational$sd[c, ] / ref$sd - 1)), 0.1)
  }
  expect_true(all(is.finite(fit$elbo$elbo)))
})
