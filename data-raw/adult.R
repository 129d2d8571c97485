# UCI Adult ("Census Income") in the shape of LIBSVM's a9a: the 14 attributes
# as factors whose levels are exactly a9a's 123 binary features, the income
# label and the original train/test split.
# Run from the package root: Rscript data-raw/adult.R
#
# Sources, used at build time only (neither becomes a dependency of sgld):
# * arules::AdultUCI - the raw attributes of UCI adult.data (32561 rows) followed
#   by adult.test (16281 rows). Its `income` is NA on every test row.
# * fairmodels::adult_test - UCI adult.test with its labels ("<=50K." / ">50K.").
#   Only its label column is used, after checking that its 14 attributes agree
#   with AdultUCI's test rows value for value.
# Each is read from the installed package if there is one, otherwise from the
# package's source tarball on CRAN (data/ only; nothing is installed). Current
# arules needs a newer R than some machines have, so the tarball route ignores
# the R-version filter of available.packages(); only the data files are read.

repos <- "https://cloud.r-project.org"

# Load data set `name` of package `pkg` into a list.
pkg_data <- function(pkg, name) {
  e <- new.env()
  if (requireNamespace(pkg, quietly = TRUE)) {
    utils::data(list = name, package = pkg, envir = e)
    message("read ", name, " from installed ", pkg, " ",
            utils::packageVersion(pkg))
  } else {
    dir <- tempfile("adult-src-")
    dir.create(dir)
    avail <- utils::available.packages(repos = repos, type = "source",
                                       filters = "duplicates")
    tgz <- utils::download.packages(pkg, destdir = dir, available = avail,
                                    repos = repos, type = "source",
                                    quiet = TRUE)[1, 2]
    utils::untar(tgz, exdir = dir)
    f <- list.files(file.path(dir, pkg, "data"), full.names = TRUE)
    f <- f[sub("\\.[^.]*$", "", basename(f)) == name]
    if (length(f) != 1L) stop("no data file ", name, " in ", basename(tgz))
    load(f, envir = e)
    message("read ", name, " from ", basename(tgz))
  }
  get(name, envir = e)
}

raw <- pkg_data("arules", "AdultUCI")
lab <- pkg_data("fairmodels", "adult_test")

n_train <- 32561L
n_test <- 16281L
stopifnot(nrow(raw) == n_train + n_test)

# a9a's attribute order, which is also the column order of adult.data.
attrs <- c("age", "workclass", "fnlwgt", "education", "education-num",
           "marital-status", "occupation", "relationship", "race", "sex",
           "capital-gain", "capital-loss", "hours-per-week", "native-country")
stopifnot(identical(names(raw)[1:14], attrs))
raw <- raw[c(attrs, "income")]
# Column names of the shipped data frame: the same, with "_" for "-".
names(raw) <- c(gsub("-", "_", attrs), "income")
num <- c("age", "fnlwgt", "education_num", "capital_gain", "capital_loss",
         "hours_per_week")
cat_vars <- setdiff(names(raw)[1:14], num)
for (v in num) stopifnot(is.numeric(raw[[v]]), !anyNA(raw[[v]]),
                         all(raw[[v]] == round(raw[[v]])))

# --- train rows first --------------------------------------------------------
# AdultUCI labels exactly the first 32561 rows (the size of adult.data) and
# leaves the 16281 rows of adult.test unlabelled; its first row is the first row
# of adult.data and its row 32562 the first row of adult.test.
is_train <- seq_len(nrow(raw)) <= n_train
stopifnot(!anyNA(raw$income[is_train]), all(is.na(raw$income[!is_train])),
          raw$age[1] == 39, raw$fnlwgt[1] == 77516,
          raw$age[n_train + 1] == 25, raw$fnlwgt[n_train + 1] == 226802)
message("AdultUCI income: ", sum(is.na(raw$income)), " NA, all on test rows")

# --- test labels ---------------------------------------------------------------
# fairmodels::adult_test is adult.test in file order, missing values coded
# "Unknown". Require that all 14 attributes match AdultUCI's test rows.
stopifnot(nrow(lab) == n_test, ncol(lab) == 15L)
tst <- raw[!is_train, ]
for (j in 1:14) {
  a <- tst[[j]]
  b <- lab[[j + 1L]]
  if (is.factor(b)) {
    b <- trimws(as.character(b))
    b[b %in% c("Unknown", "?")] <- NA
    a <- as.character(a)
  }
  same <- (is.na(a) & is.na(b)) | (!is.na(a) & !is.na(b) & a == b)
  if (!all(same)) stop("test row mismatch in ", names(raw)[j], " (",
                       sum(!same), " rows)")
}
tl <- sub("\\.$", "", trimws(as.character(lab[[1]])))
n_dot <- sum(grepl("\\.$", trimws(as.character(lab[[1]]))))
stopifnot(all(tl %in% c("<=50K", ">50K")))
message("test labels: ", n_dot, " of ", n_test, " had a trailing '.', removed")

income <- ifelse(raw$income %in% "large", ">50K", "<=50K")
income[!is_train] <- tl
income <- factor(income, levels = c("<=50K", ">50K"))

# --- binning the continuous attributes ------------------------------------------
# Equal-frequency bins computed on the training rows. All six attributes are
# whole numbers with many ties, so plain quintiles can coincide (education-num:
# 9, 9, 10, 13; hours-per-week: 35, 40, 40, 48). The rule instead: with the
# distinct training values v_1 < ... < v_m and their cumulative training shares
# P_1 < ... < P_m, cut j (j = 1, ..., k-1) is the v_i whose P_i is nearest to
# j/k, taken in turn, each strictly after the previous cut and leaving room for
# the cuts still to come (so there are always exactly k non-empty bins; ties in
# distance go to the lower value). Bin 1 holds values <= c_1, bin b holds
# c_{b-1} < x <= c_b, the last bin values > c_{k-1}; test rows use the same cuts.
# k = 5 for age, fnlwgt, education-num and hours-per-week. For capital-gain and
# capital-loss k = 2, where the rule gives zero versus positive (over 90% of the
# training values are 0, so finer quantile bins would all collapse onto 0).
freq_cuts <- function(x, k) {
  tab <- table(x)
  v <- as.numeric(names(tab))
  p <- cumsum(as.numeric(tab)) / sum(tab)
  m <- length(v)
  stopifnot(m >= k)
  cuts <- numeric(k - 1L)
  last <- 0L
  for (j in seq_len(k - 1L)) {
    ok <- seq.int(last + 1L, m - 1L - (k - 1L - j))
    i <- ok[which.min(abs(p[ok] - j / k))]
    cuts[j] <- v[i]
    last <- i
  }
  cuts
}

# Levels name the closed whole-number interval of each bin: "[lo,hi]", where the
# outer ends are the smallest and largest value over all 48842 rows.
bin <- function(x, cuts) {
  lo <- c(min(x), cuts + 1)
  hi <- c(cuts, max(x))
  stopifnot(all(lo <= hi))
  f <- findInterval(x, cuts, left.open = TRUE) + 1L
  factor(sprintf("[%.0f,%.0f]", lo, hi)[f],
         levels = sprintf("[%.0f,%.0f]", lo, hi))
}

k_bins <- c(age = 5, fnlwgt = 5, education_num = 5, capital_gain = 2,
            capital_loss = 2, hours_per_week = 5)
adult <- raw[1:14]
for (v in num) {
  cuts <- freq_cuts(raw[[v]][is_train], k_bins[[v]])
  adult[[v]] <- bin(raw[[v]], cuts)
  message(sprintf("%-15s cuts %-30s levels %s", v, paste(cuts, collapse = ", "),
                  paste(levels(adult[[v]]), collapse = " ")))
}
stopifnot(all(levels(adult$capital_gain)[1] == "[0,0]",
              levels(adult$capital_loss)[1] == "[0,0]"))

# --- categorical attributes ----------------------------------------------------
# Plain (unordered) factors, NA where the value is missing ("?" in the UCI
# files). Levels keep AdultUCI's (alphabetical) order, except education, whose
# levels follow education-num (its one-to-one numeric code).
for (v in cat_vars) adult[[v]] <- factor(as.character(raw[[v]]),
                                         levels = levels(raw[[v]]))
code <- tapply(raw$education_num, as.character(raw$education),
               function(z) z[1])
stopifnot(all(tapply(raw$education_num, as.character(raw$education),
                     function(z) length(unique(z))) == 1L))
adult$education <- factor(as.character(raw$education),
                          levels = names(sort(code)))

adult <- droplevels(adult)
adult$income <- income
adult$set <- factor(ifelse(is_train, "train", "test"),
                    levels = c("train", "test"))
rownames(adult) <- NULL

# --- checks ----------------------------------------------------------------------
a9a <- c(age = 5, workclass = 8, fnlwgt = 5, education = 16, education_num = 5,
         marital_status = 7, occupation = 14, relationship = 6, race = 5,
         sex = 2, capital_gain = 2, capital_loss = 2, hours_per_week = 5,
         native_country = 41)
nl <- vapply(adult[1:14], nlevels, 1L)
stopifnot(identical(names(nl), names(a9a)), all(nl == a9a), sum(nl) == 123L,
          dim(adult) == c(48842L, 16L),
          sum(adult$set == "train") == n_train,
          sum(adult$set == "test") == n_test, !anyNA(adult$income))
for (v in num) stopifnot(!anyNA(adult[[v]]))
message("levels per attribute sum to ", sum(nl))
message("missing: ", paste(sprintf("%s %d", cat_vars,
                                   colSums(is.na(adult[cat_vars])))[
                             colSums(is.na(adult[cat_vars])) > 0],
                           collapse = ", "))
message(">50K share: train ", round(mean(adult$income[is_train] == ">50K"), 4),
        ", test ", round(mean(adult$income[!is_train] == ">50K"), 4))

save(adult, file = "data/adult.rda", compress = "xz", version = 2)
message("wrote data/adult.rda, ", file.size("data/adult.rda"), " bytes")
