# Keng's (2023) mixture runs on many draws of the data: does the batch-100
# chain stay in one mode while batches 1 and 10 move between the modes?
#
# For each draw of 100 points (sigma_x = 1.6, fitted with sigma_x^2 = 2, as
# Keng did), the three runs of vignette("welling-teh")'s `keng` chunk: SGLD
# for 10^6 updates from (1, 1), the step decaying over the first 10^4 N / m
# updates and held (Keng's schedule), every 100th draw kept. Moves between
# the modes and the share of draws nearer each mode are counted by the
# vignette's own functions (read from its `modes` chunk), against the exact
# mass from a grid. Draws whose posterior has no two clear modes are listed
# and left out of the tally.
#
# Run from the package root:  Rscript bench/keng-mixture.R [draws]
# (default 20 draws; about 20 s per draw on one core). Prints markdown.
suppressPackageStartupMessages(library(sgld))
args <- commandArgs(trailingOnly = TRUE)
n_draws <- if (length(args)) as.integer(args[1]) else 20L
started <- Sys.time()
load_start <- readLines("/proc/loadavg")

# the vignette's own functions (the mode finding and counting of its `modes`
# chunk, Keng's schedule of its `keng` chunk), so that both do the same
rmd <- readLines("vignettes/welling-teh.Rmd")
for (chunk in c("modes", "keng")) {
  first <- grep(sprintf("^```\\{r %s[ ,}]", chunk), rmd)
  last <- first + which(rmd[-seq_len(first)] == "```")[1]
  code <- parse(text = rmd[(first + 1):(last - 1)])
  is_definition <- vapply(code, function(e) is.call(e) && identical(e[[1]], as.name("<-")) &&
                            is.call(e[[3]]) && identical(e[[3]][[1]], as.name("function")), NA)
  for (e in code[is_definition]) eval(e)
}
batches <- c(1, 10, 100)
sum_of_steps <- sapply(batches, function(b) sum(lr_values(keng_lr(b), 1:1e6)))

rows <- list()
skipped <- integer()
for (s in seq_len(n_draws)) {
  set.seed(s)
  x <- mixture_data(100, sigma2_x = 1.6^2)
  m <- model_mixture(x)
  g <- grid_posterior(m, seq(-2, 3, length.out = 101), seq(-4, 4, length.out = 161))
  centres <- find_modes(m, g)
  if (nrow(centres) != 2 || sqrt(sum(diff(centres)^2)) < 1) {
    skipped <- c(skipped, s)
    next
  }
  for (k in seq_along(batches)) {
    set.seed(1000 + s)       # the same stream for the three batch sizes of a draw
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(sgld(m, lr = keng_lr(batches[k]), batch_size = batches[k],
                                 iter = 1e6, burnin = 0, thin = 100, init = c(1, 1)))
    mt <- mode_table(m, g, as.matrix(fit))
    rows[[length(rows) + 1]] <- data.frame(
      data = s, batch = batches[k], moves = mt$moves,
      share = mt$table$sgld_share[1], exact = mt$table$exact_mass[1],
      seconds = proc.time()[["elapsed"]] - t0)
  }
}
res <- do.call(rbind, rows)

cat("## Keng's mixture runs on", n_draws, "draws of the data (bench/keng-mixture.R)\n\n")
cat(sprintf("%s; load average at the start %s, at the end %s.\n\n",
            format(started, "%Y-%m-%d %H:%M %Z"), paste(strsplit(load_start, " ")[[1]][1:3], collapse = " "),
            paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " ")))
cat(sprintf("Draws of the data with two clear modes: %d of %d (left out: %s).\n",
            length(unique(res$data)), n_draws,
            if (length(skipped)) paste(skipped, collapse = ", ") else "none"))
cat(sprintf("Sum of the steps over the run, sum_t eta_t: batch 1 %.0f, batch 10 %.0f, batch 100 %.0f.\n\n",
            sum_of_steps[1], sum_of_steps[2], sum_of_steps[3]))
cat("Per draw of the data: moves between the modes (share of draws at the first mode; exact mass there)\n\n")
cat("| data | exact mass at mode 1 | batch 1 | batch 10 | batch 100 |\n|---|---|---|---|---|\n")
for (s in unique(res$data)) {
  r <- res[res$data == s, ]
  cat(sprintf("| %d | %.2f | %s |\n", s, r$exact[1],
              paste(sprintf("%d (%.2f)", r$moves, r$share), collapse = " | ")))
}
tally <- function(b) res$moves[res$batch == b]
cat("\n| batch | draws with no move | median moves | mean moves | mean abs share error | seconds per run (median) |\n")
cat("|---|---|---|---|---|---|\n")
for (b in batches) {
  r <- res[res$batch == b, ]
  cat(sprintf("| %d | %d of %d | %g | %.1f | %.2f | %.1f |\n", b, sum(r$moves == 0), nrow(r),
              median(r$moves), mean(r$moves), mean(abs(r$share - r$exact)), median(r$seconds)))
}
wide <- reshape(res[, c("data", "batch", "moves")], idvar = "data", timevar = "batch",
                direction = "wide")
stuck_100 <- sum(wide$moves.100 == 0 & wide$moves.1 > 0 & wide$moves.10 > 0)
cat(sprintf(paste0("\nKeng's pattern (batch 100 never moves, batches 1 and 10 both move): %d of %d draws. ",
                   "Batch 100 moves at least as often as both smaller batches: %d of %d.\n"),
            stuck_100, nrow(wide),
            sum(wide$moves.100 >= pmax(wide$moves.1, wide$moves.10)), nrow(wide)))
cat(sprintf("\n_Total %.0f s._\n", as.numeric(difftime(Sys.time(), started, units = "secs"))))
