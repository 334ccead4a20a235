# The reference R package's ResourceTracker, measured by rt: one rt-recorder
# per tracker samples the process tree and the system into a store of its
# own; rt-export prints the rows, the summary, the recommendation and the
# report. Nothing is sampled or computed in R (every number is the CLI's).
# The recorder is a processx child: it is killed when the tracker is
# garbage collected (cleanup) and when R exits (supervise).

#' Find one of rt's programs
#'
#' @param name The program: `"rt-recorder"` or `"rt-export"`.
#' @return Its path: under `RT_PREFIX/bin` (or in `RT_PREFIX`, a build
#'   directory) when that is set, else on `PATH`, else the programs of a
#'   pip-installed rt (`python3 -m rt_tracker --prefix`, with the Python of
#'   `RETICULATE_PYTHON` first when set); `""` when not found.
#' @export
find_binary <- function(name) {
  prefix <- Sys.getenv("RT_PREFIX")
  if (nzchar(prefix)) {
    return(program_in(prefix, name))
  }
  path <- unname(Sys.which(name))
  if (nzchar(path)) {
    return(path)
  }
  program_in(pip_programs(), name)
}

# name under dir/bin or in dir; "" when neither is there.
program_in <- function(dir, name) {
  if (!nzchar(dir)) {
    return("")
  }
  for (p in c(file.path(dir, "bin", name), file.path(dir, name))) {
    if (file.access(p, 1L) == 0L) {
      return(p)
    }
  }
  ""
}

# The directory of a pip-installed rt's programs, asked of Python once per
# session (rt_tracker answers `python3 -m rt_tracker --prefix`); "" if no
# Python here has rt_tracker.
rt_found <- new.env(parent = emptyenv())
pip_programs <- function() {
  if (!is.null(rt_found$pip)) {
    return(rt_found$pip)
  }
  rt_found$pip <- ""
  pythons <- unique(c(Sys.getenv("RETICULATE_PYTHON"), unname(Sys.which("python3"))))
  for (py in pythons[nzchar(pythons)]) {
    res <- tryCatch(
      processx::run(py, c("-m", "rt_tracker", "--prefix"),
        error_on_status = FALSE, timeout = 20, encoding = "UTF-8"
      ),
      error = function(e) list(status = -1L, stdout = "")
    )
    dir <- trimws(res$stdout)
    if (identical(res$status, 0L) && nzchar(dir) && dir.exists(dir)) {
      rt_found$pip <- dir
      break
    }
  }
  rt_found$pip
}

rt_missing_warning <- function(what) {
  warning(
    "resource.tracker: ", what, "; the script runs on untracked (install rt: ",
    "its README; or set RT_PREFIX to where rt-recorder and rt-export are)",
    call. = FALSE
  )
}

# What the last rt-export that failed said (its last stderr line).
rt_said <- new.env(parent = emptyenv())

# Run rt-export on a store: its stdout as one string, NULL when it failed
# (rt_said$error then says why).
rt_export <- function(store, args, timeout = 120) {
  exe <- find_binary("rt-export")
  if (!nzchar(exe)) {
    rt_said$error <- "rt-export was not found"
    return(NULL)
  }
  res <- tryCatch(
    processx::run(exe, c("--store", store, args),
      error_on_status = FALSE, timeout = timeout, encoding = "UTF-8"
    ),
    error = function(e) list(status = -1L, stdout = "", stderr = conditionMessage(e))
  )
  if (res$status != 0L) {
    lines <- strsplit(trimws(res$stderr), "\n", fixed = TRUE)[[1]]
    rt_said$error <- if (length(lines)) lines[length(lines)] else ""
    return(NULL)
  }
  res$stdout
}

# The reference's default stats: the columns and aggregations stats()
# returns, from rt's summary of the run.
default_specs <- list(
  c("process_cpu_usage", "mean"), c("process_cpu_usage", "max"),
  c("process_memory_mib", "mean"), c("process_memory_mib", "max"),
  c("process_gpu_usage", "mean"), c("process_gpu_usage", "max"),
  c("process_gpu_vram_mib", "mean"), c("process_gpu_vram_mib", "max"),
  c("process_gpu_utilized", "mean"), c("process_gpu_utilized", "max"),
  c("system_disk_space_used_gb", "max"), c("system_net_recv_bytes", "sum"),
  c("system_net_sent_bytes", "sum"), c("timestamp", "duration")
)

# A data.frame of the rows whose columns start with prefix (which is taken
# off), with the timestamp, as POSIXct.
metrics_part <- function(rows, prefix) {
  if (is.null(rows) || !nrow(rows)) {
    return(data.frame())
  }
  keep <- startsWith(names(rows), prefix)
  out <- rows[, keep, drop = FALSE]
  names(out) <- substring(names(out), nchar(prefix) + 1L)
  cbind(data.frame(timestamp = rows$timestamp), out)
}

#' Track the resources of an R process and the system
#'
#' @description An R6 class with the reference R package's API, backed by
#'   rt: `rt-recorder` samples the tracked process tree and the system into
#'   a store of the tracker's own, and `rt-export` answers. When rt is not
#'   installed, one warning is given and the script runs on, untracked.
#' @export
ResourceTracker <- R6::R6Class("ResourceTracker",
  public = list(
    #' @description Create a tracker (and start it unless `autostart` is
    #'   false).
    #' @param pid The process to track. Defaults to this R process.
    #' @param children Whether its children are tracked too (rt always
    #'   tracks the whole tree; kept for the reference's API).
    #' @param interval Seconds between samples. Defaults to 1.
    #' @param autostart Whether to start tracking at once. Defaults to TRUE.
    #' @param track_processes Whether to track the process tree.
    #' @param track_system Whether to track the whole system.
    #' @param discover_server Whether to describe the server (rt always
    #'   records it; kept for the reference's API).
    #' @param discover_cloud Whether `cloud_info` asks the cloud's metadata
    #'   services.
    #' @param max_memory,max_cpu The job's budget (rt's `--max-memory`, a
    #'   size such as `"2GiB"`; `--max-cpu`, cores): over it, `stop()` warns
    #'   with rt's line, also kept in `over_budget`.
    initialize = function(pid = Sys.getpid(), children = TRUE, interval = 1,
                          autostart = TRUE, track_processes = TRUE,
                          track_system = TRUE, discover_server = TRUE,
                          discover_cloud = TRUE, max_memory = NULL, max_cpu = NULL) {
      private$tracked <- as.integer(pid)
      private$budget <- c(
        if (!is.null(max_memory)) c("--max-memory", plain_number(max_memory)),
        if (!is.null(max_cpu)) c("--max-cpu", plain_number(max_cpu))
      )
      private$opts <- list(
        children = children, interval = as.numeric(interval),
        track_processes = track_processes, track_system = track_system,
        discover_server = discover_server, discover_cloud = discover_cloud
      )
      if (autostart) {
        self$start()
      }
      invisible(self)
    },

    #' @description Start the recorder (an error when it runs already).
    start = function() {
      if (self$running) {
        stop("Resource tracker already running, cannot start again.", call. = FALSE)
      }
      rec <- find_binary("rt-recorder")
      if (!nzchar(rec) || !nzchar(find_binary("rt-export"))) {
        rt_missing_warning("rt's rt-recorder and rt-export were not found")
        private$started <- TRUE
        return(invisible(self))
      }
      reset_peak_if_alone(private$tracked)
      private$store <- tempfile("rt-tracker-r-")
      args <- c(
        "--pid", private$tracked, "-i", plain_number(private$opts$interval),
        "--store", private$store, "--quiet", "--language", "R", private$budget
      )
      private$errfile <- tempfile("rt-recorder-")
      private$proc <- processx::process$new(rec, args,
        stdout = NULL, stderr = private$errfile, cleanup = TRUE, supervise = TRUE
      )
      private$started <- TRUE
      private$await_start()
      rt_live$n <- rt_live$n + 1L
      private$counted <- TRUE
      invisible(self)
    },

    #' @description Stop the recorder; the run stays readable.
    stop = function() {
      p <- private$proc
      if (!is.null(p) && p$is_alive()) {
        p$signal(15L) # SIGTERM: the recorder takes its last sample and ends
        p$wait(15000)
        if (p$is_alive()) p$kill()
      }
      if (!is.null(p) && !p$is_alive() && identical(p$get_exit_status(), 3L) &&
        is.null(private$over)) {
        # over its budget: rt-export budget said it in one line
        said <- readLines(private$errfile, warn = FALSE)
        line <- if (length(said)) said[[length(said)]] else "over budget"
        # (said in the recorder's name: the user ran R)
        private$over <- sub("^(rt-recorder|resource-tracker|rt-export): ", "", line)
        warning("resource.tracker: ", private$over, call. = FALSE)
      }
      private$stopped <- TRUE
      if (isTRUE(private$counted)) {
        rt_live$n <- rt_live$n - 1L
        private$counted <- FALSE
      }
      invisible(self)
    },

    #' @description Wait until `n` samples are recorded.
    #' @param n The number of samples to wait for. Defaults to 1.
    #' @param timeout Seconds to wait at most. Defaults to 600.
    wait_for_samples = function(n = 1, timeout = 600) {
      deadline <- Sys.time() + timeout
      while (self$n_samples < n) {
        if (is.null(private$proc) || !private$proc$is_alive()) {
          return(invisible(self))
        }
        if (Sys.time() > deadline) {
          stop("Timed out waiting for resource tracker to collect ", n, " samples",
            call. = FALSE
          )
        }
        Sys.sleep(min(0.05, private$opts$interval / 10))
      }
      invisible(self)
    },

    #' @description The process and system metrics side by side.
    #' @param bytes Whether memory and disk space are given in bytes.
    #' @param human_names Whether columns get the reference's readable names.
    #' @param system_prefix Prefix of the system columns (default `system_`).
    #' @param process_prefix Prefix of the process columns (default `process_`).
    get_combined_metrics = function(bytes = FALSE, human_names = FALSE,
                                    system_prefix = NULL, process_prefix = NULL) {
      rows <- private$rows()
      if (is.null(rows) || !nrow(rows)) {
        return(data.frame())
      }
      if (bytes) {
        for (col in grep("_mib$", names(rows), value = TRUE)) rows[[col]] <- rows[[col]] * 1048576
        for (col in grep("_gb$", names(rows), value = TRUE)) rows[[col]] <- rows[[col]] * 1e9
      }
      nm <- names(rows)
      if (!is.null(system_prefix)) nm <- sub("^system_", system_prefix, nm)
      if (!is.null(process_prefix)) nm <- sub("^process_", process_prefix, nm)
      if (human_names) nm <- gsub("_", " ", nm, fixed = TRUE)
      names(rows) <- nm
      rows
    },

    #' @description Statistics of the run, rt's figures (the summary's and
    #'   the report's): the reference's default specs.
    #' @param specs A list of `c(column, aggregation)` pairs (aggregation:
    #'   mean, max, sum or duration). Defaults to the reference's.
    stats = function(specs = NULL) {
      js <- private$summary_json()
      if (is.null(js) || is.null(js$stats)) {
        stop("No metrics collected (yet)", call. = FALSE)
      }
      out <- list()
      for (spec in if (is.null(specs)) default_specs else specs) {
        col <- spec[[1]]
        agg <- spec[[2]]
        v <- if (agg == "duration") js$run$duration_secs else js$stats[[col]][[agg]]
        if (!is.null(v)) {
          out[[col]][[agg]] <- if (agg %in% c("mean", "max")) round(v, 2) else v
        }
      }
      out
    },

    #' @description vCPUs, memory (MiB), GPUs and VRAM (MiB) for the next
    #'   run, by rt's rules; `raised_because` says why a value is above the
    #'   use measured (NULL when nothing raised one).
    #' @param historical_stats Not used by rt yet (kept for the reference's API).
    recommend_resources = function(historical_stats = list()) {
      if (self$n_samples == 0) {
        stop("No metrics collected yet: start() the tracker and let it take a sample ",
          "(wait_for_samples()) before asking for a recommendation.",
          call. = FALSE
        )
      }
      js <- private$export_json(c("recommend", private$run_id(), "--json"))
      r <- js$recommendation
      out <- list(cpu = r$cpu, memory = r$memory_mib, gpu = r$gpu, vram = r$vram_mib)
      attr(out, "raised_because") <- r$raised_because
      out
    },

    #' @description The cheapest cloud server that fits (Spare Cores'
    #'   Keeper, through rt-export), as Keeper describes it; an empty list,
    #'   with a warning saying why, when Keeper does not answer.
    #' @param ... Keeper filters: not passed on by rt yet (a warning names them).
    recommend_server = function(...) {
      dots <- list(...)
      if (length(dots)) {
        warning("resource.tracker: recommend_server() does not pass ",
          paste(names(dots), collapse = ", "), " on to Keeper yet",
          call. = FALSE
        )
      }
      if (is.na(private$run_id())) {
        return(list())
      }
      out <- rt_export(private$store, c(
        "recommend", private$run_id(), "--servers", "1", "--json"
      ))
      js <- if (is.null(out)) list() else jsonlite::fromJSON(out, simplifyVector = FALSE)
      if (!length(js$servers)) {
        warning("resource.tracker: no server recommended: ",
          if (is.null(out)) rt_said$error else js$servers_error %||% "Keeper did not answer",
          call. = FALSE
        )
        return(list())
      }
      js$servers[[1]]
    },

    #' @description rt's HTML report of the run, noting it came from R.
    #' @param integration Where it came from. Defaults to `"R"`.
    report = function(integration = "R") {
      if (is.na(private$run_id())) {
        return(structure("", class = "rt_report"))
      }
      path <- tempfile("rt-report-", fileext = ".html")
      on.exit(unlink(path))
      rt_export(private$store, c(
        "report", private$run_id(), "-o", path, "--integration", integration
      ))
      page <- if (file.exists(path)) {
        paste(readLines(path, warn = FALSE, encoding = "UTF-8"), collapse = "\n")
      } else {
        ""
      }
      # the page starts as the reference's does, "<html>"; print() saves
      # it with its doctype again
      structure(sub("^<!DOCTYPE html>\n<html[^>]*>", "<html>", page), class = "rt_report")
    },

    #' @description Stop the recorder and remove the tracker's store (run by
    #'   R's garbage collector).
    finalize = function() {
      self$stop()
      if (!is.null(private$store)) unlink(private$store, recursive = TRUE)
      if (!is.null(private$errfile)) unlink(private$errfile)
    }
  ),
  active = list(
    #' @field running (logical) Whether the tracker is running.
    running = function() private$started && !private$stopped,
    #' @field pid (integer) The process ID of the tracked process.
    pid = function() private$tracked,
    #' @field over_budget (character) rt's line when the job went over its
    #'   budget, NULL otherwise.
    over_budget = function() private$over,
    #' @field n_samples (integer) The number of samples taken.
    n_samples = function() {
      rows <- private$rows()
      if (is.null(rows)) 0L else nrow(rows)
    },
    #' @field system_metrics (data.frame) The system's metrics, a row a sample.
    system_metrics = function() metrics_part(private$rows(), "system_"),
    #' @field process_metrics (data.frame) The process tree's metrics.
    process_metrics = function() metrics_part(private$rows(), "process_"),
    #' @field cloud_info (list) The cloud: vendor, instance_type, region
    #'   (NA where unknown) and discovery_time.
    cloud_info = function() {
      if (is.null(private$cloud)) {
        t0 <- Sys.time()
        out <- if (private$opts$discover_cloud) {
          rt_export(private$store %||% tempdir(), "discover", timeout = 30)
        }
        js <- if (is.null(out)) list() else jsonlite::fromJSON(out, simplifyVector = FALSE)
        pick <- function(k) if (is.null(js[[k]])) NA_character_ else js[[k]]
        private$cloud <- list(
          vendor = pick("cloud_vendor_id"), instance_type = pick("cloud_instance_type"),
          region = pick("cloud_region_id"),
          discovery_time = as.numeric(difftime(Sys.time(), t0, units = "secs"))
        )
      }
      private$cloud
    },
    #' @field server_info (list) The server: os, vcpus, memory_mib,
    #'   gpu_count, gpu_names, gpu_name, gpu_memory_mib, and how it was shared
    #'   (allocation).
    server_info = function() {
      meta <- private$export_json(c("show", private$run_id()))
      h <- meta$host
      names <- if (is.null(h$gpu_model)) character() else rep(h$gpu_model, h$gpu_count)
      list(
        os = Sys.info()[["sysname"]], vcpus = h$vcpus, cpu_name = h$cpu_model,
        memory_mib = h$memory_mib, gpu_count = h$gpu_count %||% 0L,
        gpu_names = names, gpu_name = if (length(names)) names[[1]] else "",
        gpu_memory_mib = h$gpu_memory_mib %||% 0L,
        allocation = private$summary_json()$allocation
      )
    }
  ),
  private = list(
    tracked = NULL, opts = NULL, proc = NULL, store = NULL, run = NULL,
    started = FALSE, stopped = FALSE, cloud = NULL, budget = NULL, errfile = NULL, over = NULL,
    died_said = FALSE, counted = FALSE,
    # the run this tracker records: the only one in its own store
    run_id = function() {
      if (is.null(private$run) && !is.null(private$store)) {
        out <- rt_export(private$store, "runs")
        lines <- if (is.null(out)) character() else strsplit(out, "\n", fixed = TRUE)[[1]]
        id <- suppressWarnings(as.integer(sub("^([0-9]+).*", "\\1", lines[-1])))
        if (length(id) && !is.na(id[[1]])) private$run <- as.character(id[[1]])
      }
      if (is.null(private$run)) NA_character_ else private$run
    },
    # rt-recorder's last line, when it said one
    said = function() {
      lines <- if (!is.null(private$errfile) && file.exists(private$errfile)) {
        readLines(private$errfile, warn = FALSE)
      }
      lines <- lines[nzchar(lines)]
      if (length(lines)) lines[[length(lines)]] else ""
    },
    # The recorder refused its options (a bad max_memory, interval...): an
    # error with its own line, the moment it says so; it is taken as
    # started once its store holds the first sample's run (or after 5 s).
    await_start = function() {
      deadline <- Sys.time() + 5
      data <- file.path(private$store, "data.mdb")
      while (private$proc$is_alive() && !file.exists(data) && Sys.time() < deadline) {
        Sys.sleep(0.01)
      }
      if (!private$proc$is_alive() && !file.exists(data)) {
        private$proc$wait(1000)
        line <- private$said()
        private$stopped <- TRUE
        unlink(private$errfile)
        stop("resource.tracker: rt-recorder did not start",
          if (nzchar(line)) paste0(": ", line) else "",
          call. = FALSE
        )
      }
    },
    # A recorder that died after it started: a warning (once) when its
    # figures are read, with its line.
    check_alive = function() {
      p <- private$proc
      if (is.null(p) || p$is_alive() || private$stopped || private$died_said) {
        return(invisible())
      }
      status <- p$get_exit_status()
      if (!identical(status, 0L) && !identical(status, 3L)) {
        private$died_said <- TRUE
        line <- private$said()
        warning("resource.tracker: rt-recorder stopped (exit ", status, ")",
          if (nzchar(line)) paste0(": ", line) else "",
          "; the figures end where it did",
          call. = FALSE
        )
      }
    },
    rows = function() {
      private$check_alive()
      if (is.na(private$run_id())) {
        return(NULL)
      }
      out <- rt_export(private$store, c("replay", private$run_id(), "-f", "csv", "--csv-ms"))
      if (is.null(out) || !nzchar(out)) {
        return(NULL)
      }
      rows <- utils::read.csv(text = out, check.names = FALSE)
      rows$timestamp <- as.POSIXct(rows$timestamp, origin = "1970-01-01", tz = "UTC")
      rows
    },
    export_json = function(args) {
      if (is.na(private$run_id())) {
        return(list())
      }
      out <- rt_export(private$store, args)
      if (is.null(out)) list() else jsonlite::fromJSON(out, simplifyVector = FALSE)
    },
    summary_json = function() private$export_json(c("summary", private$run_id(), "--json"))
  )
)

`%||%` <- function(a, b) if (is.null(a)) b else a

# Trackers of this R session that run now.
rt_live <- new.env()
rt_live$n <- 0L

# A peak counts only when it happened while tracked: a tracker of this R
# session resets its high-water mark (VmHWM, /proc/self/clear_refs) as it
# starts, unless another tracker of the session runs (nested: the outer
# one's peak must stay). Where it cannot, rt leaves a mark reached before
# tracking out of the answer and says so.
reset_peak_if_alone <- function(pid) {
  if (!identical(as.integer(pid), Sys.getpid()) || rt_live$n > 0L) {
    return(invisible(FALSE))
  }
  ok <- tryCatch(
    {
      cat("5", file = "/proc/self/clear_refs")
      TRUE
    },
    error = function(e) FALSE, warning = function(w) FALSE
  )
  invisible(ok)
}

# A number as rt reads it: plain decimal, never R's 1e+05 or 1e-04 (a
# string, such as "2GiB", is passed as it is, for rt to judge).
plain_number <- function(x) {
  if (!is.numeric(x)) {
    return(as.character(x))
  }
  out <- formatC(x, format = "f", digits = 15, drop0trailing = TRUE)
  sub("\\.$", "", trimws(out))
}

#' Track the resources of an R expression
#'
#' @param expr The expression to evaluate while a tracker runs.
#' @param interval Seconds between samples. Defaults to 1.
#' @return The stopped tracker (its metrics, stats, recommendation, report).
#' @export
resource_tracker <- function(expr, interval = 1) {
  tracker <- ResourceTracker$new(interval = interval)
  on.exit(tracker$stop())
  force(expr)
  tracker
}

#' Print or convert rt's report
#'
#' @param x A report, as `ResourceTracker$report()` returns it.
#' @param ... Not used.
#' @return `print()`: `x`, invisibly, after saying where the page was
#'   saved; `as.character()`: the page.
#' @export
print.rt_report <- function(x, ...) {
  path <- tempfile("rt-report-", fileext = ".html")
  writeLines(c("<!DOCTYPE html>", unclass(x)), path, useBytes = TRUE)
  cat("rt report:", nchar(unclass(x)), "characters, saved as", path, "\n")
  invisible(x)
}

#' @rdname print.rt_report
#' @export
as.character.rt_report <- function(x, ...) unclass(x)
