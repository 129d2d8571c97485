#' Read Fashion-MNIST from its idx files
#'
#' Reads the Fashion-MNIST images (28 x 28 grey levels) and labels from the
#' idx files Debian's `dataset-fashion-mnist` package installs (in
#' `/usr/share/datasets/fashion-mnist`), or from `path`. The data are not
#' shipped with sgld.
#'
#' @param path The folder holding `train-images-idx3-ubyte(.gz)`,
#'   `train-labels-idx1-ubyte(.gz)`, `t10k-images-idx3-ubyte(.gz)` and
#'   `t10k-labels-idx1-ubyte(.gz)`; `NULL` to look where Debian's package puts them.
#' @param split `"train"` (60,000 images) or `"test"` (10,000).
#' @param n Read only the first `n` images (all when `NULL`).
#' @return A list with `x`, an images x 784 matrix of grey levels scaled to
#'   \[0, 1\] (pixels row by row), and `y`, a factor of the ten classes.
#' @examples
#' if (dir.exists("/usr/share/datasets/fashion-mnist")) {
#'   d <- read_fashion_mnist(split = "test", n = 100)
#'   table(d$y)
#' }
#' @export
read_fashion_mnist <- function(path = NULL, split = c("train", "test"), n = NULL) {
  split <- check_choice(split, c("train", "test"), "split")
  if (!is.null(n)) check_count(n, "n", lower = 1)
  if (is.null(path)) {
    path <- "/usr/share/datasets/fashion-mnist"
    if (!dir.exists(path)) {
      listed <- suppressWarnings(tryCatch(
        system2("dpkg", c("-L", "dataset-fashion-mnist"), stdout = TRUE, stderr = FALSE),
        error = function(e) character()))
      hit <- grep("train-images-idx3-ubyte", listed, value = TRUE)
      if (!length(hit))
        abort("Fashion-MNIST is not installed: install Debian's package ",
              "(apt-get install dataset-fashion-mnist) or give `path`, the folder of its idx files.")
      path <- dirname(hit[1])
    }
  }
  if (!is.character(path) || length(path) != 1L || !dir.exists(path))
    abort("`path` must be the folder of the Fashion-MNIST idx files; '", format(path),
          "' is not a folder.")
  stem <- if (split == "train") "train" else "t10k"
  find <- function(kind) {
    f <- file.path(path, paste0(stem, "-", kind))
    for (cand in c(f, paste0(f, ".gz"))) if (file.exists(cand)) return(cand)
    abort("`path` ('", path, "') has no file ", basename(f), " or ", basename(f), ".gz.")
  }
  images <- read_idx(find("images-idx3-ubyte"), 3L, n)
  labels <- read_idx(find("labels-idx1-ubyte"), 1L, n)
  if (nrow(images) != length(labels))
    abort("the image and label files of '", path, "' hold different numbers of items.")
  classes <- c("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot")
  list(x = images / 255, y = factor(classes[labels + 1L], levels = classes))
}

# An idx file of unsigned bytes: magic 0x00000800 + number of dimensions,
# the dimensions as big-endian 32-bit integers, then the data.
read_idx <- function(file, dims, n = NULL) {
  con <- if (grepl("\\.gz$", file)) gzfile(file, "rb") else file(file, "rb")
  on.exit(close(con))
  magic <- readBin(con, "integer", 1L, size = 4L, endian = "big")
  if (length(magic) != 1L || magic != 2048L + dims)
    abort("'", file, "' is not an idx file of ", dims, "-dimensional unsigned bytes.")
  size <- readBin(con, "integer", dims, size = 4L, endian = "big")
  count <- if (is.null(n)) size[1] else min(n, size[1])
  per <- prod(size[-1])
  bytes <- readBin(con, "raw", count * per)
  if (length(bytes) != count * per) abort("'", file, "' is shorter than its header says.")
  v <- as.integer(bytes)
  if (dims == 1L) v else matrix(v, count, per, byrow = TRUE)
}
