# resource.tracker against rt's real programs (RT_PREFIX or PATH); skipped
# when they are not there.
skip_without_rt <- function() {
  if (!nzchar(find_binary("rt-recorder")) || !nzchar(find_binary("rt-export"))) {
    skip("rt's programs are not found (set RT_PREFIX or PATH)")
  }
}

# the recorders tracking pid (pgrep without a shell, whose command line
# would match too)
recorders_of <- function(pid) {
  res <- processx::run("pgrep", c("-f", paste0("rt-recorder --pid ", pid, " ")),
    error_on_status = FALSE
  )
  out <- strsplit(trimws(res$stdout), "\n", fixed = TRUE)[[1]]
  out[nzchar(out)]
}

test_that("the reference's contract: pid, samples, metrics, answers, report from R", {
  skip_without_rt()
  tracker <- ResourceTracker$new()
  expect_equal(tracker$pid, Sys.getpid())
  expect_error(tracker$start(), "Resource tracker already running")
  tracker$wait_for_samples(1)
  expect_gte(tracker$n_samples, 1)
  expect_true(is.data.frame(tracker$system_metrics))
  expect_true(is.data.frame(tracker$process_metrics))
  expect_equal(tracker$process_metrics$pid[1], tracker$pid)
  expect_s3_class(tracker$process_metrics$timestamp, "POSIXct")
  expect_true(is.list(tracker$cloud_info))
  expect_true(is.list(tracker$server_info))
  expect_true(is.list(tracker$recommend_resources()))
  expect_true(is.list(suppressWarnings(tracker$recommend_server())))
  expect_true(is.list(tracker$stats()))
  r <- as.character(tracker$report())
  expect_true(is.character(r))
  expect_true(grepl("^<html>", r))
  expect_true(grepl("from <code>R</code>", r, fixed = TRUE))
  expect_gt(nchar(r), 1000)
  tracker$stop()
  expect_false(tracker$running)
})

test_that("400 MB of doubles are seen in the process tree and asked for", {
  skip_without_rt()
  tracker <- ResourceTracker$new(interval = 0.2)
  x <- runif(50e6) # 400 MB of doubles, written: resident
  tracker$wait_for_samples(5)
  Sys.sleep(0.3)
  tracker$stop()
  rm(x)
  peak <- max(tracker$process_metrics$memory_mib)
  expect_gte(peak, 380)
  expect_equal(tracker$stats()$process_memory_mib$max, peak)
  reco <- tracker$recommend_resources()
  expect_gte(reco$memory, peak)
  expect_true(reco$memory %in% c(512, 1024) || reco$memory %% 1024 == 0)
})

test_that("the stats are rt's figures, as its summary gives them", {
  skip_without_rt()
  tracker <- ResourceTracker$new(interval = 0.2)
  tracker$wait_for_samples(3)
  tracker$stop()
  st <- tracker$stats()
  expect_setequal(names(st), c(
    "process_cpu_usage", "process_memory_mib", "process_gpu_usage", "process_gpu_vram_mib",
    "process_gpu_utilized", "system_disk_space_used_gb", "system_net_recv_bytes",
    "system_net_sent_bytes", "timestamp"
  ))
  expect_gt(st$timestamp$duration, 0)
})

test_that("a tracker left running is stopped by the garbage collector and at R's exit", {
  skip_without_rt()
  tracker <- ResourceTracker$new(interval = 0.2)
  tracker$wait_for_samples(1)
  expect_length(recorders_of(Sys.getpid()), 1)
  rm(tracker)
  invisible(gc())
  Sys.sleep(0.5)
  expect_length(recorders_of(Sys.getpid()), 0)
  # another R that exits with its tracker running leaves no recorder: it
  # writes its pid once its tracker has a sample, then sleeps and quits
  pidfile <- tempfile()
  child <- processx::process$new(file.path(R.home("bin"), "Rscript"), c(
    "-e", "library(resource.tracker); t <- ResourceTracker$new(interval = 0.2)",
    "-e", sprintf("t$wait_for_samples(1); writeLines(as.character(Sys.getpid()), '%s')", pidfile),
    "-e", "Sys.sleep(2); quit(save = 'no')"
  ), env = c("current", R_LIBS = paste(.libPaths(), collapse = ":")))
  for (i in 1:600) {
    if (file.exists(pidfile) && length(readLines(pidfile, warn = FALSE))) break
    Sys.sleep(0.05)
  }
  pid <- readLines(pidfile, warn = FALSE)
  expect_match(pid, "^[0-9]+$")
  expect_length(recorders_of(pid), 1) # its tracker runs
  child$wait(60000)
  Sys.sleep(0.5)
  expect_length(recorders_of(pid), 0)
})

test_that("without rt, one warning and the script runs on", {
  old <- Sys.getenv("RT_PREFIX")
  on.exit(Sys.setenv(RT_PREFIX = old))
  Sys.setenv(RT_PREFIX = tempfile())
  expect_warning(tracker <- ResourceTracker$new(), "not found")
  expect_equal(tracker$n_samples, 0)
  expect_equal(nrow(tracker$process_metrics), 0)
})

test_that("a budget gone over is said once, and the script runs on", {
  skip_without_rt()
  tracker <- ResourceTracker$new(interval = 0.2, max_memory = "64MiB")
  x <- runif(20e6) # 160 MB of doubles
  tracker$wait_for_samples(3)
  expect_warning(tracker$stop(), "over budget: memory 64 MiB: peak")
  expect_match(tracker$over_budget, "over by")
  # rt's line without a program's name: the user ran R
  expect_match(tracker$over_budget, "^over budget: memory")
  rm(x)
  ok <- ResourceTracker$new(interval = 0.2, max_memory = "8GiB", max_cpu = 64)
  ok$wait_for_samples(2)
  expect_no_warning(ok$stop())
  expect_null(ok$over_budget)
})

test_that("a value rt refuses is an error with rt's own line, and none is left behind", {
  skip_without_rt()
  before <- list.files(tempdir(), pattern = "^rt-recorder-")
  expect_error(
    ResourceTracker$new(max_memory = "2 gigs"),
    "--max-memory must be a size .*got '2 gigs'"
  )
  expect_error(
    ResourceTracker$new(interval = 1e-4),
    "--interval must be a number of seconds from 0.01 .*got '0.0001'"
  )
  # none of theirs is left (others' may go meanwhile, with their trackers)
  expect_length(setdiff(list.files(tempdir(), pattern = "^rt-recorder-"), before), 0)
  # numbers go as plain decimals, never R's 1e+05
  big <- ResourceTracker$new(interval = 0.2, max_cpu = 1e5)
  big$wait_for_samples(2)
  expect_gte(big$n_samples, 2)
  expect_no_warning(big$stop())
})

test_that("a recorder that dies later is a warning when its figures are read", {
  skip_without_rt()
  tracker <- ResourceTracker$new(interval = 0.2)
  tracker$wait_for_samples(2)
  pid <- recorders_of(Sys.getpid())
  expect_length(pid, 1)
  tools::pskill(as.integer(pid), tools::SIGKILL)
  Sys.sleep(0.3)
  expect_warning(tracker$n_samples, "rt-recorder stopped \\(exit")
  expect_no_warning(tracker$n_samples) # said once
  tracker$stop()
})

test_that("a peak reached before the tracker started is not the job's", {
  skip_without_rt()
  x <- runif(128e6) # 1 GiB of doubles, then freed
  rm(x)
  invisible(gc())
  tracker <- ResourceTracker$new(interval = 0.5)
  Sys.sleep(1.6)
  tracker$stop()
  expect_lte(tracker$recommend_resources()$memory, 512)
})
