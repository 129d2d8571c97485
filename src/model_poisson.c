/*
 * Bayesian Poisson regression with the log link:
 *   y_i | beta ~ Poisson(exp(eta_i)),  eta_i = x_i' beta + o_i,
 * o_i an optional offset (log exposure), optional case weights c_i (row i's
 * log likelihood counts c_i times), and normal priors on the coefficients,
 * the intercept's optionally on centred predictors (prior_centred.h).
 *
 * The data are rows dense or sparse (rows.h). Row i's
 * log likelihood is c_i (y_i eta_i - e^eta_i - log y_i!); log y_i! is
 * computed once, when the model is built.
 */
#include "count_rows.h"

typedef count_rows poisson_data;

static inline double eta_of(const poisson_data *L, R_xlen_t i, const double *w) {
  return rows_dot(&L->X, i, w, L->offset ? L->offset[i] : 0.0);
}

static inline double y_of(const poisson_data *L, R_xlen_t i) {
  return rows_y(&L->X, i);
}

static inline double wt_of(const poisson_data *L, R_xlen_t i) {
  return L->wt ? L->wt[i] : 1.0;
}

static inline double row_loglik(const poisson_data *L, R_xlen_t i, const double *w) {
  const double eta = eta_of(L, i, w);
  return wt_of(L, i) * (y_of(L, i) * eta - exp(eta) - L->log_fact[i]);
}

static void poisson_grad_loglik(const void *data, const double *w, const R_xlen_t *idx,
                                int m, double *g, double *work) {
  (void) work;
  const poisson_data *L = data;
  for (int k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    const double c = wt_of(L, i) * (y_of(L, i) - exp(eta_of(L, i, w)));
    rows_axpy(&L->X, i, c, g);
  }
}

static double poisson_loglik(const void *data, const double *w, const R_xlen_t *idx,
                             R_xlen_t m, double *work) {
  (void) work;
  const poisson_data *L = data;
  if (!idx) m = L->n;
  double ll = 0.0;
  for (R_xlen_t k = 0; k < m; k++) ll += row_loglik(L, idx ? idx[k] : k, w);
  return ll;
}

static void poisson_loglik_rows(const void *data, const double *w, R_xlen_t from,
                                R_xlen_t to, double *out) {
  const poisson_data *L = data;
  for (R_xlen_t i = from; i < to; i++) out[i - from] = row_loglik(L, i, w);
}

static double poisson_logprior(const void *data, const double *w) {
  return coef_prior_log(&((const poisson_data *) data)->prior, w);
}

static void poisson_grad_logprior(const void *data, const double *w, double *g) {
  coef_prior_grad(&((const poisson_data *) data)->prior, w, g);
}

/* the log posterior along coefficient j (sgld.h), up to a constant and the
   centred term (coord_centre): the rows
   idx[0..m) with beta_j = v, whose linear predictors move by x_ij (v - beta_j) */
static double poisson_logpost_coordinate(const void *data, const double *w, int j, double v,
                                         const R_xlen_t *idx, R_xlen_t m) {
  const poisson_data *L = data;
  double lp = coef_prior_coordinate(&L->prior, j, v);
  for (R_xlen_t k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    const double eta = eta_of(L, i, w) + rows_entry(&L->X, i, j) * (v - w[j]);
    lp += wt_of(L, i) * (y_of(L, i) * eta - exp(eta));
  }
  return lp;
}

const char *const model_poisson_metrics[] = {"test_loglik", NULL};

static void poisson_metrics(const void *data, const double *w, double *out, double *work) {
  const poisson_data *L = data;
  out[0] = poisson_loglik(data, w, NULL, 0, work) / (double) L->n;
}

/* Under q = N(mu, diag(sd^2)) row i's linear predictor is N(a_i, v_i),
   a_i = x_i' mu + o_i, v_i = sum_j x_ij^2 sd_j^2. */
static inline void row_moments(const poisson_data *L, R_xlen_t i, const double *mu,
                               const double *sd, double *a, double *v) {
  rows_moments(&L->X, i, mu, sd, L->offset ? L->offset[i] : 0.0, a, v);
}

/* g_mu += c x_i and g_sd += f x_i^2 sd (elementwise) */
static inline void add_row_gradients(const poisson_data *L, R_xlen_t i, double c, double f,
                                     const double *sd, double *g_mu, double *g_sd) {
  rows_add_gradients(&L->X, i, c, f, sd, g_mu, g_sd);
}

/* Local reparameterisation (sgld.h: grad_loglik_local): eta_i = a_i +
   sqrt(v_i) e_i, one e_i per row; with c_i = d/d eta of the row's log
   likelihood, d/d mu_j = c_i x_ij and d/d sd_j = c_i e_i x_ij^2 sd_j / sqrt(v_i). */
static double poisson_grad_loglik_local(const void *data, const double *mu, const double *sd,
                                        const R_xlen_t *idx, int m, sgld_rng *rng,
                                        double *g_mu, double *g_sd, double *work) {
  (void) work;
  const poisson_data *L = data;
  double ll = 0.0;
  for (int k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    double a, v;
    row_moments(L, i, mu, sd, &a, &v);
    const double s = sqrt(v), e = rng_norm(rng), eta = a + s * e, rate = exp(eta);
    const double y = y_of(L, i), c = wt_of(L, i) * (y - rate);
    ll += wt_of(L, i) * (y * eta - rate - L->log_fact[i]);
    add_row_gradients(L, i, c, s > 0 ? c * e / s : 0.0, sd, g_mu, g_sd);
  }
  return ll;
}

/* The expectation under q (sgld.h: expected_loglik), in closed form: with
   eta_i ~ N(a_i, v_i), E[e^eta_i] = e^(a_i + v_i / 2), so row i's expected
   log likelihood is c_i (y_i a_i - e^(a_i + v_i / 2) - log y_i!); its
   derivative in a_i is c_i (y_i - e^(a_i + v_i/2)), and twice that in v_i is
   -c_i e^(a_i + v_i/2), which times x_ij^2 sd_j is d/d sd_j. */
static double poisson_expected_loglik(const void *data, const double *mu, const double *sd,
                                      const R_xlen_t *idx, int m, double *g_mu, double *g_sd,
                                      double *work) {
  (void) work;
  const poisson_data *L = data;
  double ll = 0.0;
  for (int k = 0; k < m; k++) {
    const R_xlen_t i = idx[k];
    double a, v;
    row_moments(L, i, mu, sd, &a, &v);
    const double c = wt_of(L, i), y = y_of(L, i), rate = exp(a + 0.5 * v);
    ll += c * (y * a - rate - L->log_fact[i]);
    add_row_gradients(L, i, c * (y - rate), -c * rate, sd, g_mu, g_sd);
  }
  return ll;
}

/* E_q[log prior] (prior_centred.h) */
static double poisson_expected_logprior(const void *data, const double *mu, const double *sd,
                                        double *g_mu, double *g_sd) {
  return coef_prior_expected(&((const poisson_data *) data)->prior, mu, sd, g_mu, g_sd);
}

sgld_model model_poisson_build(SEXP spec) {
  poisson_data *L = (poisson_data *) R_alloc(1, sizeof(poisson_data));
  count_rows_read(L, spec, "Poisson");

  return (sgld_model) {
    .d = L->p,
    .n = L->n,
    .data = L,
    .grad_loglik = poisson_grad_loglik,
    .loglik = poisson_loglik,
    .loglik_rows = poisson_loglik_rows,
    .grad_logprior = poisson_grad_logprior,
    .logprior = poisson_logprior,
    .metrics = poisson_metrics,
    .grad_loglik_local = poisson_grad_loglik_local,
    .expected_loglik = poisson_expected_loglik,
    .expected_logprior = poisson_expected_logprior,
    .logpost_coordinate = poisson_logpost_coordinate,
    .coord_centre = L->prior.centre,
    .coord_centre_loc = L->prior.centre_loc,
    .coord_centre_scale = L->prior.centre_scale
  };
}
