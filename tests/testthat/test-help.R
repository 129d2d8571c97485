# Help pages must read cleanly as text (?topic in a terminal, or R CMD Rd2txt):
# every equation carries an ASCII fallback, \eqn{latex}{ascii}, so no LaTeX
# command reaches the text rendering.
test_that("text help of every page has no raw LaTeX", {
  db <- tools::Rd_db("sgld")
  expect_gt(length(db), 30)
  for (name in names(db)) {
    txt <- capture.output(tools::Rd2txt(db[[name]], out = stdout(),
                                        options = list(underline_titles = FALSE)))
    hits <- grep("\\", txt, fixed = TRUE, value = TRUE)
    expect(length(hits) == 0,
           sprintf("%s renders a backslash as text: %s", name, paste(hits, collapse = " / ")))
  }
})
