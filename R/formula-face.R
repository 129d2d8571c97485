#' Formula, data and family: the samplers' glm()-like face
#'
#' Every sampler ([sgld()], [sgd()], [gd()], [mala()], [bbb()], [psgld()],
#' [sghmc()]) and [tune_sgld()] takes, in place of a model, a formula with
#' `data` and `family` as [glm()] does:
#' `sgld(type ~ ., data = MASS::Pima.tr, family = binomial())`. The model is built from
#' the family by its `model_*()` function and the call then runs exactly as
#' it would on that model: the same draws for the same `set.seed()` and
#' settings, and the fit's `call` is the call you wrote.
#'
#' @section Families:
#' `family` is a family object (`binomial()`), a family function
#' (`binomial`) or its name (`"binomial"`), as [glm()] accepts it; the
#' default is `gaussian()`.
#' \tabular{lll}{
#'   family \tab link \tab model \cr
#'   `gaussian` \tab identity \tab [model_linear()] \cr
#'   `binomial` \tab logit \tab [model_logistic()] \cr
#'   `poisson` \tab log \tab [model_poisson()] \cr
#'   negative binomial \tab log \tab [model_negbin()]
#' }
#' Other families and links are an error naming `family`. The negative
#' binomial is `"negbin"`, `"neg_binomial_2"` or `"negative_binomial"`, or
#' the family object of rstanarm's `neg_binomial_2()` or of
#' [MASS::negative.binomial()]. Its dispersion \eqn{\phi}{phi} is a parameter of the model, sampled
#' under its prior (`prior_aux`), as in rstanarm's
#' `neg_binomial_2`: the `theta` of a [MASS::negative.binomial()] family,
#' which [glm()] holds fixed, is not used.
#'
#' @section Arguments of the model:
#' These arguments go to the model's function, all others to the sampler:
#' `data`, `family`, `weights`, `offset`, `subset` and `na.action`
#' (evaluated in `data` first, then where the formula was made, as [glm()]
#' evaluates them), and the model's prior and storage arguments where it has
#' them: `prior`, `prior_intercept`, `prior_aux` (gaussian, negative
#' binomial), `prior_overdispersion` (negative binomial), `sparse` and `storage` (binomial). A data frame given as the
#' second argument without a name is taken as `data`, as in
#' `sgld(y ~ x, d)`; the formula may be named `formula`, as in
#' `glm(formula = y ~ x)`. [bbb()]'s own `family` names the variational family;
#' with a formula, `family` is the response's and the variational family is
#' given as `vi_family` (`"meanfield"` or `"fullrank"`).
#'
#' The priors are the models' defaults unless given: rstanarm's `stan_glm()`
#' defaults (autoscaled, with the intercept's prior on centred predictors;
#' see [prior_normal()]), the same for the model-first functions and this
#' face. [prior_summary()][prior_summary.sgld_fit] prints them.
#' @section Multilevel models:
#' A formula with lme4's random-effect terms builds [model_glmer()], the
#' multilevel model, with stan_glmer's default priors:
#' \tabular{ll}{
#'   term \tab group effects \cr
#'   `(1 | g)` \tab an intercept per level of `g` \cr
#'   `(1 + x | g)` or `(x | g)` \tab an intercept and a slope of `x` per level, correlated \cr
#'   `(x || g)` \tab the same, uncorrelated (two terms, `(1 | g)` and `(0 + x | g)`) \cr
#'   `(0 + x | g)` \tab a slope per level, no intercept \cr
#'   `(1 | a) + (1 | b)` \tab crossed groups: an effect of each \cr
#'   `(1 | a/b)` \tab `b` nested in `a`: the terms `(1 | a)` and `(1 | a:b)`
#' }
#' They are read by lme4's parser (`lme4::lFormula()`), so they mean what
#' they mean in `lme4::glmer()` and rstanarm's `stan_glmer()`. Families:
#' gaussian, binomial (0/1, a factor, or `cbind(events, nonevents)`),
#' poisson (exposure as an `offset()` term of the formula) and the negative
#' binomial (NB2 as `stan_glmer.nb()`: its `reciprocal_dispersion` a
#' parameter with an exponential(1) prior). The model's arguments are `data`, `family`,
#' `prior`, `prior_intercept`, `prior_aux` and `prior_covariance`
#' ([prior_decov()]), `offset`, `subset` and `weights` (prior weights
#' multiplying each row's log likelihood, or a binomial proportion's trials;
#' see [model_glmer()]). Every variable must be a column of `data` with
#' no missing value; a factor with many levels on the left of a bar, or a
#' grouping factor with one level, is an error. Methods: see
#' [fixef()][fixef.sgld_fit].
#' @seealso [glm()], whose `family`, `weights`, `offset`, `subset` and
#'   `na.action` these follow.
#' @name sgld_formula
#' @examples
#' d <- MASS::Pima.tr
#' set.seed(1)
#' fit <- sgld(type ~ glu + bmi, data = d, family = binomial())
#' coef(fit)
#' # the same draws as building the model first
#' m <- model_logistic(type ~ glu + bmi, data = d)
#' set.seed(1)
#' fit2 <- sgld(m)
#' identical(as.matrix(fit), as.matrix(fit2))
#' # counts with an exposure, on part of the data
#' set.seed(2)
#' d2 <- data.frame(x = rnorm(100), t = runif(100, 1, 3))
#' d2$k <- rpois(100, d2$t * exp(0.5 * d2$x))
#' fit3 <- sgld(k ~ x, data = d2, family = poisson(), offset = log(t), subset = x > -2)
#' # a multilevel model: lme4's syntax
#' if (requireNamespace("lme4", quietly = TRUE)) {
#'   set.seed(3)
#'   fit4 <- mala(Reaction ~ Days + (Days | Subject), data = lme4::sleepstudy,
#'                chains = 2, iter = 2000, lr = 0.005)
#'   VarCorr(fit4)
#' }
NULL

# The arguments the formula face hands to the model's function.
formula_model_args <- c("data", "family", "weights", "offset", "subset", "na.action",
                        "prior", "prior_intercept", "prior_aux", "prior_overdispersion", "sparse",
                        "storage", "prior_covariance")

is_formula <- function(x) inherits(x, "formula")

# sampler(formula, data, family, ...): build the model from the family and
# run `sampler` on it with the other arguments as the user wrote them.
# `call` is the sampler's match.call(), `env` the caller's frame.
formula_face <- function(sampler, call, env) {
  args <- as.list(call)[-1L]
  # glm()'s and rstanarm's name for the first argument
  if (is.null(args$model) && !is.null(args$formula)) {
    args$model <- args$formula
    args$formula <- NULL
  }
  if (is.null(args$model))
    abort("`model` is missing: give a model made by a model_*() function, or a formula ",
          "with `data` and `family`.")
  # a data frame where `lr` stands (the second argument) is `data`, as in lm(y ~ x, d)
  if (!"data" %in% names(args) && "lr" %in% names(args)) {
    lr <- eval(args$lr, env)   # evaluated once, here
    if (is.data.frame(lr)) {
      args$data <- args$lr
      args$lr <- NULL
    } else {
      args["lr"] <- list(lr)
    }
  }
  vi <- identical(sampler, bbb)
  family <- if ("family" %in% names(args)) eval(args$family, env) else stats::gaussian()
  kind <- formula_family(family)
  multilevel <- has_group_terms(eval(args$model, env))
  builder <- if (multilevel) model_glmer else switch(kind, gaussian = model_linear, binomial = model_logistic,
                    poisson = model_poisson, negbin = model_negbin)
  builder_name <- if (multilevel) "model_glmer" else switch(kind, gaussian = "model_linear", binomial = "model_logistic",
                         poisson = "model_poisson", negbin = "model_negbin")
  given <- intersect(names(args), setdiff(formula_model_args, "family"))
  accepted <- names(formals(if (multilevel) model_glmer
                            else utils::getS3method(builder_name, "formula")))
  if (multilevel && "family" %in% names(args)) given <- c(given, "family")
  foreign <- setdiff(given, accepted)
  if (length(foreign))
    abort("`", foreign[1], "` is not an argument of ", builder_name, "(), the model of `family` ",
          kind, if (multilevel) " with random-effect terms", "; its arguments are ",
          paste0("`", setdiff(accepted, c("x", "...")), "`", collapse = ", "), ".")
  model <- tryCatch(
    eval(as.call(c(list(builder, args$model), args[given])), env),
    error = function(e)
      abort(gsub("`x`", "the formula (`model`)", conditionMessage(e), fixed = TRUE)))
  run_args <- args[setdiff(names(args), c("model", formula_model_args, "vi_family"))]
  if (vi && "vi_family" %in% names(args))   # checked here, to be named as the user named it
    run_args$family <- check_choice(eval(args$vi_family, env), c("meanfield", "fullrank"),
                                    "vi_family")
  if (!vi && "vi_family" %in% names(args))
    abort("unknown argument: `vi_family` (only bbb() has a variational family).")
  fit <- eval(as.call(c(list(sampler, model), run_args)), env)
  if (!is.null(fit$call) || inherits(fit, "sgld_fit")) fit$call <- call
  fit
}

# Does the formula hold lme4's random-effect terms, (1 | g)?
has_group_terms <- function(f) inherits(f, "formula") && !is.null(lme4::findbars(f))

# The kind of model a glm() family asks for, or an error naming `family`.
formula_family <- function(family) {
  supported <- paste0("gaussian (identity link), binomial (logit), poisson (log) or the ",
                      "negative binomial (log: \"negbin\", rstanarm's neg_binomial_2() or ",
                      "MASS::negative.binomial())")
  if (is.character(family) && length(family) == 1L && !is.na(family)) {
    kind <- switch(family, gaussian = "gaussian", binomial = "binomial", poisson = "poisson",
                   negbin = , neg_binomial_2 = , negative_binomial = "negbin", NULL)
    if (is.null(kind))
      abort("`family` must be ", supported, "; not \"", family, "\".")
    return(kind)
  }
  if (is.function(family))
    family <- tryCatch(family(), error = function(e)
      abort("`family`: the function cannot be called without arguments (",
            conditionMessage(e), "); give the family object, e.g. binomial()."))
  if (!inherits(family, "family"))
    abort("`family` must be a family such as binomial(), a family function or its name; ",
          "not ", describe(family), ".")
  fam <- family$family
  kind <- if (fam %in% c("gaussian", "binomial", "poisson")) fam
          else if (fam == "neg_binomial_2" || startsWith(fam, "Negative Binomial")) "negbin"
  if (is.null(kind))
    abort("`family` must be ", supported, "; not ", fam, "().")
  link <- c(gaussian = "identity", binomial = "logit", poisson = "log", negbin = "log")[[kind]]
  if (!identical(family$link, link))
    abort("`family`: the ", fam, " family's link must be ", link, " here, not ", family$link,
          "; supported are ", supported, ".")
  kind
}
