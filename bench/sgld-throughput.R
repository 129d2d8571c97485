# SGLD throughput on the handout data (n = 10^4, d = 3): 10^6 iterations at
# batch size 10, every draw kept, repeated; prints iterations per second.
#   engine: the iterations alone (fit$sampling_time, timed in the C engine)
#   call:   the whole sgld() call, including checks, allocating the draws (R
#           may collect its garbage then) and building the fit
# Run with `make bench` or `Rscript bench/sgld-throughput.R [reps]`.
suppressPackageStartupMessages(library(sgld))

args <- commandArgs(trailingOnly = TRUE)
reps <- if (length(args)) as.integer(args[1]) else 7L
iter <- 1e6

m <- model_linear(y ~ x, data = handout, prior = prior_nig())
run <- function(batch_size, thin) {
  set.seed(1)
  call <- system.time(fit <- sgld(m, lr = 1e-7, batch_size = batch_size, iter = iter,
                                  burnin = 0, thin = thin))[["elapsed"]]
  c(engine = fit$sampling_time, call = call)
}

cat(sprintf("sgld throughput, %s, R %s, %s\n", Sys.info()[["nodename"]],
            getRversion(), format(Sys.time(), "%Y-%m-%d %H:%M")))
cat(sprintf("%d repetitions of %g iterations; median [min, max] in million iterations/s\n\n",
            reps, iter))
for (cfg in list(c(10, 1), c(10, 100), c(100, 1))) {
  t <- replicate(reps, run(cfg[1], cfg[2]))
  rate <- iter / t / 1e6
  cat(sprintf("batch %3d, thin %3d: engine %5.2f [%5.2f, %5.2f]   call %5.2f [%5.2f, %5.2f]\n",
              cfg[1], cfg[2],
              median(rate["engine", ]), min(rate["engine", ]), max(rate["engine", ]),
              median(rate["call", ]), min(rate["call", ]), max(rate["call", ])))
}

# The same arithmetic as a bare C loop (bench/floor.c), for how close the
# engine comes to the machine; needs gcc and R's headers.
floor_script <- file.path("bench", "floor.sh")
if (file.exists(floor_script) && nzchar(Sys.which("gcc"))) {
  for (b in c(10, 100)) {
    rates <- as.numeric(system2("bash", c(floor_script, format(iter, scientific = FALSE), b, reps),
                                stdout = TRUE))
    cat(sprintf("C floor, batch %3d:    %5.2f [%5.2f, %5.2f]  (every draw kept, like thin 1)\n",
                b, median(rates), min(rates), max(rates)))
  }
}
