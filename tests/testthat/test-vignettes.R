# The built vignettes show their reader no wall of warnings: at most one
# warning block each (the warnings of one call) (a warning a vignette means to show is shown once and
# explained; runs that would repeat it are silenced with a word why). The
# HTML exists in an installed package built from its tarball (R CMD build
# runs the vignettes), as under R CMD check; a development install has none.
html_of_vignettes <- function() {
  doc <- system.file("doc", package = "sgld")
  if (!nzchar(doc)) return(character())
  list.files(doc, pattern = "\\.html$", full.names = TRUE)
}

test_that("html_warnings() finds knitr's warning lines and nothing else", {
  page <- tempfile(fileext = ".html")
  writeLines(c("<pre><code>fit &lt;- sgld(m)",
               "#&gt; Warning: the sampling threshold is 36.9",
               "#&gt; Warning in f(x): a second one",
               "## Warning: with the other prefix</code></pre>",
               "<p>A paragraph on the word Warning: not output.</p>",
               "<pre><code>#&gt; [1] &quot;Warning: a printed string&quot;</code></pre>"), page)
  expect_length(html_warnings(page), 3)
  expect_length(html_warning_blocks(page), 1)
  writeLines(c("<pre><code>fit &lt;- sgld(m)",
               "#&gt; Warning: one",
               "#&gt; its second line",
               "#&gt; Warning: two, from the same call",
               "summary(fit)",
               "#&gt; mean sd",
               "bad &lt;- sgld(m, lr = 1)",
               "#&gt; Warning: three, from another call</code></pre>"), page)
  expect_length(html_warning_blocks(page), 2)
})

test_that("every built vignette shows at most one warning block", {
  pages <- html_of_vignettes()
  skip_if(length(pages) == 0, "no built vignettes (a development install)")
  for (page in pages) {
    shown <- html_warning_blocks(page)
    expect(length(shown) <= 1, sprintf(
      "%s shows %d warning blocks; the first: %s", basename(page), length(shown),
      substr(trimws(shown[1]), 1, 120)))
  }
})

# Every figure of a built vignette has alternative text (knitr's fig.alt),
# for readers who cannot see it.
images_without_alt <- function(page) {
  html <- paste(readLines(page, warn = FALSE), collapse = "\n")
  tags <- regmatches(html, gregexpr("<img[^>]*>", html))[[1]]
  tags[!grepl('alt="[^"]+"', tags)]
}

test_that("images_without_alt() finds an image with no or empty alt text", {
  page <- tempfile(fileext = ".html")
  writeLines(c('<p><img src="a.png" alt="A histogram of the draws" /></p>',
               '<img src="b.png" />', '<img src="c.png" alt="" />'), page)
  expect_length(images_without_alt(page), 2)
})

test_that("every figure of every built vignette has alternative text", {
  pages <- html_of_vignettes()
  skip_if(length(pages) == 0, "no built vignettes (a development install)")
  for (page in pages) {
    missing <- images_without_alt(page)
    expect(length(missing) == 0, sprintf("%s has %d figures without alt text", basename(page),
                                         length(missing)))
  }
})

# The installed pages read offline: their mathematics is MathML written when
# they were built (math_method: mathml), and nothing is loaded from a server.
remote_loads <- function(page) {
  html <- paste(readLines(page, warn = FALSE), collapse = "\n")
  # scripts whole (one may add another script by its address) and link tags
  parts <- regmatches(html, gregexpr("(?s)<script.*?</script>|<link[^>]*>", html,
                                     perl = TRUE))[[1]]
  parts[grepl("(src|href)\\s*=\\s*[\"'](https?:)?//", parts, perl = TRUE)]
}

test_that("remote_loads() finds a script from a server, not a local one", {
  page <- tempfile(fileext = ".html")
  writeLines(c('<script src="https://cdn.example/mathjax/tex-chtml.js"></script>',
               '<script>var x = 1;</script>', '<link rel="stylesheet" href="style.css" />',
               '<script>', '  var s = document.createElement("script");',
               '  s.src  = "https://cdn.example/MathJax.js";', '</script>',
               '<p><a href="https://example.org">a link to read is fine</a></p>'), page)
  expect_length(remote_loads(page), 2)
})

test_that("no built vignette loads a script or a stylesheet from the network", {
  pages <- html_of_vignettes()
  skip_if(length(pages) == 0, "no built vignettes (a development install)")
  for (page in pages) {
    remote <- remote_loads(page)
    expect(length(remote) == 0, sprintf("%s loads %s", basename(page), remote[1]))
  }
})
