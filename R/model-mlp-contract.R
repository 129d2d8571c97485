# The network's answers to the model contract (R/model.R).

# permutations of the hidden units: several modes by construction
model_capabilities.sgld_model_mlp <- function(model) {
  modifyList(NextMethod(), list(laplace = FALSE))
}

model_predict.sgld_model_mlp <- function(model, object, newdata, type, draws, ndraws, threads) {
  predict_mlp(object, newdata, type, draws)
}

model_posterior_predict.sgld_model_mlp <- function(model, object, newdata, ndraws) {
  out <- posterior_predict_mlp(object, newdata)
  if (is.null(ndraws)) return(out)
  check_count(ndraws, "ndraws", lower = 1, upper = nrow(out))
  out[sort(sample.int(nrow(out), ndraws)), , drop = FALSE]
}
