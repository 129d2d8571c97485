#' The UCI Adult census data in the encoding of LIBSVM's a9a
#'
#' The Adult ("Census Income") data of the UCI repository, 48842 people from
#' the 1994 US census with 14 attributes and whether their yearly income
#' exceeds 50,000 dollars, in the form behind LIBSVM's `a9a`, the logistic
#' regression data of Welling and Teh (2011, Figure 3). a9a describes each
#' person by 123 binary features: each categorical attribute with \eqn{m}{m}
#' categories becomes \eqn{m}{m} indicators, and each continuous attribute is first
#' cut into a few bins. Here every attribute is a factor whose levels are
#' exactly those features: age 5, workclass 8, fnlwgt 5, education 16,
#' education-num 5, marital-status 7, occupation 14, relationship 6, race 5,
#' sex 2, capital-gain 2, capital-loss 2, hours-per-week 5 and native-country
#' 41 levels, 123 in all. [adult_design()] makes the 0/1 matrix of a9a from it
#' and [adult_response()] the 0/1 response.
#'
#' @format A data frame with 48842 rows (32561 training rows, then 16281 test
#'   rows) and 16 factor columns. The first 14 are the attributes in a9a's
#'   order, with `_` in place of the `-` of the UCI names:
#'   \describe{
#'     \item{`age`, `fnlwgt`, `education_num`, `hours_per_week`}{binned into 5
#'       levels each; a level names the whole-number interval of its bin, for
#'       example `"[17,25]"` for ages 17 to 25.}
#'     \item{`capital_gain`, `capital_loss`}{2 levels each, `"[0,0]"` and the
#'       positive values, e.g. `"[1,99999]"`.}
#'     \item{`workclass`, `education`, `marital_status`, `occupation`,
#'       `relationship`, `race`, `sex`, `native_country`}{the UCI categories;
#'       `NA` where the UCI files have `"?"` (workclass 2799, occupation 2809,
#'       native_country 857 rows). `education` is ordered from `"Preschool"`
#'       to `"Doctorate"` by its numeric code education-num; the others are in
#'       alphabetical order.}
#'     \item{`income`}{the label, levels `"<=50K"` and `">50K"`; no `NA`. About
#'       24% of the people (24.1% of the training and 23.6% of the test rows)
#'       earn more than 50K.}
#'     \item{`set`}{`"train"` for the rows of the UCI file `adult.data` (a9a),
#'       `"test"` for those of `adult.test` (a9a.t), in the files' order.}
#'   }
#'
#' @details
#' Made by `data-raw/adult.R`. The continuous attributes are cut into
#' equal-frequency bins computed on the training rows only and applied
#' unchanged to the test rows. All six take whole-number values with many ties,
#' so plain quintiles can coincide; instead, for \eqn{k}{k} bins, the \eqn{j}{j}-th
#' cut is the distinct training value whose cumulative share of training rows
#' is nearest to \eqn{j/k}{j/k}, chosen in turn so that every bin is non-empty. A
#' bin holds the values above the previous cut up to and including its own
#' cut. With \eqn{k = 5}{k = 5} this gives the cuts 25, 33, 41, 50 (age), 106648,
#' 158656, 196338, 259873 (fnlwgt), 8, 9, 10, 12 (education-num) and 35, 39, 40,
#' 48 (hours-per-week). Capital gain and loss are 0 for over 90% of the rows,
#' so they get \eqn{k = 2}{k = 2}, where the rule separates zero from positive values.
#'
#' Differences from LIBSVM's a9a files:
#' * The bin cut points are reconstructed by the rule above. LIBSVM states only
#'   that the continuous attributes were discretised into quantiles, so some
#'   people fall into a neighbouring bin compared with a9a. The number of
#'   features and their meaning are the same.
#' * Within an attribute the levels, hence the columns of [adult_design()], may
#'   come in another order than a9a's feature numbers.
#' * A missing category is `NA` here; [adult_design()] turns it into a group of
#'   zeros, as a9a has it.
#' * a9a codes the label as -1 and +1; [adult_response()] gives 0 and 1
#'   (`2 * adult_response(adult) - 1` gives -1 and +1).
#' * The row counts agree with a9a (32561) and a9a.t (16281). The one person
#'   from the Netherlands is a training row, so the column
#'   `"native_country=Holand-Netherlands"` is zero on every test row; the design
#'   of the test rows still has all 123 columns.
#' * Welling and Teh used the 32561 a9a rows only, with random 80/20 splits;
#'   `set` keeps the original split for other uses.
#'
#' The attributes come from `arules::AdultUCI`, whose `income` is missing on
#' all 16281 test rows; the test labels were taken from the labels of
#' `adult.test` (as shipped in `fairmodels::adult_test`, after checking that
#' its 14 attributes agree with AdultUCI's test rows value for value), with the
#' trailing `"."` of that file removed.
#'
#' @source UCI Machine Learning Repository, Adult data set: B. Becker and
#'   R. Kohavi (1996), Adult, \doi{10.24432/C5XW20}; taken from the R package
#'   arules (`AdultUCI`), with the test labels from the R package fairmodels
#'   (`adult_test`). The a9a encoding is that of the a9a files in the LIBSVM
#'   data collection (C.-C. Chang and C.-J. Lin).
#' @references Welling, M. and Teh, Y. W. (2011). Bayesian learning via
#'   stochastic gradient Langevin dynamics. *Proceedings of the 28th
#'   International Conference on Machine Learning*, 681--688.
#' @examples
#' X <- sgld::adult_design(adult)   # 48842 x 123, a9a's binary features
#' y <- sgld::adult_response(adult) # 1 for income >50K
#' dim(X)
#' table(adult$set, adult$income)
#' \donttest{
#' # plain logistic regression on the training rows, accuracy on the test rows
#' train <- adult$set == "train"
#' fit <- glm.fit(cbind(1, X[train, ]), y[train], family = binomial())
#' b <- ifelse(is.na(fit$coefficients), 0, fit$coefficients)
#' mean((cbind(1, X[!train, ]) %*% b > 0) == y[!train])
#' }
"adult"
