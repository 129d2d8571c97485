# The cost of checking a file-backed model's copy by content (src/mmap.c,
# content_sum()): a 2e6 x 4 big.matrix of doubles (61 MB) and its copy
# (61 MB), both summed whole at every call that maps the model.
#   Rscript bench/file-checksum.R
library(sgld)
options(sgld.cache_dir = tempfile())
n <- 2e6
set.seed(1)
dir <- tempfile()
dir.create(dir)
bm <- bigmemory::filebacked.big.matrix(n, 4, type = "double", backingfile = "b.bin",
                                       descriptorfile = "b.desc", backingpath = dir,
                                       dimnames = list(NULL, c("i", "a", "b", "y")))
bm[, 1] <- 1
bm[, 2] <- rnorm(n)
bm[, 3] <- rnorm(n)
bm[, 4] <- rbinom(n, 1, 0.5)
bigmemory::flush(bm)
first <- system.time(m <- model_logistic(bm, y = "y"))
found <- replicate(5, system.time(model_logistic(bm, y = "y")))
check <- replicate(5, system.time(.Call(sgld:::C_sgld_model_info, m)))
cpu <- function(t) t["user.self", ] + t["sys.self", ]
cat(sprintf("source %.0f MB, copy %.0f MB\n", file.size(file.path(dir, "b.bin")) / 2^20,
            file.size(m$file$path) / 2^20))
cat(sprintf("first build: %.2f s elapsed\n", first[["elapsed"]]))
cat(sprintf("built again (copy found): %s s elapsed, %s s CPU\n",
            paste(format(found["elapsed", ], digits = 2), collapse = " "),
            paste(format(cpu(found), digits = 2), collapse = " ")))
cat(sprintf("check at a call: %s s elapsed, %s s CPU\n",
            paste(format(check["elapsed", ], digits = 2), collapse = " "),
            paste(format(cpu(check), digits = 2), collapse = " ")))
