# Argument checks shared by every exported function. Each one names the
# argument and the rule it broke, and stops without a call in the message.

abort <- function(...) stop(paste0(...), call. = FALSE)

describe <- function(x) {
  if (is.null(x)) return("NULL")
  if (is.function(x)) return("a function")
  if (is.object(x)) return(sprintf("an object of class \"%s\"", class(x)[1]))
  if (is.list(x)) return(sprintf("a list of length %d", length(x)))
  if (length(x) != 1L) {
    type <- typeof(x)
    return(sprintf("%s %s vector of length %d",
                   if (substr(type, 1, 1) %in% c("a", "e", "i", "o", "u")) "an" else "a",
                   type, length(x)))
  }
  if (is.character(x)) return(sprintf("\"%s\"", x))
  format(x)
}

is_number <- function(x) {
  (is.numeric(x) || is.logical(x)) && !is.object(x) && length(x) == 1L && !is.na(x)
}

check_number <- function(x, arg, lower = -Inf, upper = Inf, lower_open = FALSE,
                         upper_open = FALSE) {
  if (!is_number(x) || !is.numeric(x) || !is.finite(x))
    abort("`", arg, "` must be a single finite number, not ", describe(x), ".")
  if (lower_open && x <= lower)
    abort("`", arg, "` must be greater than ", lower, ", not ", describe(x), ".")
  if (x < lower)
    abort("`", arg, "` must be at least ", lower, ", not ", describe(x), ".")
  if (upper_open && x >= upper)
    abort("`", arg, "` must be less than ", upper, ", not ", describe(x), ".")
  if (x > upper)
    abort("`", arg, "` must be at most ", upper, ", not ", describe(x), ".")
  invisible(x)
}

check_count <- function(x, arg, lower = 1, upper = 2^52) {
  if (!is_number(x) || !is.numeric(x) || !is.finite(x) || x != round(x))
    abort("`", arg, "` must be a single whole number, not ", describe(x), ".")
  if (x < lower || x > upper)
    abort("`", arg, "` must be a whole number between ", format(lower, big.mark = ","),
          " and ", format(upper, scientific = upper > 1e15, big.mark = ","),
          ", not ", describe(x), ".")
  invisible(x)
}

check_flag <- function(x, arg) {
  if (!is.logical(x) || length(x) != 1L || is.na(x))
    abort("`", arg, "` must be TRUE or FALSE, not ", describe(x), ".")
  invisible(x)
}

# Functions whose options sit after `...` take them by exact name only; anything
# that lands in `...` is a misspelt or unknown argument.
check_dots_empty <- function(...) {
  if (...length() == 0L) return(invisible())
  # the names only: evaluating the arguments would turn `subset = !is.na(Ozone)`
  # into "object 'Ozone' not found" instead of naming the unknown argument
  nms <- names(substitute(list(...)))[-1L]
  if (is.null(nms)) nms <- rep("", ...length())
  named <- nms[nms != ""]
  if (length(named))
    abort("unknown argument", if (length(named) > 1) "s", ": ",
          paste0("`", named, "`", collapse = ", "), ".")
  abort("unexpected unnamed argument", if (sum(nms == "") > 1) "s",
        "; options after the first few must be given by name.")
}

# One of a few strings, like match.arg() but with a message naming the argument.
check_choice <- function(x, choices, arg) {
  if (identical(x, choices)) return(choices[1])
  if (!is.character(x) || length(x) != 1L || is.na(x) || !x %in% choices)
    abort("`", arg, "` must be one of ", paste0("\"", choices, "\"", collapse = ", "),
          "; not ", describe(x), ".")
  x
}

# Names of a model's d parameters, one each and all different.
check_parameter_names <- function(names, d) {
  if (!is.character(names) || length(names) != d || anyNA(names) || any(names == ""))
    abort("`names` must be ", d, " non-empty names (one per parameter), not ",
          describe(names), ".")
  if (anyDuplicated(names))
    abort("`names` must be distinct; '", names[anyDuplicated(names)], "' appears twice.")
  invisible(names)
}
