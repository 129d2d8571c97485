/*
 * Random numbers for the sampler: xoshiro256++ for bits, a ziggurat for normals.
 *
 * Runs are seeded from R's own generator, so set.seed() alone makes them
 * reproducible, and each chain gets its own stream by jumping 2^128 draws:
 * chain c's numbers never depend on how many chains run or in which order.
 */
#include <string.h>
#include <R.h>
#include <Rmath.h>
#include "sgld.h"

/* ---------------------------------------------------------- seeding -- */

/* splitmix64 spreads the (possibly low-entropy) seed words over all 64 bits */
static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

void rng_seed_from_r(sgld_rng *r) {
  GetRNGstate();
  for (int k = 0; k < 4; k++) {
    /* unif_rand() carries at least 32 good bits; take two words per state word */
    uint64_t hi = (uint64_t) (unif_rand() * 4294967296.0);
    uint64_t lo = (uint64_t) (unif_rand() * 4294967296.0);
    uint64_t x = (hi << 32) ^ lo ^ (uint64_t) k;
    r->s[k] = splitmix64(&x);
  }
  PutRNGstate();
  if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0) r->s[0] = 1;  /* all-zero is a fixed point */
}

/* n successive streams, each the previous jumped once: the first seeded from
   R's RNG. A run's chains take streams 0..chains-1 and their diagnostics
   chains..2*chains-1; sgld_streams() hands the same to R for runs split into
   futures, so either way R's RNG is used identically. */
void rng_seed_streams(sgld_rng *out, int n) {
  sgld_rng r;
  rng_seed_from_r(&r);
  for (int k = 0; k < n; k++) {
    if (k > 0) rng_jump(&r);
    out[k] = r;
  }
}

void rng_jump(sgld_rng *r) {
  /* the jump polynomial of xoshiro256 for 2^128 steps */
  static const uint64_t jump[4] = {
    UINT64_C(0x180ec6d33cfd0aba), UINT64_C(0xd5a61266f0c9392c),
    UINT64_C(0xa9582618e03fc9aa), UINT64_C(0x39abdc4529b1661c)
  };
  uint64_t acc[4] = {0, 0, 0, 0};
  for (int i = 0; i < 4; i++) {
    for (int b = 0; b < 64; b++) {
      if (jump[i] & (UINT64_C(1) << b))
        for (int k = 0; k < 4; k++) acc[k] ^= r->s[k];
      rng_next(r);
    }
  }
  for (int k = 0; k < 4; k++) r->s[k] = acc[k];
}

/* A stream saved by an earlier run (a fit's state), restored: all-zero is
   the one state xoshiro256 never leaves (it would then give 0 for ever, and
   rejection loops would not end), so it can only come from a damaged or
   altered fit, and is refused. */
void rng_restore(sgld_rng *r, const unsigned char *bytes, const char *what) {
  memcpy(r, bytes, sizeof *r);
  if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
    error("`init`: %s of the fit to continue is all zero, which no run leaves: the fit "
          "was altered or damaged; start from `init = fit$last` instead", what);
}

/* rng_below() beyond 32 bits (data sets of over four billion items): mask and
   reject, each try rejected with probability below 1/2 (the bound as in
   rng_below()) */
uint64_t rng_below_large(sgld_rng *r, uint64_t n) {
  uint64_t mask = n - 1;
  for (int s = 1; s < 64; s <<= 1) mask |= mask >> s;
  uint64_t x = rng_next(r) & mask;
  for (int tries = 0; x >= n && tries < 256; tries++) x = rng_next(r) & mask;
  return x < n ? x : x % n;
}

/* --------------------------------------------------------- ziggurat -- */

/*
 * 256 strips of equal area ZIG_V under exp(-x^2/2): strip 0 is the base
 * rectangle [0, R] plus the tail beyond R, represented with width V / f(R).
 * x[i] is the right edge of strip i; x[256] = 0. The tables are built here
 * from R and V alone (Marsaglia & Tsang, 2000).
 */
#define ZIG_R 3.6541528853610088
#define ZIG_V 4.92867323399e-3

double sgld_zig_x[257];
static double zig_f[257];

static double gauss(double x) { return exp(-0.5 * x * x); }

void rng_init_tables(void) {
  sgld_zig_x[0] = ZIG_V / gauss(ZIG_R);
  sgld_zig_x[1] = ZIG_R;
  zig_f[0] = 0.0;
  zig_f[1] = gauss(ZIG_R);
  for (int i = 1; i < 255; i++) {
    zig_f[i + 1] = zig_f[i] + ZIG_V / sgld_zig_x[i];
    sgld_zig_x[i + 1] = sqrt(-2.0 * log(zig_f[i + 1]));
  }
  sgld_zig_x[256] = 0.0;
  zig_f[256] = 1.0;
}

double rng_norm_slow(sgld_rng *r, uint64_t bits) {
  for (;;) {
    int i = (int) (bits & 0xFF);
    double u = (double) ((int64_t) bits >> 11) * 0x1.0p-52;
    double z = u * sgld_zig_x[i];
    if (fabs(z) < sgld_zig_x[i + 1]) return z;
    if (i == 0) {
      /* tail beyond R by Marsaglia's exponential rejection */
      double a, b;
      do {
        a = -log(rng_unif(r)) / ZIG_R;
        b = -log(rng_unif(r));
      } while (b + b < a * a);
      return u < 0 ? -(ZIG_R + a) : ZIG_R + a;
    }
    /* wedge: accept if a uniform height in the strip falls under the curve */
    double y = zig_f[i] + rng_unif(r) * (zig_f[i + 1] - zig_f[i]);
    if (y < gauss(z)) return z;
    bits = rng_next(r);
  }
}

/* ------------------------------------------------- test entry point -- */

/* Draws from the engine's generators, for the package's own tests:
   kind 0 = normals, 1 = uniforms, 2 = integers below `bound`; stream = chain index. */
SEXP sgld_rng_draws(SEXP n_, SEXP kind_, SEXP bound_, SEXP stream_) {
  R_xlen_t n = (R_xlen_t) asReal(n_);
  int kind = asInteger(kind_), stream = asInteger(stream_);
  double bound = asReal(bound_);
  sgld_rng r;
  rng_seed_from_r(&r);
  for (int c = 0; c < stream; c++) rng_jump(&r);
  SEXP out = PROTECT(allocVector(REALSXP, n));
  double *o = REAL(out);
  for (R_xlen_t i = 0; i < n; i++) {
    if (kind == 0) o[i] = rng_norm(&r);
    else if (kind == 1) o[i] = rng_unif(&r);
    else o[i] = (double) rng_below(&r, (uint64_t) bound);
  }
  UNPROTECT(1);
  return out;
}

/* The 2 x chains streams a run of `chains` chains seeds itself with (all main
   streams, then all diagnostics streams: the layout `rng_init` takes), drawn
   from R's RNG exactly as sgld_run() draws them. */
SEXP sgld_streams(SEXP chains_) {
  int chains = asInteger(chains_);
  if (chains == NA_INTEGER || chains < 1 || chains > 100000)
    error("internal: 'chains' must be a whole number from 1 to 100000");
  sgld_rng *r = (sgld_rng *) R_alloc(2 * (size_t) chains, sizeof(sgld_rng));
  rng_seed_streams(r, 2 * chains);
  SEXP out = PROTECT(allocVector(RAWSXP, 2 * chains * (R_xlen_t) sizeof(sgld_rng)));
  memcpy(RAW(out), r, 2 * chains * sizeof(sgld_rng));
  UNPROTECT(1);
  return out;
}
