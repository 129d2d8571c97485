#' Stochastic gradient Langevin dynamics
#'
#' Draws from the posterior of `model` by stochastic gradient Langevin dynamics
#' (Welling and Teh, 2011): each iteration moves the parameters by the learning
#' rate times a minibatch estimate of the gradient of the log posterior, plus
#' Gaussian noise of variance \eqn{2 \eta_t \tau}{2 eta_t tau} (see [sgld-package] for the
#' update and its conversion to other conventions).
#'
#' With a constant learning rate the chain's stationary distribution is only
#' close to the posterior: the discretisation and the minibatch noise both
#' widen it, the more so the larger \eqn{\eta}{eta} and the smaller the batch.
#' Decaying schedules ([lr_poly()]) remove that bias asymptotically; weight the
#' draws by their learning rate (`summary()` reports both averages).
#'
#' @param model A model from a `model_*()` function (e.g. [model_linear()]) or
#'   a formula; with a formula give `data` and `family` (default
#'   `gaussian()`), and `weights`, `offset`, `subset`, `na.action` and the
#'   model's prior arguments as for its `model_*()` function: see
#'   [sgld_formula] for the families and what goes where.
#' @param lr `"auto"` (the default) to choose every setting not given from
#'   the posterior itself (see the section "Automatic settings"); or a
#'   learning rate: a positive number or a schedule ([lr_constant()],
#'   [lr_poly()], [lr_range()], [lr_piecewise()]).
#' @param batch_size Minibatch size \eqn{m}{m}, a whole number from 1 to the
#'   number of observations; the default is 100 or all observations if fewer.
#' @param iter Number of iterations (updates) per chain; `NULL` (the default)
#'   means 10,000 when `lr` is given, and with `lr = "auto"` enough for about
#'   2,000 effective draws.
#' @param ... With a formula for `model`: `data`, `family` and the model's
#'   arguments ([sgld_formula]). Otherwise not used: every argument after
#'   `iter` must be given by its full name, and unknown names are an error.
#' @param burnin Number of initial iterations whose states are discarded
#'   (default: half of `iter`), or [sampling_threshold()] to start keeping
#'   draws once the sampling threshold is reached.
#' @param thin Store every `thin`-th state after burn-in, or
#'   [mixing_distance()] to store draws a fixed summed learning rate apart.
#'   When `thin` is not given, a run stores about 1,000 draws a chain, as
#'   rstanarm does (every \eqn{\lfloor s / 1000 \rfloor}{floor(s / 1000)}-th of the
#'   \eqn{s}{s} iterations after burn-in, or the automatic settings' own
#'   thinning when that is larger), so that `loo()`, predictions and
#'   quantiles stay quick; `thin = 1` stores every state. Thinning decides
#'   only what is stored: the running means and variances in `fit$moments`
#'   take every iteration after burn-in whatever `thin` is.
#' @param temperature \eqn{\tau \ge 0}{tau >= 0}; 1 samples the posterior, 0 gives
#'   stochastic gradient ascent.
#' @param chains Number of chains, 4 by default as in rstanarm, so that R-hat
#'   and the effective sample size across chains exist for every default fit
#'   (`summary()`'s `Rhat`, `n_eff` and `mcse`). Each chain draws from its own
#'   random stream, so chain \eqn{c}{c} is the same whatever the number of
#'   chains. With `lr = "auto"` the planned effective draws are split over the
#'   chains, so more chains do not mean much more work; with a `lr` you give,
#'   `iter` is per chain.
#' @param init Starting values on the user's scale (for [model_linear()]:
#'   coefficients, then `sigma2`): `NULL` for the model's default start (see its
#'   help page; with `lr = "auto"`, the posterior mode for one chain and
#'   over-dispersed draws around it for several, see "Automatic settings"), a
#'   vector used for every chain, or a matrix with one row per
#'   chain. Or a fit from an earlier run with the same model, update rule and
#'   number of chains, to continue it: each chain carries on from its state in
#'   `fit$state` (parameters, momenta and averages of the update rule, random
#'   streams, iteration count, at which the learning-rate schedule is evaluated),
#'   so with `burnin = 0` two runs of T iterations give the same draws as one
#'   run of 2T.
#' @param replace Draw each minibatch with replacement? By default the items of
#'   a minibatch are distinct (batches are still drawn independently).
#' @param clip `NULL`, or gradient clipping from [clip_norm()] or [clip_value()].
#' @param precondition `NULL` for the model's default (the plain update; the
#'   natural gradient for [model_ica()]; the whitened path for [model_sv()]);
#'   `"none"` for the plain update; a
#'   symmetric positive definite d x d matrix \eqn{P}{P} on the sampler's scale
#'   for the fixed preconditioner \eqn{w \leftarrow w + \eta P \hat g +
#'   \sqrt{2\eta\tau} P^{1/2}\xi}{w <- w + eta P g_hat +
#'   sqrt(2 eta tau) P^(1/2)xi}, or a vector of d positive numbers, the
#'   diagonal of a diagonal \eqn{P}{P} (O(d) a step, for wide models);
#'   `"rmsprop"` / [precond_rmsprop()] for pSGLD
#'   (see [psgld()]); `"natural"` for the natural gradient of a matrix
#'   parameter (see [model_ica()] and [update_rules]); or `"whiten"` for a
#'   latent path moved in coordinates that whiten it given the model's
#'   global parameters (see "Parameterisation of the path" in [model_sv()]),
#'   with the globals' step covariance found from the model before the run;
#'   [sgld()] then takes Leimkuhler-Matthews steps, [mala()] and [sgd()]
#'   Euler's.
#' @param control_variates `FALSE`; `TRUE` to find the posterior mode
#'   \eqn{\hat w}{w_hat} first ([posterior_mode()], one pass over the data per
#'   evaluation) and use the control-variate estimator (Baker et al. 2019)
#'   \eqn{\hat g(w) = \nabla\log f(w) + \sum_{i=1}^n \nabla\log f(z_i|\hat w)
#'   + \frac nm \sum_{i\in J}[\nabla\log f(z_i|w) - \nabla\log f(z_i|\hat w)]}{g_hat(w) = grad log f(w) + sum_(i=1)^n grad log f(z_i|w_hat)
#'   + n/m sum_(i in J)[grad log f(z_i|w) - grad log f(z_i|w_hat)]};
#'   or a mode on the user's scale (e.g. `coef()` of an [sgd()] fit) to centre it
#'   there. Each iteration then evaluates two minibatch gradients, but near the
#'   mode the estimate's noise shrinks by orders of magnitude. With `init = NULL`
#'   the chains start at that mode.
#' @param diagnostics `NULL`, or [diagnostics_every()] to record the sampling
#'   threshold, the two noise variances and the rejection probability.
#' @param monitor `NULL`, or [monitor_every()] to record the log joint
#'   probability and held-out metrics during the run (in `fit$monitor`).
#' @param threads Number of threads to run chains in parallel (OpenMP).
#'   `NULL` (the default) takes `getOption("sgld.threads")` if set, else one
#'   thread per chain up to the processors available
#'   ([parallelly::availableCores()] when installed, which respects CRAN's
#'   and batch schedulers' limits, else [parallel::detectCores()] capped by
#'   `getOption("mc.cores")`) and not busy with other work (on Linux, less
#'   the 1-minute load average beyond this process), so the default never
#'   runs more threads than processors: chains on threads advance together
#'   and wait for the slowest. A number you give above the processors is
#'   used, with a warning (once a session). With fewer chains than
#'   threads, the spare threads share each chain's minibatch gradient (models
#'   with at least 8 parameters and batch size times parameters of at least
#'   4096; no more threads than the processors left beside the chains), when
#'   that is measured to be faster during the run. The draws are
#'   identical for any number of threads. Models written in R functions ([model_custom()])
#'   run their chains one after the other whatever `threads` says, as R is
#'   single-threaded. The exact sampler of gaussian multilevel models (see
#'   [model_glmer()]) runs in R too: there `threads` is the number of forked
#'   worker processes its chains are dealt to (on Unix; one after the other
#'   on Windows), by the same default rule.
#' @param parallel `"threads"` (the default, `getOption("sgld.parallel",
#'   "threads")`) runs the chains in this process, in `threads` OpenMP
#'   threads; `"future"` runs each chain as a future on the plan set with
#'   [future::plan()] (other R sessions, other machines, a batch scheduler
#'   through future.batchtools), and binds the chains into one fit. The draws
#'   are bit-identical to the local run's for the same `set.seed()`: the
#'   random streams are drawn here and each future is given its chain's. A
#'   chain whose future fails leaves a fit of the other chains and a warning
#'   naming it. An interrupt (Ctrl-C) stops every chain within a chunk of
#'   iterations and returns the draws each worker has made, as a local run
#'   does; chains whose future had not started are "not run", and the fit can
#'   be continued with `init = fit`. Workers learn of the interrupt through a
#'   file in this session's temporary directory (or, in a terminal, from the
#'   interrupt itself): workers on other machines that do not see it run their
#'   chains to the end; a second interrupt gives up on chains still out.
#'   Futures draw no progress display. Workers need sgld
#'   installed; the model travels to them as
#'   data (a model on a file-backed matrix travels as its file's path, which
#'   the workers must see). Models from [model_compiled()] cannot travel.
#'   See `vignette("large-data")`.
#' @param tune The result of [tune_sgld()] for this model: its recommended
#'   settings (`tune$best`: learning rate, batch size, preconditioner, control
#'   variates, iterations, temperature, start) are used, except those you
#'   give here by name, which win. Not with `lr = "auto"`.
#' @param pars Which parameters' draws to store: `NULL` for the default,
#'   `TRUE` for all, `FALSE` for none, parameter names (e.g. `c("x", "sigma2")`; a name that is not a parameter's
#'   is taken as a regular expression, e.g. `"^w"`), or indices. The default
#'   stores the model's own choice when it has one (the global parameters
#'   of [model_sv()], whatever the series' length; the precisions of
#'   [model_mlp()]), else every parameter, within two budgets. When `thin` is
#'   not given either and a regression's draws of every parameter would be
#'   more than \eqn{10^7}{10^7} numbers (chains x draws x parameters: a
#'   factor of 10,000 levels), the draws stored are those of the parameters
#'   that are no coefficient (`sigma2`) and of the coefficients whose column
#'   is non-zero on at least a hundredth of the rows (the intercept, continuous
#'   covariates, factors of few levels), and a message says so once a
#'   session; `options(sgld.draws_budget = Inf)` (or another number) moves
#'   that bar for the session. And when the stored draws would take more than
#'   half the memory available, the run is thinned further (to no fewer
#'   than 100 draws a chain), or else stores none; `fit$storage` then says
#'   so.
#'   Whatever is stored,
#'   the engine keeps running means, step-weighted means and variances of
#'   every parameter over every iteration after burn-in (`fit$moments`), from which
#'   [summary()][summary.sgld_fit] and [coef()][coef.sgld_fit] report the
#'   parameters without draws; memory then grows with the stored parameters
#'   only. Quantiles, ESS, R-hat, `vcov()`, `predict()` and coda's
#'   `as.mcmc.list()` need draws (on a fit without any, `as.mcmc.list()` is an
#'   error that says why and how to store them). A run
#'   whose stored draws would not fit in memory (about three copies of them
#'   are held at once while its fit is built) is refused before it starts;
#'   the memory counted on is what the system reports available (on Linux:
#'   the available memory, the control group's limit and `ulimit -v`), or
#'   `getOption("sgld.memory_limit")` bytes when set. `pars = TRUE` with
#'   `thin = 1` stores everything.
#' @param progress Show a one-line progress display on the console (stderr):
#'   iterations done of the total, iterations per second, time left, and
#'   chains running, done and diverged; redrawn a few times a second, only for
#'   runs that last over half a second. The default is
#'   `getOption("sgld.progress", interactive())`, so scripts, knitr and tests
#'   stay quiet. Without it, a run expected to last more than an hour (from
#'   the speed of its first iterations) says so when it starts, and its fit
#'   carries a warning.
#' @return An object of class `sgld_fit`; see [sgld_fit]. With `lr = "auto"`
#'   its `auto` holds what was chosen and why.
#' @section Automatic settings:
#' With `lr = "auto"`, `sgld(model)` needs nothing else. It finds the
#' posterior mode \eqn{\hat w}{w_hat} ([posterior_mode()]) and the Laplace covariance
#' \eqn{S}{S} there, and runs with the fixed preconditioner \eqn{P = S}{P = S}: in
#' those coordinates the posterior is close to a standard normal whatever the
#' scales of the predictors, so one step fits all. The step is 0.25 in those
#' coordinates, at temperature \eqn{1 - 0.25/2}{1 - 0.25/2}, which cancels the widening of
#' the posterior variance by \eqn{1/(1 - \eta/2)}{1/(1 - eta/2)} that a constant step
#' causes for a Gaussian posterior; where the posterior departs far from its
#' Laplace approximation (the scores at 10 points drawn from it are checked)
#' the step is 0.1 instead. Up to 1,000 observations every step uses
#' the full data; beyond, control variates at the mode with a batch (from 100)
#' large enough that the sampling threshold in those coordinates is at most
#' 0.01 (its noise averaged over 10 points of the Laplace approximation, or,
#' far from Gaussian, the largest of 3; with a `batch_size` you give, the
#' step shrinks instead), or the full data where that batch is half of it or
#' more. The number
#' of iterations gives about 2,000 effective draws (the
#' autocorrelation time of such a chain is about \eqn{(2 - \eta)/\eta}{(2 - eta)/eta}), a
#' tenth of them as burn-in (at least 200; half of an `iter` you give that is
#' shorter), thinned by a quarter of that time or to about 1,000 draws a
#' chain, whichever thins more (see `thin`).
#' One chain starts at the mode; several start over-dispersed, from
#' \eqn{N(\hat w, 4S)}{N(w_hat, 4S)}, so that R-hat can tell whether they agree. Each
#' choice is replaced by the argument that sets it (`batch_size`, `iter`,
#' `burnin`, `thin`, `temperature`, `init`, `precondition` (a matrix),
#' `control_variates`); `print()` shows what was chosen and `fit$auto` holds
#' it. It needs a posterior with one mode and a negative definite Hessian
#' there; for others give `lr` ([model_mixture()] and [model_ica()], whose
#' posteriors have several modes by construction, say so).
#'
#' Where the posterior is far from Gaussian along a few coefficients whose
#' columns are non-zero on few rows (rare levels of a factor whose rows hold
#' events of one class only, as in the a9a encoding of [adult]), those
#' coefficients are drawn one at a time after each step, by slice sampling
#' from their exact conditionals on their own rows (microseconds each), and
#' the steps move the rest, with the Laplace covariance of the rest given
#' them, at the step of a near-Gaussian posterior. This is chosen when each
#' such coefficient's conditional score departs from a Gaussian's by more
#' than twice its scale at points drawn from the Laplace approximation, each
#' column has at most a tenth of the rows, the rest then departs by less,
#' and the two sets are nearly independent under the Laplace approximation
#' (a squared canonical correlation of at most 0.5: otherwise one-at-a-time
#' updates would cross their shared directions slowly), and not where the
#' whole departs from a Gaussian more than 100 times (walls of data in the
#' rest too, as for some neighbourhoods in `modeldata::ames`). On Adult: six levels
#' with 1-51 rows, 15,400 full-data steps, about 15 s on one core, within
#' 0.11 sd and 7% of a long MALA run. `print()` names the coefficients.
#' For [model_logistic()] and [model_poisson()] with their data in memory, not with a
#' `precondition` you give.
#'
#' Otherwise, where the posterior is far from Gaussian along some direction,
#' the step is 0.1, the Laplace covariance understates that direction and the
#' chain mixes along it more slowly than planned. There a burn-in of a fifth
#' of the planned run runs first, as a warm-up: the largest ratio of a
#' marginal variance in its second half to the Laplace one (at most 10)
#' lengthens the rest of the run, which continues the warm-up exactly.
#' Giving `iter` or `burnin` turns the lengthening off; the checks of the fit
#' (see [sgld_fit]) still warn about too few effective draws.
#'
#' Where the Laplace approximation fails outright, as for classes that a
#' combination of predictors nearly separates (its scores at points drawn
#' from it more than 1,000 times a Gaussian's), or where the warm-up's
#' variances run beyond 10 times the Laplace ones, the unadjusted step
#' cannot follow the posterior, and `sgld(model)` takes Metropolis-adjusted
#' Langevin steps with the full data instead ([mala()], exact whatever the
#' step; the fit is then a MALA fit): the Laplace preconditioner, a step
#' from short pilots aiming at an acceptance rate between 0.4 and 0.8, a
#' warm-up of at least 2,000 iterations whose second half measures the
#' effective draws per iteration, and a run long enough for about 2,000 of
#' them, at most 10 times the plan above; several chains start from draws
#' of a one-chain first half of the warm-up (over-dispersed starts from a
#' Laplace approximation this far off can lie where no step is accepted).
#' This needs the full data in every
#' step, so only up to n d = 10^7, and not when `batch_size`,
#' `control_variates`, `temperature`, `clip`, `replace` or `diagnostics` is
#' given. `print()` says which was chosen and why.
#'
#' For a negative-binomial regression whose posterior is close to its Laplace
#' approximation (departure at most 1, no coefficient drawn alone) and whose
#' every step reads the full data anyway (the plan above chose no
#' subsample), the same Metropolis-adjusted steps are taken with a much
#' larger step than the unadjusted one: proposal sd 1.2 in Laplace
#' coordinates at d = 8, scaled as \eqn{d^{-1/6}}{d^(-1/6)}, every chain from
#' the mode (as [mala()]'s), a 200-iteration warm-up measuring the effective
#' draws per iteration of the means and of their squares, then a run long
#' enough for about 2,000 of the slower (`fit$auto$strategy` is
#' `"mala-gaussian"`). Exact, and about half the passes over the data of the
#' unadjusted plan; for the other models an adjusted step costs 1.3 to 3
#' times an unadjusted one (it needs the log likelihood too), which that
#' saving does not repay (bench/hmc.md). Not when `lr`, `precondition`,
#' `batch_size`, `control_variates`, `temperature`, `clip`, `replace` or
#' `diagnostics` is given.
#'
#' Before those steps, a negative binomial tries independence
#' Metropolis-Hastings (`fit$auto$strategy` is `"imh"`) where it costs
#' less: always at most 1,000 rows; above, where 6,000 full passes cost
#' less than 12 times the rows the subsampled plan would read. 1,000
#' pilot proposals from a t distribution with 7 degrees of freedom at the
#' mode, scaled by the Laplace covariance, each chain scanning its share
#' from the mode; where their Pareto-smoothed importance sampling k-hat is
#' below 0.5 and at least half are accepted, each chain goes on with t
#' proposals of 15 degrees of freedom at the pilot's importance-weighted
#' mean and covariance until 2,000 effective draws of the means and of the
#' squares are measured. Each proposal costs a log posterior without its
#' gradient; exact (bench/imh.md). Otherwise the steps above run, with the
#' same draws as without the pilot. Not when `iter`, `burnin`, `thin`,
#' `init`, `monitor`, `pars` or `parallel` is given either.
#'
#' Models with more than 1,000 parameters (text features, factors of
#' thousands of levels; the option `sgld.auto_wide_d` moves the bar) get a
#' recipe that stores no d x d matrix: the mode by L-BFGS-B, the diagonal of
#' the posterior precision there from Hessian-vector products (exactly for
#' the parameters coupled to many others, such as the intercept, by random
#' probes for the rest), a fixed diagonal preconditioner corrected along the
#' few directions where it fits worst (found by the Lanczos iteration; O(d k)
#' a step), the step 0.8 over the largest curvature that leaves (0.5 when
#' levels on few rows are drawn alone by slice sampling), taken as
#' Leimkuhler-Matthews steps (each step's noise the mean of its own normals
#' and the last step's: for a Gaussian posterior the draws' law is exact at
#' any step below 2, where Euler's step widens each direction by its own
#' factor), and a run long enough for about 1,000 effective draws along the
#' slowest direction (3,000 when levels are drawn alone: the few-row levels
#' mix more slowly than that direction).
#'
#' The burn-in runs as a run of its own, which the rest continues exactly
#' (`init = fit`), so that an interrupt keeps what was made: in the warm-up
#' (or a pilot) the fit holds that phase's draws, with a warning that they
#' are not yet a sample of the posterior; in the run, the draws so far; in
#' the search for the mode, before any draw, the interrupt stops the call as
#' usual.
#'
#' A model with a latent path ([model_sv()]: one latent per time point)
#' has no useful joint mode (the joint density of a hierarchical model grows
#' without bound as the path's scale shrinks to 0). For it, `lr = "auto"`
#' samples with the path whitened given the globals (`precondition =
#' "whiten"`; for the AR(1) model the level \eqn{\mu}{mu} is whitened with
#' the path), in Leimkuhler-Matthews steps of 0.4 in those coordinates; a
#' warm-up of 5,000 iterations (or `burnin`) from the globals' approximate
#' marginal mode sets the globals' step covariance from its own draws and
#' measures the effective draws per iteration of the slowest global, and the
#' run continues the warm-up for about 2,000 of them (at most 2 million
#' iterations), thinned by a quarter of the iterations per effective draw.
#' Several chains start with the globals over-dispersed. See "Accuracy" in
#' [model_sv()] for what it gives against exact references.
#' @section Choosing settings by hand:
#' When you give `lr`, the rest is yours too. A recipe:
#' 1. *Scales.* The plain update moves every coordinate by one learning rate.
#'    With predictors on their natural scales (glucose about 100, horsepower
#'    about 150, an intercept about 1) the posterior sds differ by orders of
#'    magnitude and no single `lr` works for plain SGLD or [psgld()]: one
#'    small enough for the stiffest direction never moves the others. Either
#'    standardise the predictors, or precondition with the Laplace covariance:
#'    `precondition = posterior_mode(model, covariance = TRUE)$covariance`.
#' 2. *Step.* With \eqn{\lambda}{lambda} the largest eigenvalue of the posterior
#'    precision in the preconditioner's coordinates (1 with the Laplace
#'    covariance), a constant step is stable only below \eqn{2/\lambda}{2/lambda} and
#'    widens the posterior variance by about \eqn{1/(1 - \eta\lambda/2)}{1/(1 - etalambda/2)}:
#'    keep \eqn{\eta\lambda}{etalambda} at 0.1 or below.
#' 3. *Batch.* Run with [diagnostics_every()] and look at the sampling
#'    threshold `alpha`: it is the variance the minibatch noise adds, relative
#'    to the injected noise, and the sds are too wide by about
#'    \eqn{\sqrt{1 + \alpha}}{sqrt(1 + alpha)}. Keep it well below 1 (Welling and Teh collect at
#'    0.1) by a larger batch or `control_variates = TRUE`; the fit warns when
#'    it ends above 1.
#' 4. *Iterations.* The slowest direction mixes in about
#'    \eqn{2/(\eta\lambda_{min})}{2/(etalambda_min)} iterations; run a few hundred times that
#'    and burn in a tenth.
#' 5. *Check.* Several chains from spread-out starts (R-hat below 1.05, ESS
#'    above 100 for every parameter; the fit warns otherwise, and
#'    `print()` and `summary()` repeat it), [ksd()] against other settings, and a comparison with
#'    [mala()].
#' @section Reproducibility:
#' The engine's generator is seeded from R's, so `set.seed()` before the call
#' makes a run reproducible.
#' @section Stopping early:
#' If a parameter or the gradient becomes non-finite, that chain stops, the
#' draws kept so far are returned, and a warning names the chain and the
#' iteration. An interrupt (Ctrl-C / Esc) stops every chain within about 10
#' milliseconds (chains run in chunks of iterations, and the interrupt is
#' checked between chunks) and likewise returns the draws made so far, which
#' `init = fit` continues.
#' @references Welling, M. and Teh, Y. W. (2011). Bayesian learning via
#'   stochastic gradient Langevin dynamics. *Proceedings of the 28th ICML*.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- sgld(m, lr = 2e-7, batch_size = 1000, iter = 20000, thin = 10)
#' summary(fit)
#' # a formula, data and family, as for glm(): the model is built for you
#' d <- MASS::Pima.tr
#' fit <- sgld(type ~ ., data = d, family = binomial())
#' @export
sgld <- function(model, lr = "auto", batch_size = NULL, iter = NULL, ...,
                 burnin = floor(iter / 2), thin = 1, temperature = 1, chains = 4,
                 init = NULL, replace = FALSE, precondition = NULL,
                 control_variates = FALSE, clip = NULL, monitor = NULL,
                 diagnostics = NULL, threads = NULL, pars = NULL,
                 progress = getOption("sgld.progress", interactive()),
                 parallel = getOption("sgld.parallel", "threads"), tune = NULL) {
  if (missing(model) || is_formula(model))
    return(formula_face(sgld, match.call(), parent.frame()))  # R/formula-face.R
  check_dots_empty(...)
  check_model(model)
  # before anything reads it (burnin's default is computed from it)
  if (!is.null(iter)) check_count(iter, "iter", lower = 1)
  # settings from tune_sgld() (R/tune.R), under those given here
  if (!is.null(tune)) {
    given <- setdiff(names(match.call())[-1], c("model", "tune"))
    fit <- tuned_sgld(model, tune, mget(given, environment()))
    fit$call <- match.call()
    return(fit)
  }
  # init = fit of an automatic run: its settings, but those given (R/continue.R)
  if (is_auto_fit(init))
    return(continue_auto(model, init, mget(setdiff(names(formals()), "..."), environment()),
                         given = names(match.call())[-1], call = match.call()))
  # lr = "auto" (R/auto.R): settings from the Laplace approximation
  if (identical(lr, "auto"))
    return(auto_sgld(model, mget(setdiff(names(formals()), "..."), environment()),
                     given = names(match.call())[-1], call = match.call()))
  if (is.null(iter)) iter <- 10000
  run_sampler(model, lr = lr, batch_size = batch_size, iter = iter, burnin = burnin,
              thin = thin, temperature = temperature, chains = chains, init = init,
              replace = replace, clip = clip, monitor = monitor, threads = threads,
              diagnostics = diagnostics, rule = resolve_precondition(precondition, model),
              control_variates = control_variates, method = "sgld", call = match.call(),
              pars = pars, progress = progress, parallel = parallel)
}

#' Preconditioned SGLD
#'
#' [sgld()] with the RMSprop preconditioner of Li et al. (2016): each
#' coordinate's step and noise are scaled by the inverse root mean square of
#' its recent gradients, so coordinates whose posterior scales differ by orders
#' of magnitude move at comparable speeds with one learning rate. See
#' [update_rules] for the update and its defaults.
#'
#' @inheritParams sgld
#' @param lr Learning rate, a number or a schedule; `"auto"` (the default) is
#'   an error that points to [sgld()]'s automatic settings, as the adaptive
#'   preconditioner has no step that suits every model.
#' @param alpha Weight of the old average of squared gradients, in \[0, 1).
#' @param lambda Positive constant added to the root mean square. `NULL`
#'   (the default) takes the model's own: 1 for a [model_mlp()] network,
#'   \eqn{10^{-5}}{1e-5} for every other model. A network has weights whose
#'   gradients stay near 0 (the inputs of pixels that are nearly always blank,
#'   the layer precisions of [prior_gamma()]); with \eqn{\lambda = 10^{-5}}{lambda = 1e-5}
#'   their preconditioner grows to \eqn{10^5}{1e5} and the injected noise
#'   throws them far out, while \eqn{\lambda = 1}{lambda = 1} keeps every
#'   step at most SGLD's at the same `lr`.
#' @param v_init Starting value (>= 0) of the averages of squared gradients.
#' @param ... Further arguments of [sgld()], by name.
#' @return An object of class `sgld_fit`; see [sgld_fit].
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- psgld(m, lr = 1e-4, batch_size = 100, iter = 20000)
#' summary(fit)
#' @export
psgld <- function(model, lr = "auto", batch_size = NULL, iter = 10000, ..., alpha = 0.99,
                  lambda = NULL, v_init = 0) {
  if (missing(model) || is_formula(model))
    return(formula_face(psgld, match.call(), parent.frame()))  # R/formula-face.R
  if (identical(lr, "auto")) auto_unsupported("psgld()")  # R/auto.R
  if (is.null(lambda)) lambda <- psgld_lambda(model)
  fit <- sgld(model, lr = lr, batch_size = batch_size, iter = iter, ...,
              precondition = precond_rmsprop(alpha = alpha, lambda = lambda, v_init = v_init))
  fit$call <- match.call()
  fit
}

# pSGLD's default lambda, by model: see psgld()'s `lambda`. Measured on
# networks: Boston (13-50-1, hierarchical prior, lr 1e-4, batch 32) diverged
# with 1e-5 and ran with 1; Fashion-MNIST 784-100-10 had test accuracy 0.107
# with 1e-5 (bench/fashion-mnist.R). Other models keep 1e-5 and so their draws.
psgld_lambda <- function(model) UseMethod("psgld_lambda")
#' @export
psgld_lambda.default <- function(model) 1e-5
#' @export
psgld_lambda.sgld_model_mlp <- function(model) 1

#' Stochastic gradient Hamiltonian Monte Carlo
#'
#' SGHMC (Chen, Fox and Guestrin 2014) adds a velocity \eqn{v}{v} to each chain
#' and damps it by friction, one step per iteration:
#' \deqn{v \leftarrow (1 - a) v + \eta \hat g(w) + \sqrt{2 a \eta \tau}\,\xi,
#'   \qquad w \leftarrow w + v,}{v <- (1 - a) v + eta g_hat(w) + sqrt(2 a eta tau) xi,
#'   w <- w + v,}
#' their equation (15) with learning rate \eqn{\eta}{eta} (their \eqn{\eta}{eta}),
#' friction \eqn{a}{a} (their \eqn{\alpha}{alpha}) and the gradient-noise estimate
#' \eqn{\hat\beta = 0}{beta_hat = 0}; every iteration yields a draw. The velocity starts at
#' 0 and is part of the chain's state (`fit$state`). At `friction = 1` this is
#' [sgld()]; smaller friction lets the chain keep its direction and cross
#' the posterior in fewer iterations. For a Gaussian posterior whose largest
#' precision is \eqn{\lambda}{lambda} the recursion is stable for
#' \eqn{\eta < 2(2 - a)/\lambda}{eta < 2(2 - a)/lambda}; like SGLD's, the stationary distribution of
#' a constant-step chain is only close to the posterior, the closer the
#' smaller \eqn{\eta}{eta}.
#'
#' @inheritParams sgld
#' @param friction Friction \eqn{a}{a}, in (0, 1].
#' @param lr Learning rate, a number or a schedule; `"auto"` (the default) is
#'   an error that points to [sgld()]'s automatic settings.
#' @param friction Friction \eqn{a}{a}, in (0, 1].
#' @return An object of class `sgld_fit`; see [sgld_fit].
#' @references Chen, T., Fox, E. B. and Guestrin, C. (2014). Stochastic gradient
#'   Hamiltonian Monte Carlo. *Proceedings of the 31st ICML*.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- sghmc(m, lr = 2e-8, friction = 0.1, batch_size = 1000, iter = 20000, thin = 10)
#' summary(fit)
#' @export
sghmc <- function(model, lr = "auto", batch_size = NULL, iter = 10000, ..., friction = 0.1,
                  burnin = floor(iter / 2), thin = 1, temperature = 1, chains = 4,
                  init = NULL, replace = FALSE, control_variates = FALSE, clip = NULL,
                  monitor = NULL, diagnostics = NULL,
                  threads = NULL, pars = NULL,
                  progress = getOption("sgld.progress", interactive()),
                  parallel = getOption("sgld.parallel", "threads")) {
  if (missing(model) || is_formula(model))
    return(formula_face(sghmc, match.call(), parent.frame()))  # R/formula-face.R
  if (identical(lr, "auto")) auto_unsupported("sghmc()")  # R/auto.R
  check_dots_empty(...)
  check_number(friction, "friction", lower = 0, upper = 1, lower_open = TRUE)
  rule <- update_rule("sghmc", "SGHMC", list(friction = friction), sampler = TRUE)
  run_sampler(model, lr = lr, batch_size = batch_size, iter = iter, burnin = burnin,
              thin = thin, temperature = temperature, chains = chains, init = init,
              replace = replace, clip = clip, monitor = monitor, threads = threads,
              diagnostics = diagnostics, rule = rule, control_variates = control_variates,
              method = "sghmc", call = match.call(), pars = pars, progress = progress,
              parallel = parallel)
}

#' Stochastic gradient descent and gradient descent
#'
#' Follow the (minibatch) gradient of the log posterior from a start:
#' `sgd()` is [sgld()] at temperature 0, and `gd()` is `sgd()` with the full
#' data in every batch. The fit holds the whole trajectory (every iterate,
#' unless thinned), and [coef()] gives its final point: the estimate of the
#' posterior mode (the MAP estimate on the sampler's scale).
#'
#' @inheritParams sgld
#' @param lr Learning rate, a number or a schedule; `"auto"` (the default) is
#'   an error that points to [posterior_mode()], which finds the mode without
#'   one.
#' @param thin Keep every `thin`-th iterate.
#' @param optimizer `NULL` for the model's default (the plain step, or the
#'   natural gradient for [model_ica()]); `"sgd"` for the plain step
#'   \eqn{w \leftarrow w + \eta \hat g}{w <- w + eta g_hat}; `"momentum"`, `"adagrad"`,
#'   `"rmsprop"`, `"adam"` for those optimisers with their default settings, or
#'   one made by [opt_momentum()], [opt_adagrad()], [opt_rmsprop()] or
#'   [opt_adam()]; `"natural"` for natural-gradient ascent (see [update_rules]).
#' @return An object of class `sgld_fit`; see [sgld_fit].
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' fit <- sgd(m, lr = 1e-5, batch_size = 10, iter = 1000,
#'            init = c(1.1, -2, 1))
#' coef(fit)
#' coef(gd(m, lr = 1e-5, iter = 2000))
#' @export
sgd <- function(model, lr = "auto", batch_size = NULL, iter = 1000, ..., optimizer = NULL,
                thin = 1, chains = 1, init = NULL, replace = FALSE, control_variates = FALSE,
                clip = NULL, monitor = NULL, diagnostics = NULL,
                threads = NULL, pars = NULL,
                progress = getOption("sgld.progress", interactive()),
                parallel = getOption("sgld.parallel", "threads")) {
  if (missing(model) || is_formula(model))
    return(formula_face(sgd, match.call(), parent.frame()))  # R/formula-face.R
  if (identical(lr, "auto")) auto_unsupported("sgd()")  # R/auto.R
  check_dots_empty(...)
  run_sampler(model, lr = lr, batch_size = batch_size, iter = iter, burnin = 0,
              thin = thin, temperature = 0, chains = chains, init = init,
              replace = replace, clip = clip, monitor = monitor, threads = threads,
              diagnostics = diagnostics, rule = resolve_optimizer(optimizer, model),
              control_variates = control_variates, method = "sgd", call = match.call(),
              pars = pars, progress = progress, parallel = parallel)
}

#' @rdname sgd
#' @export
gd <- function(model, lr = "auto", iter = 1000, ..., thin = 1, init = NULL, clip = NULL,
               pars = NULL, progress = getOption("sgld.progress", interactive())) {
  if (missing(model) || is_formula(model))
    return(formula_face(gd, match.call(), parent.frame()))  # R/formula-face.R
  if (identical(lr, "auto")) auto_unsupported("gd()")  # R/auto.R
  check_dots_empty(...)
  check_model(model)
  run_sampler(model, lr = lr, batch_size = model$n, iter = iter, burnin = 0,
              thin = thin, temperature = 0, chains = 1, init = init,
              replace = FALSE, clip = clip, monitor = NULL, threads = 1L,
              rule = plain_rule("Gradient descent"), method = "gd", call = match.call(),
              pars = pars, progress = progress)
}

# The one runner behind every exported sampler: check everything once, call
# the C driver, and turn what it returns into an sgld_fit.
run_sampler <- function(model, lr, batch_size, iter, burnin, thin, temperature, chains,
                        init, replace, clip, monitor, threads, method, call,
                        rule = plain_rule("SGLD"), control_variates = FALSE,
                        diagnostics = NULL, mala = FALSE, pars = NULL, progress = FALSE,
                        parallel = "threads", gradient = NULL, checks = TRUE,
                        thin_auto = NULL, coordinates = NULL, as_run = NULL, leapfrog = 1L) {
  parallel <- check_parallel(parallel, model)
  # a sampler's run for the user (not an internal warm-up, checks = FALSE)
  # with no `thin` given keeps about default_draws draws a chain (R/pars.R);
  # the automatic settings' phases say so themselves
  if (is.null(thin_auto))
    thin_auto <- !isFALSE(checks) && method %in% c("sgld", "psgld", "sghmc", "mala") &&
      !"thin" %in% names(call)
  settings <- run_settings(model, lr = lr, batch_size = batch_size, iter = iter,
                           burnin = burnin, thin = thin, temperature = temperature,
                           chains = chains, init = init, replace = replace, clip = clip,
                           monitor = monitor, threads = threads, rule = rule,
                           control_variates = control_variates,
                           diagnostics = diagnostics, mala = mala, pars = pars,
                           progress = progress, gradient = gradient, thin_auto = thin_auto,
                           coordinates = coordinates, leapfrog = leapfrog)
  engine <- new.env(parent = emptyenv())
  start <- proc.time()[["elapsed"]]
  lost <- NULL
  if (parallel == "future") {
    res <- future_results(model, settings)
    failure <- attr(res, "failure")
    lost <- attr(res, "lost")
    rows_lost <- attr(res, "rows_lost")
    attributes(res) <- attributes(res)["names"]
    engine$res <- res
    rm(res)
  } else {
    engine$res <- .Call(C_sgld_run, model, settings)
    failure <- report_callbacks(model)
    rows_lost <- .Call(C_sgld_rows_lost_since)
  }
  elapsed <- proc.time()[["elapsed"]] - start
  fit <- new_sgld_fit(engine, model = model, settings = settings, lr = settings$lr,
                      method = method, call = call, time = elapsed, rule = rule)
  # a chain whose future failed (its worker died or could not be reached)
  if (length(lost)) fit$status[as.integer(names(lost))] <- "lost"
  warn_lost_chains(lost)
  if (any(fit$status == "failed") && isTRUE(failure$data_lost)) {
    # the rows of a lost worker cannot be read again: the draws made so far,
    # without the checks, which would read them
    fit$data_lost <- data_lost_warning(fit, failure)
    sgld_warn("data_lost", fit$data_lost)
    return(fit)
  }
  if (any(fit$status == "failed") && !is.null(failure)) stop(model_error(fit, failure))
  if (rows_lost) stop(rows_lost_error(fit, model))   # R/file-backed.R
  if (!is.null(model$file)) check_copy_after_run(fit, model)
  # a run that continues its own warm-up (R/auto.R) is one run: its whole
  # length and burn-in, recorded before any check or advice reads them
  if (!is.null(as_run)) {
    fit$settings[names(as_run)] <- as_run
    settings[names(as_run)] <- as_run
  }
  warn_long_run(fit, settings)
  # warnings for likely wrong runs (R/warnings.R); not for the internal
  # warm-ups of lr = "auto" (checks = FALSE), whose fits are not the user's,
  # and for its run (checks = "auto") with remedies other than lr = "auto"
  if (isFALSE(checks)) fit else check_run(fit, settings, rule, auto = identical(checks, "auto"))
}

# Every argument checked, and resolved into the plain list the C driver reads.
# `gradient`: NULL for the minibatch gradient of the log posterior, or a
# list(name, opts) naming another estimator (R/vi.R).
run_settings <- function(model, lr, batch_size, iter, burnin, thin, temperature, chains,
                         init, replace, clip, rule = plain_rule("SGLD"), threads = 1L,
                         monitor = NULL, diagnostics = NULL, mala = FALSE,
                         control_variates = FALSE, pars = NULL, progress = FALSE,
                         gradient = NULL, thin_auto = FALSE, coordinates = NULL,
                         leapfrog = 1L) {
  check_model(model)
  leapfrog <- check_leapfrog(leapfrog, mala, rule)
  check_flag(progress, "progress")
  keep <- resolve_pars(pars, model)
  n <- model$n
  d <- model$d
  lr <- as_lr(lr)
  check_count(iter, "iter", lower = 1)
  # a model with parameters local to items (model_sv()) runs on full data
  if (is.null(batch_size)) batch_size <- if (isTRUE(model$local_parameters)) n else min(100, n)
  check_count(batch_size, "batch_size", lower = 1, upper = min(n, .Machine$integer.max))
  if (isTRUE(model$local_parameters))
    check_local_parameters(model, batch_size, control_variates, diagnostics, rule)
  schedule <- resolve_lr(lr, iter)
  if (mala && schedule$type == "cyclical" && schedule$gamma < 1)
    abort("`lr`: mala() samples at every iteration; use lr_cyclical(explore = \"sample\").")
  collect <- resolve_collection(burnin, thin, diagnostics, iter, schedule, thin_auto)
  check_number(temperature, "temperature", lower = 0)
  check_count(chains, "chains", lower = 1, upper = 1000)
  stored <- budget_storage(collect, keep, pars, model, chains, thin_auto)   # R/pars.R
  collect <- stored$collect
  keep <- stored$keep
  check_flag(replace, "replace")
  threads <- resolve_threads(threads, chains)
  if (mala) check_densities(model, "mala()")
  if (!is.null(diagnostics)) check_densities(model, "`diagnostics`")
  if (!is.null(monitor)) check_densities(model, "`monitor`")
  if (!is.null(clip) && !inherits(clip, "sgld_clip"))
    abort("`clip` must be NULL, clip_norm() or clip_value(), not ", describe(clip), ".")
  n_keep <- if (is.null(keep)) d else length(keep)
  check_draws_memory(collect$capacity, n_keep, chains)   # R/pars.R
  if (!is.null(monitor) && !inherits(monitor, "sgld_monitor"))
    abort("`monitor` must be NULL or made by monitor_every(), not ", describe(monitor), ".")
  if (!is.null(monitor) && monitor$every > iter)
    abort("`monitor`: `every` (", monitor$every, ") must be at most `iter` (", iter, ").")
  test <- if (!is.null(monitor) && !is.null(monitor$newdata))
    held_out_model(model, monitor$newdata)
  cv_mode <- resolve_control_variates(control_variates, model)
  if (inherits(init, "sgld_fit")) {
    from <- continuation(init, model, chains, rule, gradient)
    init_w <- from$w
  } else {
    from <- list(t_offset = rep(0, chains), state_init = NULL, rng_init = NULL)
    # with control variates the mode is known: start there unless told otherwise
    init_w <- if (is.null(init) && !is.null(cv_mode)) matrix(cv_mode, chains, d, byrow = TRUE)
              else resolve_init(model, init, chains)
  }
  c(collect[setdiff(names(collect), c("regular", "span"))], list(
    iter = iter, chains = chains, batch_size = batch_size,
    replace = as.integer(replace), temperature = temperature,
    lr = lr, schedule = schedule,
    clip_type = if (is.null(clip)) "none" else clip$type,
    clip_threshold = if (is.null(clip)) 0 else clip$threshold,
    update = rule$name, update_opts = rule$opts,
    gradient = if (is.null(gradient)) "minibatch" else gradient$name,
    gradient_opts = if (is.null(gradient)) list() else gradient$opts,
    init = as.double(t(init_w)),
    t_offset = as.double(from$t_offset), state_init = from$state_init,
    rng_init = from$rng_init, threads = threads,
    monitor_every = if (is.null(monitor)) 0 else monitor$every, test = test,
    mala = as.integer(mala), leapfrog = leapfrog,
    progress = as.integer(progress), keep = keep, moment_scale = moment_scales(model),
    long_run_seconds = getOption("sgld.long_run_seconds", 3600),
    stop_file = NULL,   # a chain run as a future stops once this file exists (R/future.R)
    cv_mode = cv_mode,
    # coordinates drawn one at a time after each step (R/auto.R, src/coordinate.c)
    coordinates = coordinates,
    regular = collect$regular,
    storage = stored$storage,
    # chains run in this order; each has its own stream, so the order cannot matter
    order = seq_len(chains)
  ))
}

# The number of OpenMP threads of a run. Not given: the option, else a thread
# per chain up to the processors available, as rstanarm's chains run on
# cores = getOption("mc.cores"). On a shared 2-core machine, 4 chains on 2
# threads ran 3.5 times slower than on 1 (issue 51), so more threads than
# processors, given explicitly, warn (once a session, as a loop of fits
# would repeat it).
resolve_threads <- function(threads, chains) {
  cores <- available_cores()
  if (is.null(threads)) threads <- getOption("sgld.threads")
  if (is.null(threads)) return(as.integer(max(1L, min(chains, cores, idle_cores(cores)))))
  check_count(threads, "threads", lower = 1, upper = 1024)
  if (threads > cores && !isTRUE(session$warned_threads)) {
    session$warned_threads <- TRUE
    sgld_warn("threads", "`threads` = ", threads, " is more than the ", cores, " processors available: ",
            "threads will wait for each other (oversubscription). Leave `threads` out to use ",
            "one per chain up to the processors (this warning is shown once a session).")
  }
  as.integer(threads)
}

# What a session remembers between calls (warnings given once).
session <- new.env(parent = emptyenv())

# Processors this process may use: parallelly's count where installed (it
# honours cgroups, R CMD check's limit of 2, schedulers' allocations and
# getOption("mc.cores"), rstanarm's setting), else R's own detection capped
# by getOption("mc.cores").
available_cores <- function() {
  n <- if (requireNamespace("parallelly", quietly = TRUE)) parallelly::availableCores()
       else min(parallel::detectCores(), getOption("mc.cores", Inf), na.rm = TRUE)
  n <- suppressWarnings(as.integer(n))
  if (length(n) != 1L || is.na(n) || n < 1) 1L else n
}

# Processors not busy with other work: the available ones less the 1-minute
# load average, this process's own share given back (Linux; elsewhere all).
# Chains on threads advance in lockstep, chunk by chunk, so a thread that
# waits for a processor holds up every chain, and OpenMP's waiting threads
# spin: on this 2-core machine under a load of 8, a 2-chain network ran in
# 0.8 s of CPU on one thread and 9.3 s on two (6 against 32 s elapsed).
idle_cores <- function(cores) {
  load <- tryCatch(suppressWarnings(as.numeric(strsplit(readLines("/proc/loadavg", n = 1L,
                                                                  warn = FALSE), " ")[[1]][1])),
                   error = function(e) NA_real_)
  if (length(load) != 1L || is.na(load)) return(cores)
  max(1L, as.integer(floor(cores - load + 1.5)))
}

# Starting values: one row per chain on the sampler's scale.
resolve_init <- function(model, init, chains) {
  d <- model$d
  if (is.null(init)) init <- initial_values(model, chains)
  if (!is.numeric(init) || is.object(init))
    abort("`init` must be NULL, a numeric vector of length ", d,
          ", a matrix with one row per chain, or a fit to continue; not ", describe(init), ".")
  if (is.matrix(init)) {
    if (nrow(init) != chains || ncol(init) != d)
      abort("`init` must be a ", chains, " x ", d, " matrix (one row per chain), not ",
            nrow(init), " x ", ncol(init), ".")
  } else {
    if (length(init) != d)
      abort("`init` must have length ", d, " (", paste(model$names, collapse = ", "),
            "), not ", length(init), ".")
    init <- matrix(init, chains, d, byrow = TRUE)
  }
  if (any(!is.finite(init))) abort("`init` must be finite.")
  check_user_values(model, init, "init")
  w <- to_sampler_scale(model, init)
  if (any(!is.finite(w))) abort("`init` is outside the parameter space.")
  w
}

#' Metropolis-adjusted Langevin algorithm
#'
#' The exact reference sampler: each iteration proposes a Langevin step with the
#' full-data gradient, \eqn{w' \sim N(w + \eta P \nabla U(w), 2\eta\tau P)}{w' ~ N(w + eta P grad U(w), 2 eta tau P)}, and
#' accepts it with the Metropolis-Hastings probability for the target
#' \eqn{\exp(U/\tau)}{exp(U/tau)}, so the chain's stationary distribution is exactly the
#' posterior whatever the step size (the step size governs only how fast it
#' mixes). It runs in the same engine as [sgld()], with the full data in every
#' step. Aim for an acceptance rate of roughly 0.5 to 0.7.
#'
#' @inheritParams sgld
#' @param lr Step size \eqn{\eta}{eta} (a number or a schedule; a constant one keeps
#'   the chain stationary), or `"auto"` (the default): the preconditioner
#'   `precondition` (by default the Laplace covariance at the posterior mode)
#'   and the step \eqn{1.65^2 / (2 d^{1/3})}{1.65^2 / (2 d^(1/3))} of the optimal scaling of
#'   Roberts and Rosenthal (1998), halved or grown by short pilot runs until
#'   the acceptance rate is between 0.45 and 0.85; then 10,000 kept
#'   iterations split over the chains, each chain's first 1,000 burn-in (an
#'   `iter` given alone: half of it when it is 1,000 or fewer), every chain
#'   from the mode (over-dispersed starts can sit near walls of data where
#'   the piloted step is refused; the chains still part in the burn-in). A
#'   run expected to take more than 30 s at the pilots' speed says so first
#'   (`options(sgld.mala_announce_seconds)`). For a model with a latent path
#'   ([model_sv()]) the path whitened at step 0.1, as for [sgld()] (its section
#'   "Automatic settings").
#' @param iter Number of iterations per chain; `NULL` means 10,000 for a
#'   given `lr`, 1,000 + 10,000 / `chains` for `lr = "auto"`.
#' @param precondition `NULL` for the model's default (none; the natural
#'   gradient for [model_ica()]; the whitened path for [model_sv()]),
#'   `"none"`, `"natural"`, `"whiten"` (see [sgld()]), or a symmetric
#'   positive definite d x d matrix \eqn{P}{P} on the sampler's scale, e.g. an
#'   estimate of the posterior covariance, or its diagonal (a vector).
#' @param temperature \eqn{\tau > 0}{tau > 0}; 1 samples the posterior.
#' @param leapfrog Mean number of leapfrog steps a proposal takes: 1 (the
#'   default) is MALA; above 1 each proposal is a Hamiltonian Monte Carlo
#'   trajectory of 1 to `2 * leapfrog - 1` steps (drawn uniformly each
#'   iteration) of size \eqn{\sqrt{2\eta\tau}}{sqrt(2 eta tau)} with the metric
#'   `precondition` (which must then be fixed: `NULL`, `"none"`, a matrix or
#'   its diagonal), whose first step is MALA's proposal. Each step is a pass
#'   over the data; longer trajectories move further per accept test, which
#'   pays on posteriors close to Gaussian in the metric's coordinates.
#' @return An object of class `sgld_fit` whose `acceptance` holds each chain's
#'   acceptance rate.
#' @examples
#' m <- model_linear(y ~ x, data = handout)
#' set.seed(1)
#' fit <- mala(m, lr = 1e-5, iter = 2000)
#' fit$acceptance
#' @export
mala <- function(model, lr = "auto", iter = NULL, ..., burnin = floor(iter / 2), thin = 1,
                 temperature = 1, chains = 4, init = NULL, precondition = NULL,
                 leapfrog = 1, monitor = NULL, threads = NULL, pars = NULL,
                 progress = getOption("sgld.progress", interactive()),
                 parallel = getOption("sgld.parallel", "threads")) {
  if (missing(model) || is_formula(model))
    return(formula_face(mala, match.call(), parent.frame()))  # R/formula-face.R
  check_dots_empty(...)
  check_model(model)
  if (!is.null(iter)) check_count(iter, "iter", lower = 1)
  check_count(leapfrog, "leapfrog", lower = 1, upper = 10000)
  check_number(temperature, "temperature", lower = 0, lower_open = TRUE)
  # lr = "auto" (R/auto.R): the Laplace preconditioner and a piloted step
  if (identical(lr, "auto"))
    return(auto_mala(model, mget(setdiff(names(formals()), "..."), environment()),
                     given = names(match.call())[-1], call = match.call()))
  if (is.null(iter)) iter <- 10000
  run_sampler(model, lr = lr, batch_size = model$n, iter = iter, burnin = burnin,
              thin = thin, temperature = temperature, chains = chains, init = init,
              replace = FALSE, clip = NULL, monitor = monitor, threads = threads,
              mala = TRUE, rule = mala_rule(precondition, model), method = "mala",
              call = match.call(), pars = pars, progress = progress, parallel = parallel,
              leapfrog = leapfrog)
}

# Leapfrog steps a mala() proposal: a count, and above 1 a metric that does
# not move with w (the identity or a fixed matrix or diagonal), whose factor
# the engine takes once (src/run.c).
check_leapfrog <- function(leapfrog, mala, rule) {
  check_count(leapfrog, "leapfrog", lower = 1, upper = 10000)
  leapfrog <- as.integer(leapfrog)
  if (leapfrog > 1 && !mala) abort("`leapfrog` goes with mala() only.")
  if (leapfrog > 1 && !rule$name %in% c("sgld", "precond"))
    abort("`leapfrog` above 1 needs a fixed `precondition` (NULL, \"none\", a matrix or its ",
          "diagonal): the trajectories' metric cannot move with the parameters (\"",
          rule$name, "\").")
  leapfrog
}

# MALA's proposal is the step of a rule without kept state.
mala_rule <- function(precondition, model) {
  # a fixed preconditioner's rule (the wide models', R/auto-wide.R) is a proposal too
  if (inherits(precondition, "sgld_rule") && !identical(precondition$name, "precond") ||
      identical(precondition, "rmsprop"))
    abort("`precondition` for mala() must be NULL, \"none\", \"natural\", \"whiten\", a ",
          "matrix or its diagonal: an adaptive preconditioner cannot be a Metropolis-Hastings ",
          "proposal.")
  rule <- resolve_precondition(precondition, model, proposal = TRUE)
  rule$label <- switch(rule$name, natural = "natural-gradient MALA",
                       whiten = "MALA with the latent path whitened", "MALA")
  rule
}

# The lower Cholesky factor of a user's preconditioner, column-major.
precondition_factor <- function(P, d) {
  if (is.null(P)) return(NULL)
  if (!is.numeric(P) || !is.matrix(P) || any(dim(P) != d) || any(!is.finite(P)))
    abort("`precondition` must be a finite ", d, " x ", d, " matrix.")
  if (!isSymmetric(unname(P))) abort("`precondition` must be symmetric.")
  R <- tryCatch(chol(P), error = function(e) abort("`precondition` must be positive definite."))
  as.double(t(R))
}

# The scale on which the engine keeps each parameter's running moments: the
# user's scale where the model's transform acts on each coordinate alone
# (sigma2 = exp(log sigma2)), else the sampler's.
moment_scales <- function(model) {
  if (!is.null(model$moment_scale)) return(model$moment_scale)   # set by model_sv()
  scale <- rep("identity", model$d)
  scale[model$log_scale] <- "exp"
  scale
}
