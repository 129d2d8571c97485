# Designs given as the Matrix package's sparse matrices (R/design-sparse.R).

sparse_example <- function(n = 300, d = 25, density = 0.1, seed = 2) {
  set.seed(seed)
  X <- Matrix::rsparsematrix(n, d, density = density)
  colnames(X) <- paste0("w", seq_len(d))
  X <- cbind("(Intercept)" = 1, X)
  eta <- drop(as.matrix(X %*% c(-0.5, stats::rnorm(d, 0, 0.5))))
  list(X = X, y = stats::rbinom(n, 1, stats::plogis(eta)), eta = eta)
}

test_that("a dgCMatrix gives the rows and the draws of the same dense matrix", {
  ex <- sparse_example()
  ms <- model_logistic(ex$X, ex$y)
  md <- model_logistic(as.matrix(ex$X), ex$y, sparse = TRUE)
  expect_identical(ms$sparse, 1L)
  for (f in c("sp_col", "sp_val", "sp_start", "sp_y", "sp_binary", "names", "p", "n"))
    expect_identical(ms[[f]], md[[f]], label = f)
  set.seed(1); a <- quietly_checked(sgld(ms, lr = 1e-3, batch_size = 20, iter = 300))
  set.seed(1); b <- quietly_checked(sgld(md, lr = 1e-3, batch_size = 20, iter = 300))
  expect_identical(as.matrix(a), as.matrix(b))
  # the same draws as dense storage too, up to the order of sums
  de <- model_logistic(as.matrix(ex$X), ex$y, sparse = FALSE)
  set.seed(1); e <- quietly_checked(sgld(de, lr = 1e-3, batch_size = 20, iter = 300))
  expect_equal(as.matrix(a), as.matrix(e), tolerance = 1e-10)
})

test_that("every sparse class Matrix converts is taken, in O(non-zeros)", {
  ex <- sparse_example(n = 120, d = 8, density = 0.3)
  ref <- model_logistic(ex$X, ex$y)
  for (x in list(methods::as(ex$X, "RsparseMatrix"), methods::as(ex$X, "TsparseMatrix"))) {
    m <- model_logistic(x, ex$y)
    expect_identical(m[c("sp_col", "sp_val", "sp_start")], ref[c("sp_col", "sp_val", "sp_start")])
  }
  # stored zeros are not non-zeros
  x <- ex$X
  x@x[5] <- 0
  m <- model_logistic(x, ex$y, sparse = TRUE)
  expect_identical(m$sp_start, model_logistic(as.matrix(x), ex$y, sparse = TRUE)$sp_start)
  # without names the columns are x1, x2, ...
  x <- ex$X
  colnames(x) <- NULL
  expect_identical(model_logistic(x, ex$y)$names, paste0("x", 1:9))
  # indicators: binary rows
  b <- Matrix::sparseMatrix(i = 1:100, j = rep(1:4, 25), x = 1, dims = c(100, 4))
  mb <- model_logistic(b, rep(0:1, 50))
  expect_identical(mb$sp_binary, 1L)
  # a sparse matrix denser than a quarter is stored dense, as a dense one is
  expect_identical(model_logistic(Matrix::Matrix(cbind(1, ex$eta), sparse = TRUE),
                                  ex$y)$sparse, 0L)
})

test_that("bad sparse input: a clear error naming the argument", {
  ex <- sparse_example(n = 60, d = 5, density = 0.3)
  x <- ex$X
  x@x[3] <- NA
  expect_error(model_logistic(x, ex$y), "`x` must be finite; it has NA in row")
  x@x[3] <- Inf
  expect_error(model_logistic(x, ex$y), "`x` must be finite; it has Inf in row")
  # the reported cell is the bad one
  msg <- tryCatch(model_logistic(x, ex$y), error = conditionMessage)
  rc <- as.integer(regmatches(msg, gregexpr("[0-9]+", msg))[[1]])
  expect_identical(unname(as.matrix(x)[rc[1], rc[2]]), Inf)
  expect_error(model_logistic(ex$X, ex$y[-1]), "`y` has length 59 but `x` has 60 rows")
  pattern <- methods::as(ex$X, "nMatrix")
  expect_error(model_logistic(pattern, ex$y), "`x` is a pattern matrix \\(ngCMatrix\\)")
  expect_error(model_poisson(pattern, rpois(60, 1)), "`x` is a pattern matrix")
  # logical sparse matrices are numbers, as logical dense ones are
  expect_identical(model_logistic(ex$X != 0, ex$y, sparse = TRUE)$sp_binary, 1L)
  z <- ex$X
  z[, 3] <- 0
  expect_warning(model_logistic(z, ex$y), "all-zero column 'w2'")
})

test_that("the rank check of a sparse design finds collinear columns", {
  ex <- sparse_example(n = 200, d = 10, density = 0.2)
  x <- cbind(ex$X, dup = ex$X[, "w3"] + 2 * ex$X[, "w5"])
  expect_warning(model_logistic(x, ex$y), "rank 11 with 12 columns")
  expect_silent(model_logistic(ex$X, ex$y))
  # the Gram matrix summed from the rows and its pivoted Cholesky
  # factorisation in C (src/gram.c): the sums of squares and rank of a dense
  # check, with values and as indicators
  for (z in list(x, 1 * (x != 0))) {
    G <- as.matrix(Matrix::crossprod(z))
    s <- sqrt(diag(G))
    R <- methods::as(z, "RsparseMatrix")
    g <- .Call(C_sgld_sparse_gram_rank, R@p, R@j, R@x, ncol(z), 1e-10)
    expect_equal(g$ss, unname(diag(G)), tolerance = 1e-12)
    expect_identical(g$rank, qr(G / tcrossprod(s), tol = 1e-9)$rank)
    expect_identical(sort(g$pivot), seq_len(ncol(z)))
    expect_identical(.Call(C_sgld_sparse_gram_rank, R@p, R@j, NULL, ncol(z), 1e-10)$rank,
                     qr(crossprod(as.matrix(z) != 0), tol = 1e-9)$rank)
  }
  # an all-zero column: the sums of squares only
  g <- .Call(C_sgld_sparse_gram_rank, c(0L, 1L, 2L), c(0L, 0L), c(1, 2), 2L, 1e-10)
  expect_identical(g, list(ss = c(5, 0), rank = NULL, pivot = NULL))
})

test_that("beyond auto_max_d columns, identical sparse columns are found in O(non-zeros)", {
  ex <- sparse_example(n = 50, d = 6, density = 0.3)
  x <- cbind(ex$X, copy = ex$X[, "w4"])
  x <- check_sparse_design(x)
  expect_warning(check_rank_sparse(x, max_d = 3L), "identical columns: 'copy'")
  expect_silent(check_rank_sparse(check_sparse_design(ex$X), max_d = 3L))
})

test_that("Poisson and negative-binomial models keep sparse rows: the same draws as dense", {
  ex <- sparse_example(n = 300, d = 20, density = 0.1, seed = 5)
  counts <- stats::rpois(300, exp(pmin(ex$eta, 2)))
  w <- seq(-0.3, 0.3, length.out = 21)
  for (make in list(model_poisson, model_negbin)) {
    ms <- make(ex$X, counts)
    md <- make(as.matrix(ex$X), counts)
    expect_identical(c(ms$sparse, md$sparse), c(1L, 0L))
    expect_null(ms$z)
    wd <- c(w, if (ms$d > 21) 0.5)
    a <- log_posterior(ms, wd)
    b <- log_posterior(md, wd)
    expect_identical(a$loglik, b$loglik)
    expect_identical(a$grad_loglik, b$grad_loglik)
    set.seed(1); fa <- quietly_checked(sgld(ms, lr = 1e-4, batch_size = 30, iter = 200))
    set.seed(1); fb <- quietly_checked(sgld(md, lr = 1e-4, batch_size = 30, iter = 200))
    expect_identical(as.matrix(fa), as.matrix(fb))
    # the coordinate's rows (slice updates) and the design back from storage
    expect_identical(model_coordinate_rows(ms, c(2L, 5L)), model_coordinate_rows(md, c(2L, 5L)))
    expect_identical(design_matrix(ms), design_matrix(md))
    expect_identical(model_observed(ms), as.double(counts))
  }
  # variational gradients read the same rows
  set.seed(2); va <- quietly_checked(bbb(model_poisson(ex$X, counts), iter = 50, lr = 1e-3))
  set.seed(2); vb <- quietly_checked(bbb(model_poisson(as.matrix(ex$X), counts), iter = 50,
                                          lr = 1e-3))
  expect_identical(coef(va), coef(vb))
})

test_that("a factor of many levels gives a sparse design with glm()'s columns", {
  set.seed(3)
  n <- 600
  d <- data.frame(g = factor(sample(sprintf("L%03d", 1:150), n, TRUE)), x = rnorm(n),
                  h = sample(c("a", "b", "c"), n, TRUE))
  d$y <- rbinom(n, 1, plogis(0.3 * d$x + (as.integer(d$g) %% 3 - 1) * 0.5))
  d$k <- rpois(n, exp(0.2 * d$x))
  f <- y ~ g + x * h
  m <- model_logistic(f, data = d)
  ref <- glm(f, family = binomial, data = d)
  expect_identical(m$names, names(coef(ref)))
  expect_identical(m$contrasts, ref$contrasts)
  expect_identical(m$sparse, 1L)
  X <- design_model_matrix(m$terms, model.frame(f, d))
  expect_true(is_sparse_design(X))
  expect_equal(unname(as.matrix(X)), unname(model.matrix(ref)), ignore_attr = TRUE)
  # the same rows as the dense design of the same formula
  md <- model_logistic(model.matrix(ref), d$y, sparse = TRUE)
  for (fld in c("sp_col", "sp_val", "sp_start", "sp_y")) expect_identical(m[[fld]], md[[fld]])
  # Poisson: sparse rows; predictions on new data read the training levels
  mp <- model_poisson(k ~ g + x, data = d)
  expect_identical(mp$sparse, 1L)
  expect_identical(mp$names, names(coef(glm(k ~ g + x, family = poisson, data = d))))
  fit <- quietly_checked(sgld(mp, lr = 1e-4, batch_size = 50, iter = 100))
  expect_length(predict(fit, newdata = d[1:3, ]), 3L)
  # the formula checks, on the sparse design
  d$g2 <- d$g
  expect_error(model_logistic(y ~ g + g2, data = d), "two identical columns")
  d$one <- 1
  expect_error(model_poisson(k ~ g + one, data = d), "constant column 'one'")
  # few levels: model.matrix() as before
  expect_false(is_sparse_design(design_model_matrix(terms(y ~ x + h), model.frame(y ~ x + h, d))))
})

test_that("a diagonal preconditioner, given as a vector, steps as the diagonal matrix", {
  ex <- sparse_example(n = 200, d = 8, density = 0.3)
  m <- model_logistic(ex$X, ex$y)
  P <- seq(0.5, 2, length.out = m$d)
  set.seed(4); a <- quietly_checked(sgld(m, lr = 0.01, precondition = P, iter = 200))
  set.seed(4); b <- quietly_checked(sgld(m, lr = 0.01, precondition = diag(P), iter = 200))
  expect_identical(as.matrix(a), as.matrix(b))
  expect_error(sgld(m, lr = 0.01, precondition = -P, iter = 10), "diagonal of the preconditioner")
})

test_that("the diagonal plus low-rank preconditioner steps and proposes through L", {
  set.seed(5)
  d <- 6
  s <- runif(d, 0.5, 2)
  V <- qr.Q(qr(matrix(rnorm(d * 2), d)))
  cc <- c(-0.5, 1.5)
  L <- diag(s) %*% (diag(d) + V %*% diag(cc) %*% t(V))
  ops <- precondition_ops(s, V, cc)
  x <- rnorm(d)
  expect_equal(ops$L(x), drop(L %*% x))
  expect_equal(ops$Lt(x), drop(crossprod(L, x)))
  # corrections along coordinate axes: L is the diagonal s (1 + c), so the
  # steps (sgld) and the proposal densities (mala) are the diagonal rule's
  ex <- sparse_example(n = 150, d = d - 1, density = 0.4)
  m <- model_logistic(ex$X, ex$y)
  E <- diag(d)[, c(2, 5)]
  axes <- update_rule("precond", "axes", list(scale = s, basis = E, coef = cc), sampler = TRUE)
  P <- (s * (1 + drop(E %*% cc)))^2
  for (run in list(sgld, mala)) {
    set.seed(6); a <- quietly_checked(run(m, lr = 0.02, precondition = axes, iter = 300))
    set.seed(6); b <- quietly_checked(run(m, lr = 0.02, precondition = P, iter = 300))
    expect_equal(as.matrix(a), as.matrix(b), tolerance = 1e-10)
  }
})

test_that("lr = \"auto\" on a wide model: nothing d x d, and MALA's posterior", {
  data <- sparse_text_design(2000, 60, 0.05)
  m <- model_logistic(data$X, data$y)
  old <- options(sgld.auto_wide_d = 30)
  on.exit(options(old))
  # the pieces: the mode by L-BFGS-B, the precision's diagonal, the curvatures
  pm <- posterior_mode(m)
  expect_identical(pm$method, "lbfgs")
  exact <- posterior_mode(m, covariance = TRUE)
  expect_equal(pm$mode, exact$mode, tolerance = 1e-5)
  H <- solve(exact$covariance)
  hvp <- hessian_product(m, exact$sampler)
  h <- hessian_diagonal(hvp, m$d, coupled_coordinates(m))
  expect_equal(h, unname(diag(H)), tolerance = 0.1)
  expect_equal(h[coupled_coordinates(m)], unname(diag(H))[coupled_coordinates(m)],
               tolerance = 1e-5)
  s <- 1 / sqrt(h)
  ops <- precondition_ops(s)
  expect_equal(preconditioned_curvatures(hvp, ops, m$d),
               range(eigen(H * tcrossprod(s), only.values = TRUE)$values), tolerance = 1e-5)
  # the run (Leimkuhler-Matthews steps), against long Metropolis-adjusted
  # ones (data-raw/sparse-wide-reference.R), for each regression on the same
  # design: means within 0.15 posterior sds and sds within 10% (they came
  # within 0.1 and 6%; Euler's steps of this size would widen the stiffest
  # direction's sd by 29%)
  ref <- readRDS(test_path("sparse-wide-reference.rds"))
  faces <- list(logistic = m, poisson = model_poisson(data$X, data$counts),
                linear = model_linear(data$X, data$response),
                negbin = model_negbin(data$X, data$counts))
  for (face in names(faces)) {
    mf <- faces[[face]]
    expect_identical(mf$sparse, 1L)
    set.seed(1)
    fit <- sgld(mf)
    expect_identical(fit$auto$strategy, "langevin-diagonal")
    expect_match(fit$rule, "diagonal preconditioner.*Leimkuhler-Matthews")
    a <- as.matrix(fit)
    sd_ref <- ref[[face]]$sd
    expect_identical(names(sd_ref), colnames(a))
    expect_lt(max(abs(colMeans(a) - ref[[face]]$mean) / sd_ref), 0.15, label = face)
    expect_lt(max(abs(apply(a, 2, sd) / sd_ref - 1)), 0.1, label = face)
  }
})

test_that("a linear model keeps sparse rows: the dense model's posterior and draws", {
  ex <- sparse_example(n = 300, d = 20, density = 0.1, seed = 7)
  y <- ex$eta + rnorm(300)
  ms <- model_linear(ex$X, y)
  md <- model_linear(as.matrix(ex$X), y)
  expect_identical(c(ms$sparse, md$sparse), c(1L, 0L))
  w <- c(seq(-0.3, 0.3, length.out = 21), 0.1)
  a <- log_posterior(ms, w)
  b <- log_posterior(md, w)
  expect_equal(a$loglik, b$loglik, tolerance = 1e-12)
  expect_equal(a$grad_loglik, b$grad_loglik, tolerance = 1e-12)
  # the exact posterior is the conjugate prior's
  expect_equal(linear_exact_posterior(model_linear(ex$X, y, prior = prior_nig()))$mean,
               linear_exact_posterior(model_linear(as.matrix(ex$X), y, prior = prior_nig()))$mean)
  expect_equal(posterior_mode(ms, covariance = TRUE)[c("mode", "covariance")],
               posterior_mode(md, covariance = TRUE)[c("mode", "covariance")], tolerance = 1e-8)
  set.seed(1); fa <- quietly_checked(sgld(ms, lr = 1e-4, batch_size = 30, iter = 200))
  set.seed(1); fb <- quietly_checked(sgld(md, lr = 1e-4, batch_size = 30, iter = 200))
  expect_equal(as.matrix(fa), as.matrix(fb), tolerance = 1e-10)
})
