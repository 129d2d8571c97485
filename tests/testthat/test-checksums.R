# Hashes of the draws, learning rates, states, random streams, diagnostics and
# monitor rows of fixed runs (helper-checksums.R), recorded on main at 7c62b53
# before the engine was reorganised (issue 15). A change here means that the
# same seed no longer gives the same numbers: that must be deliberate, and the
# commit that changes a hash must say why.
recorded <- c(
    sgld_b10 = "592cb451ca04246336d8526dbca0de75",
    sgld_threads = "0523043a8aac65314bf6871e22dbd239",
    psgld = "1afcef8f3cbe4baff165e98c125b0577",
    precond = "5d9151bf6430167ac0f944bfbaa319c5",
    sghmc = "b92c80bcaceaef2fa95e63e5bf22e50a",
    momentum = "ef1a92411dfa3a2ab08b756a4711870f",
    adagrad = "6c27adeaba31efaffff245213786657f",
    rmsprop = "80ba1729f03417da54d1ce46f4ea0366",
    adam = "8ae18cd3bb3774b99a81b5fe4aa1679b",
    gd = "2bffe26a02f87c4a36b188e5ba12fc18",
    mala = "9eb721ec873872766321565438db830a",
    logistic_cv = "d7e50104963b858aa67708c732ec0ff3",
    logistic_diag = "b99efd3557957ee86502786a72d9602b",
    mixture_threshold = "e31b6b41d58daebd7295d3c1b463a916",
    ica_natural = "e5b788637f709a9ab14f8769a5f1906c",
    ica_mala = "f30e83f5c108a90985e3e2d1026b79ec",
    continued = "1cff65bb601b9f85cd01668dba0430c0"
)

test_that("every model and rule gives the recorded draws for the same seed", {
  cases <- checksum_cases()
  expect_setequal(names(cases), names(recorded))
  for (name in names(cases)) {
    set.seed(2024)
    fit <- suppressWarnings(cases[[name]]())
    expect_identical(run_checksum(fit), recorded[[name]], label = name)
  }
})
