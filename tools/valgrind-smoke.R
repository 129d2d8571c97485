# A small run of every entry point, for `make valgrind` (memcheck must report 0 errors).
library(sgld)
m <- model_linear(y ~ x, data = handout[1:500, ])
set.seed(1)
f <- sgld(m, lr = 1e-6, batch_size = 10, iter = 2000, chains = 2, clip = clip_norm(100))
f <- sgld(m, lr = 1e-6, batch_size = 300, iter = 500, replace = TRUE)
f <- sgld(m, lr = 1e-6, batch_size = 100, iter = 500, thin = 3)
f <- sgd(m, lr = lr_range(1e-5, 1e-6), batch_size = 400, iter = 500, clip = clip_value(10))
f <- gd(m, lr = lr_piecewise(1e-5, 100, 200), iter = 300)
f <- sgld(m, lr = lr_cyclical(1e-6, 4, 0.8), batch_size = 10, iter = 400, burnin = 0, thin = 5,
          chains = 2)
f <- suppressWarnings(sgld(m, lr = 1, batch_size = 10, iter = 100, chains = 2, burnin = 0))
print(log_posterior(m, c(0, 1, 0))$logpost)
print(posterior_mode(m, covariance = TRUE)$passes)
z <- .Call(sgld:::C_sgld_rng_draws, 1e5, 0L, 0, 2L)
z <- .Call(sgld:::C_sgld_streams, 4L)
options(sgld.cache_dir = file.path(tempdir(), "cache"))
fbm <- bigmemory::as.big.matrix(cbind(`(Intercept)` = 1, matrix(rnorm(600), 300), y = rep(0:1, 150)),
                                backingfile = "f.bin", descriptorfile = "f.desc",
                                backingpath = tempdir())
fm <- model_logistic(fbm, y = "y")
f <- sgld(fm, lr = 1e-4, batch_size = 10, iter = 300, chains = 2, threads = 2,
          control_variates = TRUE, monitor = monitor_every(100))
# the copy found again, mapped afresh after a reload, then refused once truncated
fm <- model_logistic(fbm, y = "y")
f <- sgld(unserialize(serialize(fm, NULL)), lr = 1e-4, batch_size = 10, iter = 100)
Sys.chmod(fm$file$path, "644")
writeBin(readBin(fm$file$path, "raw", 5000), fm$file$path)
print(tryCatch(sgld(fm, lr = 1e-4, batch_size = 10, iter = 100), error = conditionMessage))
fm <- model_logistic(fbm, y = "y")
# a damaged state refused before the engine, and by the engine itself
f2 <- sgld(m, lr = 1e-6, batch_size = 10, iter = 200, chains = 2)
f2$state$rng[1:32] <- as.raw(0)
print(tryCatch(sgld(m, lr = 1e-6, batch_size = 10, iter = 20, chains = 2, init = f2),
               error = conditionMessage))
s2 <- sgld:::run_settings(m, lr = 1e-6, batch_size = 10, iter = 20, burnin = 0, thin = 1,
                          temperature = 1, chains = 2, init = NULL, replace = FALSE, clip = NULL)
s2$rng_init <- raw(128)
print(tryCatch(.Call(sgld:::C_sgld_run, m, s2), error = conditionMessage))
# a run told to stop by its stop file (chains as futures)
s2["rng_init"] <- list(NULL)
s2$stop_file <- c(tempfile(), tempdir())
file.create(s2$stop_file[1])
z <- .Call(sgld:::C_sgld_run, m, s2)
future::plan(future::sequential)
f <- sgld(fm, lr = 1e-4, batch_size = 10, iter = 300, chains = 2, parallel = "future")
z <- .Call(sgld:::C_sgld_codes)
z <- .Call(sgld:::C_sgld_code_of, "clip", "value")
print(ksd(f))
X <- model_linear(cbind(1, matrix(rnorm(500*6), 500)), rnorm(500), prior = prior_nig(V = diag(7) + 0.1))
f <- sgld(X, lr = 1e-6, batch_size = 20, iter = 300)
print(summary(f)$statistics[1, 1])
d <- MASS::Pima.tr
lm2 <- model_logistic(type ~ glu + bmi, data = d, prior = prior_laplace(0, 1),
                      prior_intercept = prior_normal(0, 5))
f <- sgld(lm2, lr = 1e-4, batch_size = 10, iter = 500, chains = 2, threads = 2,
          monitor = monitor_every(100, newdata = MASS::Pima.te))
p <- predict(f, MASS::Pima.te, type = "class")
p <- predict(f, MASS::Pima.te, draws = TRUE, ndraws = 50, threads = 2)
a <- adult[1:300, ]
sp <- model_logistic(cbind(1, adult_design(a)), adult_response(a))
f <- sgld(sp, lr = 1e-5, batch_size = 10, iter = 300, monitor = monitor_every(100))
print(posterior_mode(sp, covariance = TRUE)$passes)
print(nrow(f$monitor))
set.seed(2)
mm <- model_mixture(mixture_data(40))
f <- sgld(mm, lr = lr_exp(1e-3, 1e-6), batch_size = 4, iter = 400, chains = 2, threads = 2,
          burnin = sampling_threshold(0.5, every = 50), thin = mixing_distance(1e-3),
          diagnostics = diagnostics_every(50))
p <- predict(f, c(-1, 0, 2), ndraws = 2)
f <- mala(m, lr = 1e-6, iter = 200, precondition = diag(c(1, 1, 2)))
print(posterior_mean(f))
g <- grid_posterior(mm, seq(-1, 1, length.out = 5), seq(-1, 1, length.out = 5))
# update rules, control variates, continuation, gradient draws
f <- psgld(m, lr = 1e-8, batch_size = 300, iter = 300, chains = 2, control_variates = TRUE)
f <- psgld(m, lr = 1e-8, batch_size = 300, iter = 300, chains = 2, init = f, burnin = 0)
f <- sghmc(m, lr = 1e-8, batch_size = 20, iter = 300, threads = 2, chains = 2)
f <- sgld(m, lr = 1e-3, batch_size = 20, iter = 300, precondition = diag(c(1e-4, 1e-4, 1e-3)))
for (o in c("momentum", "adagrad", "rmsprop", "adam"))
  f <- sgd(m, lr = 1e-4, batch_size = 20, iter = 200, optimizer = o)
# Bayes by Backprop: its automatic settings (Laplace start, expected log
# likelihoods, the check of q), both families, K draws per iteration,
# threads, parts with ELBO estimates, continuation, the PSIS check
f <- bbb(m, draws = 200)
f <- bbb(m, family = "fullrank", chains = 2, threads = 2, draws = 200)
f <- bbb(m, iter = 300, samples = 3, chains = 2, threads = 2, elbo_every = 100, elbo_draws = 5,
         local = FALSE)
f <- bbb(m, iter = 100, samples = 3, chains = 2, init = f, draws = 10, elbo_draws = 5)
f <- bbb(m, family = "fullrank", iter = 300, optimizer = "rmsprop", draws = 10, elbo_draws = 5,
         laplace = FALSE)
print(psis_khat(f, draws = 50, method = "own"))
# local reparameterisation with the minibatch ELBO, on the linear model and a
# network (the per-layer sampled pre-activations of model_mlp_local.c)
f <- bbb(m, iter = 200, local = TRUE, elbo_batch = TRUE, chains = 2, threads = 2, draws = 10,
         elbo_draws = 5)
nl <- data.frame(a = rnorm(40), b = rnorm(40)); nl$y <- nl$a - nl$b + rnorm(40)
f <- bbb(model_mlp(y ~ a + b, data = nl, hidden = 4), iter = 200, batch_size = 20, local = TRUE,
         draws = 10, elbo_draws = 5)
# the count regressions, and every row's log likelihood at many draws by two threads
mq <- model_negbin(Days ~ Eth + Sex + Age + Lrn, data = MASS::quine)
f <- sgld(mq, lr = 1e-4, batch_size = 20, iter = 300, chains = 2, threads = 2)
print(dim(sgld:::model_loglik_rows(mq, as.matrix(f, scale = "sampler"), threads = 2L)))
f <- bbb(model_poisson(breaks ~ wool + tension, data = warpbreaks), iter = 200, draws = 10)
# one chain's minibatch gradient shared by two threads (gradient.c's pieces)
xw <- matrix(rnorm(300 * 50), 300)
f <- sgld(model_logistic(xw, rbinom(300, 1, 0.5), sparse = FALSE), lr = 1e-5, batch_size = 100,
          iter = 300, threads = 2)
g <- stochastic_gradients(sp, rep(0, sp$d), batch_size = 5, times = 50, control_variates = TRUE)
print(dim(g))
# ICA: the natural-gradient rule (LAPACK), its MH proposal and the threshold in its frame
set.seed(3)
mi <- model_ica(ica_data(200, heavy = 2, gaussian = 1)$X)
f <- sgld(mi, lr = 1e-5, batch_size = 20, iter = 300, chains = 2, threads = 2,
          diagnostics = diagnostics_every(100))
f <- mala(mi, lr = 1e-5, iter = 100, init = f$last[1, ])
print(ica_instability(f))
# model_sv(): the AR(1) model with t errors under pSGLD and MALA, two threads
msv <- model_sv(MASS::SP500[1:300], errors = "t")
f <- psgld(msv, lr = 1e-7, iter = 300, chains = 2, threads = 2)
f <- mala(msv, lr = 1e-4, iter = 100, pars = TRUE, precondition = "none")
print(head(sv_volatility(f), 3))
# the path whitened given the globals: SGLD on two threads, MALA, and the map
f <- sgld(msv, lr = 0.05, iter = 200, chains = 2, threads = 2)
f <- mala(msv, lr = 0.1, iter = 100)
z <- .Call(sgld:::C_sgld_whiten_eval, msv, sgld:::resolve_init(msv, NULL, 1)[1, ], 1, FALSE)
# neural networks: backpropagation through the work buffer, monitors, predict
set.seed(4)
nd <- data.frame(a = rnorm(60), b = rnorm(60))
nd$y <- sin(nd$a) + rnorm(60, sd = 0.3)
nd$k <- factor(sample(c("p", "q", "r"), 60, TRUE))
mn <- model_mlp(y ~ a + b, data = nd[1:50, ], hidden = c(4, 3), prior = prior_gamma(1, 1))
f <- sgld(mn, lr = 1e-4, batch_size = 10, iter = 300, chains = 2, threads = 2, pars = TRUE,
          monitor = monitor_every(100, newdata = nd[51:60, ]))
print(predict(f, nd[51:60, ])[1])
# the default prior (each layer's precision integrated out) and lr = "auto"
f <- sgld(model_mlp(y ~ a + b, data = nd, hidden = 3), iter = 200, batch_size = 20)
mk <- model_mlp(k ~ a + b, data = nd, hidden = 5, activation = "tanh")
f <- psgld(mk, lr = 1e-5, batch_size = 10, iter = 200, control_variates = TRUE)
f <- mala(mk, lr = 1e-4, iter = 100)
# model_custom(): R callbacks from the driver, with a transform, a data frame
# batch, MALA, control variates, diagnostics and a failing function
lin <- handout[1:300, ]
cg <- function(w, batch) {
  r <- batch$y - w[1] - w[2] * batch$x
  c(exp(-w[3]) * c(sum(r), sum(r * batch$x)), -nrow(batch) / 2 + exp(-w[3]) * sum(r^2) / 2)
}
cl <- function(w, batch)
  -nrow(batch) * w[3] / 2 - exp(-w[3]) * sum((batch$y - w[1] - w[2] * batch$x)^2) / 2
mc <- model_custom(lin, cg, function(w) -w / 100, loglik = cl,
                   logprior = function(w) -sum(w^2) / 200, names = c("b0", "b1", "sigma2"),
                   transform = list(to_user = function(w) c(w[1:2], exp(w[3])),
                                    to_sampler = function(v) c(v[1:2], log(v[3]))),
                   init = c(0, 0, 1))
f <- sgld(mc, lr = 1e-5, batch_size = 10, iter = 300, chains = 2, threads = 2,
          diagnostics = diagnostics_every(100), monitor = monitor_every(100))
f <- psgld(mc, lr = 1e-4, batch_size = 10, iter = 200, control_variates = TRUE)
f <- mala(mc, lr = 1e-5, iter = 100)
print(summary(f)$statistics[1, 1])
bad <- model_custom(lin, function(w, batch) if (nrow(batch) > 5) w[1] else cg(w, batch),
                    function(w) -w / 100, d = 3)
f <- tryCatch(sgld(bad, lr = 1e-5, batch_size = 10, iter = 100), sgld_model_error = function(e) e$fit)
print(f$status)
# coordinates drawn alone (coordinate.c): a logistic regression with a rare
# level of one class, sparse storage, through sgld()'s automatic settings
set.seed(4)
g <- factor(rep(c("a", "b", "c"), c(300, 200, 8)))
yb <- rbinom(508, 1, 0.4)
yb[g == "c"] <- 0
mr <- model_logistic(y ~ x + g, data = data.frame(y = yb, x = rnorm(508), g = g), sparse = TRUE)
f <- suppressWarnings(sgld(mr, iter = 300))   # too short for its ESS check
print(f$auto$coordinates)
