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

# Every number the prose of a built vignette quotes as a result is produced
# by the page (printed by one of its chunks, written in its code, or
# computed inline) or cited to its source (a bench/ file, a publication,
# the lecture handout). The package's own rules, which the pages state
# rather than measure, are allowed: the accuracy bar (0.15 posterior sd,
# 10% in sd), the R-hat limit 1.05, tune_sgld()'s sampling threshold 0.1
# and the Pareto k limit 0.7; and, on the page that states them, the
# limits of one method (page_rules).
# Numbers the prose of a vignette quotes as results: decimals (0.043) and
# numbers with a unit of time, a percentage or a ratio (138 s, 6.6%, 12x),
# each with whether its paragraph (or the one before it: a table's caption)
# cites a bench/ file or a publication. Inline R (`r ...`), code spans,
# mathematics, links, comments and the numbers of figures, tables and
# sections are not quoted results.
prose_numbers <- function(rmd) {
  x <- readLines(rmd, warn = FALSE)
  heads <- which(x == "---")
  if (length(heads) >= 2 && heads[1] == 1) x[seq_len(heads[2])] <- ""
  fence <- grepl("^\\s*```", x)
  x[fence | cumsum(fence) %% 2 == 1] <- ""
  paras <- vapply(split(x, cumsum(!nzchar(trimws(x)))), paste, "", collapse = " ")
  paras <- unname(paras[nzchar(trimws(paras))])
  cites <- grepl("bench/|\\b(19|20)\\d\\d\\b|et al\\.|the paper|the (lecture )?handout", paras,
                 ignore.case = TRUE)
  cited <- cites | c(FALSE, head(cites, -1))
  strip <- function(p) {
    p <- gsub("<!--.*?-->", " ", p, perl = TRUE)
    p <- gsub("`r [^`]*`|`[^`]*`", " ", p)
    p <- gsub("\\$\\$.*?\\$\\$|\\$[^$]+\\$|\\\\\\(.*?\\\\\\)", " ", p, perl = TRUE)
    p <- gsub("\\]\\([^)]*\\)", "]", p)
    gsub("(Figures?|Tables?|Sections?|§) [0-9.]+( (to|and) [0-9.]+)?", " ", p)
  }
  pattern <- paste0("(?<![\\w.^-])(\\d[\\d,]*\\.\\d+|\\d[\\d,]*(?=\\s?(%|s\\b|seconds?\\b|",
                    "minutes?\\b|hours?\\b|x\\b|times\\b|ms\\b)))")
  out <- lapply(seq_along(paras), function(k) {
    q <- strip(paras[k])
    n <- regmatches(q, gregexpr(pattern, q, perl = TRUE))[[1]]
    if (length(n)) data.frame(number = n, cited = cited[[k]], paragraph = paras[[k]],
                              stringsAsFactors = FALSE, row.names = NULL)
  })
  do.call(rbind, c(list(data.frame(number = character(), cited = logical(),
                                   paragraph = character())), out))
}

# The text of a built page's code boxes (its code and printed output).
page_code_text <- function(html) {
  h <- paste(readLines(html, warn = FALSE), collapse = "\n")
  pre <- regmatches(h, gregexpr("(?s)<pre[^>]*>.*?</pre>", h, perl = TRUE))[[1]]
  txt <- gsub("<[^>]+>", "", pre)
  txt <- gsub("&lt;", "<", gsub("&gt;", ">", gsub("&quot;", "\"", gsub("&amp;", "&", txt))))
  paste(txt, collapse = "\n")
}

# Numbers quoted in the prose that the page does not produce (printed by,
# or written in, one of its chunks) and does not cite, leaving out the
# package's own rules (`allowed`).
unsourced_numbers <- function(rmd, html, allowed = character()) {
  p <- prose_numbers(rmd)
  code <- page_code_text(html)
  shown <- vapply(p$number, function(n) {
    forms <- gsub(".", "\\.", unique(c(n, gsub(",", "", n))), fixed = TRUE)
    any(grepl(paste0("(?<![\\d.])(", paste(forms, collapse = "|"), ")(?![\\d])"), code,
              perl = TRUE))
  }, logical(1))
  p[!shown & !p$cited & !gsub(",", "", p$number) %in% allowed, , drop = FALSE]
}

package_rules <- c("0.15", "10", "1.05", "0.1", "0.7")
page_rules <- list(
  # the stochastic-volatility default's bar for the path (?model_sv)
  "stochastic-volatility.Rmd" = "0.995",
  # bbb()'s limit on the smallest corrected sd ratio; the former default's
  # starting sds, a setting
  "variational.Rmd" = c("0.9", "0.01"),
  # mala()'s acceptance band; k-hat's message band and lr_poly()'s
  # interval for gamma
  "warnings.Rmd" = c("0.95", "0.5"))

test_that("unsourced_numbers() finds a quoted result the page neither shows nor cites", {
  rmd <- tempfile(fileext = ".Rmd")
  html <- tempfile(fileext = ".html")
  writeLines(c("---", "title: t", "---", "",
               "The run took 4.4 s and its error was 0.031 sd (Figure 2.1).", "",
               "Its mean was `r m` and the check printed 0.287 below.", "",
               "```{r}", "fit <- sgld(m, lr = 0.05)", "```", "",
               "The step 0.05 is the code's; 12x comes from `bench/x.md`.", "",
               "Against the bar of 0.15 sd.", "", "| a | 3.25 |"), rmd)
  writeLines("<pre><code>fit &lt;- sgld(m, lr = 0.05)\n#&gt; [1] 0.287</code></pre>", html)
  u <- unsourced_numbers(rmd, html, package_rules)
  expect_setequal(u$number, c("4.4", "0.031", "3.25"))
})

test_that("every number a built vignette quotes is produced on the page or cited", {
  pages <- html_of_vignettes()
  skip_if(length(pages) == 0, "no built vignettes (a development install)")
  for (page in pages) {
    rmd <- sub("\\.html$", ".Rmd", page)
    if (!file.exists(rmd)) next
    u <- unsourced_numbers(rmd, page, c(package_rules, page_rules[[basename(rmd)]]))
    expect(nrow(u) == 0, sprintf(
      "%s quotes %s without producing or citing it: \"%s\"", basename(rmd),
      paste(u$number, collapse = ", "), substr(u$paragraph[1], 1, 160)))
  }
})
