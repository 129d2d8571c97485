library(testthat)
library(sgld)

test_check("sgld")
