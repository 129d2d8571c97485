# Which methods of a fit each model answers: every model class declares it
# in its own file (model_methods.<class>()), and everything else reads that
# declaration: the refusal of a method (need_method(): the message is the
# declared reason), the table of ?sgld_fit_methods (method_table_rd(), through
# roxygen's @eval) and the table of ARCHITECTURE.md (tools/method-table.R
# writes method_table_markdown(); tests/testthat/test-method-grid.R checks
# that the file holds what it would write).

# The methods of the table: the key each model declares, and the label of
# the table's column.
fit_methods <- c(
  predict = "predict()",
  predict_interval = "predict(interval = )",
  posterior_predict = "posterior_predict()",
  predictive_interval = "predictive_interval()",
  pp_check = "pp_check()",
  posterior_epred = "posterior_epred(), posterior_linpred()",
  log_lik = "log_lik(), loo(), waic()",
  fitted = "fitted(), residuals()",
  family = "family()",
  posterior_interval = "posterior_interval(), confint()"
)

# The name each method gives itself in its messages (its `what`), to its key.
method_of_message <- c(
  "predict()" = "predict", "predict() with `interval` or `se.fit`" = "predict_interval",
  "posterior_predict()" = "posterior_predict", "predictive_interval()" = "predictive_interval",
  "pp_check()" = "pp_check", "posterior_epred()" = "posterior_epred",
  "posterior_linpred()" = "posterior_epred", "log_lik()" = "log_lik",
  "fitted()" = "fitted", "residuals()" = "fitted", "family()" = "family",
  "posterior_interval()" = "posterior_interval"
)

# A named list over names(fit_methods): TRUE where the model answers the
# method, else the reason it cannot, one clause that completes
# "<method> is not available for <model class>: ...".
model_methods <- function(model) UseMethod("model_methods")

# A regression (R/model.R: capabilities "regression") answers every method;
# any other model with a C table answers log_lik() (each row's log likelihood
# at each draw, model_loglik_rows()) and the intervals of its parameters.
model_methods.default <- function(model) {
  if (isTRUE(model_capabilities(model)$regression))
    return(stats::setNames(as.list(rep(TRUE, length(fit_methods))), names(fit_methods)))
  no_response <- "the model has no response given covariates to predict"
  list(predict = no_response, predict_interval = no_response,
       posterior_predict = no_response, predictive_interval = no_response,
       pp_check = no_response,
       posterior_epred = no_response, log_lik = TRUE, fitted = no_response,
       family = "it is not a regression with a family of responses",
       posterior_interval = TRUE)
}

# Stops with the model's declared reason when it does not answer `what`
# (a method's name as its messages give it). A name outside the table keeps
# the rule of the regressions.
need_method <- function(object, what) {
  model <- object$model
  key <- method_of_message[what]
  answer <- if (is.na(key)) isTRUE(model_capabilities(model)$regression)
            else model_methods(model)[[key]]
  if (isTRUE(answer)) return(invisible(object))
  if (is.na(key))
    abort(what, " is available for fits of regression models (model_linear(), ",
          "model_logistic(), model_poisson(), model_negbin()), not ", class(model)[1], ".")
  abort(what, " is not available for ", class(model)[1], ": ", answer, ".")
}

# ---- the table ----------------------------------------------------------------

# Beyond the regressions: what the pages of the methods say of the other
# models (their own pages give the details).
#' @section Other models:
#' These methods are not the regressions' alone: networks ([model_mlp()])
#' answer `posterior_predict()`, `log_lik()` (so `loo()` and `waic()`),
#' for regression and two classes `posterior_epred()` and
#' `posterior_linpred()` (the output layer's value), for regression
#' `predictive_interval()`; stochastic volatility
#' ([model_sv()]) `posterior_predict()`, `predictive_interval()` and
#' `log_lik()` (per day given the path); the mixture, ICA and
#' [model_custom()] `log_lik()`; every model `posterior_interval()`. A
#' method a model does not answer stops with the reason the table of
#' [sgld_fit_methods] gives.
#' @name posterior_predict.sgld_fit
#' @rdname posterior_predict.sgld_fit
NULL

#' @section Other models:
#' For networks ([model_mlp()]) `interval = "confidence"` and
#' `"prediction"` (regression and two classes) are quantiles over the draws
#' of the network's output and of new observations drawn from it; see the
#' table of [sgld_fit_methods] for every model.
#' @name predict.sgld_fit
#' @rdname predict.sgld_fit
NULL

# The table in ?sgld_fit_methods, rendered from the declarations by roxygen.
#' @eval method_table_rd()
#' @name sgld_fit_methods
#' @rdname sgld_fit_methods
NULL

# One small model of each kind, as a user would build it, for the table's rows.
method_table_models <- function() {
  d <- data.frame(y = c(1.2, 0.3, 2.1, 1.7, 0.4, 2.8), x = c(0.5, -0.2, 1.1, 0.9, -0.8, 1.6),
                  k = c(1, 0, 3, 2, 0, 4), b = c(1, 0, 1, 1, 0, 0),
                  g = factor(c("a", "b", "c", "a", "b", "c")))
  m <- cbind(x1 = c(0.3, -1.2, 0.8, 1.5, -0.4, 0.1), x2 = c(1.1, 0.2, -0.7, 0.4, -1.3, 0.9))
  lin <- function(w, batch) sum(stats::dnorm(batch[, 1], w[1], log = TRUE))
  list(
    "model_linear()" = model_linear(y ~ x, data = d),
    "model_logistic()" = model_logistic(b ~ x, data = d),
    "model_poisson()" = model_poisson(k ~ x, data = d),
    "model_negbin()" = model_negbin(k ~ x, data = d),
    "model_mixture()" = model_mixture(d$x),
    "model_ica()" = model_ica(m),
    "model_sv()" = model_sv(c(d$y, 0.6, -0.9, 1.4, -0.2) - 1),
    "model_mlp(), regression" = model_mlp(y ~ x, data = d, hidden = 2),
    "model_mlp(), two classes" = model_mlp(factor(b) ~ x, data = d, hidden = 2),
    "model_mlp(), three or more classes" = model_mlp(g ~ x, data = d, hidden = 2),
    "model_glmer()" = model_glmer(y ~ x + (1 | g), data = d),
    "model_custom()" = model_custom(matrix(d$x), loglik = lin, logprior = function(w) 0,
                                    grad_loglik = function(w, batch) 0,
                                    grad_logprior = function(w) 0, init = 0, names = "m")
  )
}

# rows: models; columns: methods; TRUE or the reason
method_table <- function(models = method_table_models()) {
  lapply(models, function(m) model_methods(m)[names(fit_methods)])
}

# The table with its cells numbered: "yes", or "no (k)" where k numbers the
# distinct reasons; with the reasons in that order.
method_table_cells <- function(table = method_table()) {
  reasons <- unique(unlist(lapply(table, function(r) Filter(is.character, r))))
  cells <- t(vapply(table, function(r) vapply(r, function(a)
    if (isTRUE(a)) "yes" else sprintf("no (%d)", match(a, reasons)), ""), character(length(fit_methods))))
  dimnames(cells) <- list(names(table), unname(fit_methods))
  list(cells = cells, reasons = reasons)
}

# For ARCHITECTURE.md: a markdown table, methods as rows (there are fewer
# models than a page's width allows as columns), then the numbered reasons.
method_table_markdown <- function(table = method_table()) {
  tc <- method_table_cells(table)
  x <- t(tc$cells)
  row <- function(v) paste0("| ", paste(v, collapse = " | "), " |")
  c(row(c("method", colnames(x))),
    row(rep("---", ncol(x) + 1L)),
    vapply(seq_len(nrow(x)), function(i) row(c(rownames(x)[i], x[i, ])), ""),
    "",
    sprintf("%d. %s", seq_along(tc$reasons), tc$reasons))
}

# For ?sgld_fit_methods (roxygen @eval): a section with one item per model.
method_table_rd <- function(table = method_table()) {
  esc <- function(s) gsub("([%{}])", "\\\\\\1", s)
  items <- vapply(names(table), function(m) {
    r <- table[[m]]
    yes <- unname(fit_methods[vapply(r, isTRUE, TRUE)])
    no <- unlist(Filter(is.character, r))
    # the methods refused for one reason together, then the reason
    refused <- vapply(unique(no), function(why)
      paste0(paste(fit_methods[names(no)[no == why]], collapse = ", "), ": ", why), "")
    paste0("  \\item{", esc(m), "}{", esc(paste(yes, collapse = ", ")),
           if (length(no)) paste0(". Not ", esc(paste(refused, collapse = ". Not "))), ".}")
  }, "")
  c("@section Which model answers which method:",
    "Generated from each model's declaration (its `model_methods()`); a method a model",
    "does not answer stops with the reason given here.",
    "\\describe{", items, "}")
}
