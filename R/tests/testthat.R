library(testthat)
library(resource.tracker)

test_check("resource.tracker")
