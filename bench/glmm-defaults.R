# sgld(model) at its defaults on the multilevel references, seeds 1-3
# (bench/glmm-defaults.md). Rscript bench/glmm-defaults.R [data set ...]
suppressMessages(library(sgld))
source("tests/testthat/helper-glmm-auto.R")
refs <- readRDS("inst/extdata/glmm-reference.rds")
which <- commandArgs(TRUE)
if (!length(which)) which <- intersect(names(glmm_reference_cases), names(refs))
seeds <- as.integer(Sys.getenv("SEEDS", "1,2,3") |> strsplit(",") |> unlist())
for (nm in which) {
  case <- glmm_reference_cases[[nm]]
  ref <- refs[[nm]]
  m <- glmm_reference_model(case$formula, case$data(ref), case$family, ref)
  for (seed in seeds) cat(glmm_default_line(nm, m, ref, seed))
}
cat(format(Sys.time(), tz = "UTC", usetz = TRUE), "load", readLines("/proc/loadavg"), "\n")
