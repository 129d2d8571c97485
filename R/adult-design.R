# The 14 attributes of the Adult data in a9a's order, as columns of `adult`.
adult_attributes <- c("age", "workclass", "fnlwgt", "education", "education_num",
                      "marital_status", "occupation", "relationship", "race",
                      "sex", "capital_gain", "capital_loss", "hours_per_week",
                      "native_country")

#' The a9a design matrix and response of the Adult data
#'
#' `adult_design()` turns the factor columns of [adult] into the binary
#' features of LIBSVM's a9a: one indicator column per level of each of the 14
#' attributes, attributes in a9a's order (age, workclass, fnlwgt, education,
#' education-num, marital-status, occupation, relationship, race, sex,
#' capital-gain, capital-loss, hours-per-week, native-country) and levels in
#' factor order within each. A row has a 1 in the column of its level of each
#' attribute and 0 elsewhere; a missing value (`NA`) leaves the whole group of
#' that attribute at 0, as in a9a. `adult_response()` codes `income` as 1 for
#' `">50K"` and 0 for `"<=50K"`.
#'
#' The columns come from the levels of the factors in `data`, so the full
#' [adult] data and any subset of its rows give the same 123 columns
#' (subsetting keeps the levels; [droplevels()] would remove columns). There is
#' no intercept column.
#'
#' @param data A data frame with the columns of [adult]: for `adult_design()`
#'   the 14 attribute columns as factors, for `adult_response()` the column
#'   `income`. Other columns are ignored.
#' @return `adult_design()`: a numeric (double) matrix of 0s and 1s with
#'   `nrow(data)` rows and one column per factor level (123 for [adult]), named
#'   `"attribute=level"`, for example `"education=Bachelors"` or
#'   `"age=[17,25]"`. Row sums are 14 less the number of missing attributes.
#'   `adult_response()`: a numeric vector of 0s and 1s (`NA` where `income` is
#'   missing) of length `nrow(data)`.
#' @examples
#' X <- adult_design(adult)
#' dim(X)
#' head(colnames(X))
#' table(rowSums(X))
#' y <- adult_response(adult)
#' mean(y[adult$set == "train"])
#' @export
adult_design <- function(data) {
  if (!is.data.frame(data))
    abort("`data` must be a data frame such as `adult`, not ", describe(data), ".")
  miss <- setdiff(adult_attributes, names(data))
  if (length(miss))
    abort("`data` lacks the column", if (length(miss) > 1L) "s", " ",
          paste0("`", miss, "`", collapse = ", "), ".")
  not_factor <- !vapply(data[adult_attributes], is.factor, logical(1))
  if (any(not_factor))
    abort("the attribute columns of `data` must be factors; ",
          paste0("`", adult_attributes[not_factor], "`", collapse = ", "),
          if (sum(not_factor) > 1L) " are" else " is", " not.")
  lev <- lapply(data[adult_attributes], levels)
  width <- lengths(lev)
  offset <- cumsum(c(0L, width[-length(width)]))
  n <- nrow(data)
  X <- matrix(0, nrow = n, ncol = sum(width))
  for (j in seq_along(adult_attributes)) {
    code <- as.integer(data[[adult_attributes[j]]])
    rows <- which(!is.na(code))
    X[cbind(rows, offset[j] + code[rows])] <- 1
  }
  colnames(X) <- paste0(rep(adult_attributes, width), "=", unlist(lev, use.names = FALSE))
  X
}

#' @rdname adult_design
#' @export
adult_response <- function(data) {
  if (!is.data.frame(data) || is.null(data[["income"]]))
    abort("`data` must be a data frame with a column `income`, such as `adult`.")
  income <- as.character(data[["income"]])
  bad <- !is.na(income) & !income %in% c("<=50K", ">50K")
  if (any(bad))
    abort("`income` must hold \"<=50K\" or \">50K\", not \"", income[bad][1], "\".")
  as.numeric(income == ">50K")
}
