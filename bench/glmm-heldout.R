# The held-out multilevel data sets (not used while designing R/auto-glmm.R):
#  penicillin: lme4::Penicillin, diameter ~ 1 + (1 | plate) + (1 | sample),
#    crossed (24 plates x 6 samples, 144 rows), gaussian;
#  bacteria: MASS::bacteria, y ~ trt + late + (1 | ID), binomial (50 children,
#    220 rows; late = week > 2), held out from the exact moves' design;
#  crossed_poisson: simulated, y ~ x + (1 | a) + (1 | b), 30 x 10 crossed
#    levels, 300 rows (data-raw/glmm-reference.R; seed fixed before any run),
#    two terms, so the default call makes the exact moves.
# sgld(model) at its defaults, seeds 1-3, against stan_glmer's NUTS
# (bench/glmm-heldout-reference.rds from data-raw/glmm-reference.R). Results
# in bench/glmm-defaults.md.
#   Rscript bench/glmm-heldout.R [penicillin] [bacteria] [crossed_poisson]
suppressMessages(library(sgld))
source("tests/testthat/helper-glmm-auto.R")
refs <- readRDS("bench/glmm-heldout-reference.rds")
bacteria <- MASS::bacteria
cases <- list(
  penicillin = list(formula = diameter ~ 1 + (1 | plate) + (1 | sample), family = "gaussian",
                    data = lme4::Penicillin),
  bacteria = list(formula = y ~ trt + late + (1 | ID), family = "binomial",
                  data = data.frame(y = as.integer(bacteria$y == "y"), trt = bacteria$trt,
                                    late = as.integer(bacteria$week > 2), ID = bacteria$ID)),
  crossed_poisson = list(formula = y ~ x + (1 | a) + (1 | b), family = "poisson",
                         data = refs$crossed_poisson$data))
seeds <- as.integer(Sys.getenv("SEEDS", "1,2,3") |> strsplit(",") |> unlist())
which <- commandArgs(TRUE)
if (!length(which)) which <- names(cases)
for (nm in which) {
  case <- cases[[nm]]
  ref <- refs[[nm]]
  if (is.null(ref)) {
    cat(nm, ": no stored reference (data-raw/glmm-reference.R makes it)\n")
    next
  }
  m <- glmm_reference_model(case$formula, case$data, case$family, ref)
  for (seed in seeds) cat(glmm_default_line(nm, m, ref, seed))
}
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load", readLines("/proc/loadavg"), "\n")
