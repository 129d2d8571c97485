#!/usr/bin/env python3
"""SGLD in PyTorch (CPU; float64, one thread unless told) for bench/throughput.R
and bench/speed.R.

The same algorithm as the package (REFERENCE.md section 1):
    w <- w + eta * g_hat + sqrt(2 * eta * tau) * xi,
    g_hat = grad log prior(w) + (n / m) * sum over the batch of grad log lik,
a batch being m distinct items drawn afresh each iteration, every draw kept
in a preallocated iter x d tensor.

  minibatch: torch.randint(n, (m,)), redrawn whole while torch.unique finds a
             repeat (an exact uniform m-subset). Measured faster than
             torch.randperm(n)[:m] (O(n) per batch) and torch.multinomial
             without replacement at these n and m.
  gradient:  hand-written tensor ops on the batch's rows (X[idx] then two
             matrix-vector products) under torch.inference_mode(), the
             default; --grad autograd builds the log posterior and calls
             torch.autograd.grad instead (2-7x slower when measured
             while writing this; the gap is widest at batch 10).
  noise:     torch.randn(d).

Models (data from files written by bench/throughput.R, native-endian float64):
  linear    FILE holds n, then x[n], then y[n] (handout); NIG prior mean 0,
            V = 100 I, a = b = 1, w = (b0, b1, log sigma2), log prior with the
            Jacobian of sigma2 = e^gamma, as ?prior_nig.
  logistic  FILE holds n, p, then the n x p design row by row (intercept
            column included), then y[n] in {-1, +1}; Laplace(0, 1) prior,
            subgradient 0 at 0.

  --synthetic N,D instead of --data: logistic regression on N rows of an
            intercept and D - 1 standard normal covariates, y = +-1 at random
            (bench/speed.R; the cost does not depend on the values).
  --dtype float32 keeps the data, the state and the arithmetic in single
            precision (the draws are stored as float64); --threads sets
            torch.set_num_threads.

Prints the elapsed seconds of each repetition's loop (data loading and the
first, untimed warm-up repetition excluded), one per line; with --draws FILE,
runs --chains independent chains instead (one after another, from the same
start) and writes their draws there (chains x iter x d, C order, float64).
"""
import argparse
import math
import sys
import time

import numpy as np
import torch


def load(model, path):
    raw = np.fromfile(path, dtype=np.float64)
    if model == "linear":
        n = int(raw[0])
        x = torch.from_numpy(raw[1:1 + n].copy())
        y = torch.from_numpy(raw[1 + n:1 + 2 * n].copy())
        X = torch.stack([torch.ones(n, dtype=torch.float64), x], dim=1).contiguous()
        return X, y
    n, p = int(raw[0]), int(raw[1])
    X = torch.from_numpy(raw[2:2 + n * p].copy()).reshape(n, p).contiguous()
    y = torch.from_numpy(raw[2 + n * p:2 + n * p + n].copy())
    return X, y


def draw_batch(n, m):
    """m distinct indices, uniformly: randint, redrawn whole on a repeat;
    randperm when a repeat is likely (m^2 > n: at n = 1000, m = 100 about
    150 redraws a batch were measured)."""
    if m * m > n:
        return torch.randperm(n)[:m]
    while True:
        idx = torch.randint(n, (m,))
        if m == 1 or torch.unique(idx).numel() == m:
            return idx


def run_linear(X, y, lr, m, iters, init, grad):
    n, p = X.shape
    d = p + 1
    scale, sd = n / m, math.sqrt(2.0 * lr)
    vinv, a, b = 0.01, 1.0, 1.0
    draws = torch.empty(iters, d, dtype=torch.float64)
    if grad == "hand":
        # fewest tensor operations: log sigma2 and the scalar parts of the
        # gradient as Python floats, the batch sums as tensor ops
        with torch.inference_mode():
            w = torch.tensor(init, dtype=torch.float64)
            g = torch.empty(d, dtype=torch.float64)
            beta, gb = w[:p], g[:p]            # views, updated in place
            for t in range(iters):
                idx = draw_batch(n, m)
                Xb, yb = X[idx], y[idx]
                gam = w[p].item()
                prec = math.exp(-gam)
                r = yb - Xb @ beta
                torch.add(torch.mv(Xb.T, r), beta, alpha=-vinv / scale, out=gb)
                gb.mul_(scale * prec)
                g[p] = (scale * (-0.5 * m + 0.5 * prec * torch.dot(r, r).item()) - 0.5 * p
                        + 0.5 * prec * vinv * torch.dot(beta, beta).item()
                        - (a + 1) + b * prec + 1)
                w.add_(g, alpha=lr).add_(torch.randn(d, dtype=torch.float64), alpha=sd)
                draws[t] = w
        return draws
    w = torch.tensor(init, dtype=torch.float64)
    for t in range(iters):
        idx = draw_batch(n, m)
        Xb, yb = X[idx], y[idx]
        wv = w.detach().requires_grad_(True)
        beta, gam = wv[:p], wv[p]
        r = yb - Xb @ beta
        prec = torch.exp(-gam)
        loglik = -0.5 * m * gam - 0.5 * prec * (r @ r)
        logprior = (-0.5 * p * gam - 0.5 * prec * vinv * (beta @ beta)
                    - (a + 1) * gam - b * prec + gam)
        (gw,) = torch.autograd.grad(scale * loglik + logprior, wv)
        with torch.no_grad():
            w = w + lr * gw + sd * torch.randn(d, dtype=torch.float64)
            draws[t] = w
    return draws


def run_logistic(X, y, lr, m, iters, init, grad):
    n, d = X.shape
    scale, sd = n / m, math.sqrt(2.0 * lr)
    draws = torch.empty(iters, d, dtype=torch.float64)
    if grad == "hand":
        with torch.inference_mode():
            w = torch.tensor(init, dtype=X.dtype)
            for t in range(iters):
                idx = draw_batch(n, m)
                Xb, yb = X[idx], y[idx]
                c = yb * torch.sigmoid(-yb * torch.mv(Xb, w))
                g = torch.addmv(torch.sign(w), Xb.T, c, beta=-1.0, alpha=scale)
                w.add_(g, alpha=lr).add_(torch.randn(d, dtype=X.dtype), alpha=sd)
                draws[t] = w
        return draws
    w = torch.tensor(init, dtype=torch.float64)
    for t in range(iters):
        idx = draw_batch(n, m)
        Xb, yb = X[idx], y[idx]
        wv = w.detach().requires_grad_(True)
        loglik = torch.nn.functional.logsigmoid(yb * (Xb @ wv)).sum()
        logprior = -wv.abs().sum()   # autograd's subgradient of |w| at 0 is 0
        (gw,) = torch.autograd.grad(scale * loglik + logprior, wv)
        with torch.no_grad():
            w = w + lr * gw + sd * torch.randn(d, dtype=torch.float64)
            draws[t] = w
    return draws


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["linear", "logistic"], required=True)
    ap.add_argument("--data", default=None, help="binary data file (see module doc)")
    ap.add_argument("--synthetic", default=None, help="N,D: simulated logistic data")
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--iter", type=int, required=True)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--init", type=str, default=None,
                    help="comma-separated start (default: zeros; linear: 0, 0, log var(y))")
    ap.add_argument("--grad", choices=["hand", "autograd"], default="hand")
    ap.add_argument("--draws", default=None, help="write the draws here instead of timing")
    ap.add_argument("--chains", type=int, default=1, help="with --draws: independent chains")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    if a.synthetic:
        n, d = (int(float(v)) for v in a.synthetic.split(","))
        X = torch.randn(n, d, dtype=torch.float64)
        X[:, 0] = 1.0
        y = torch.randint(2, (n,)).to(torch.float64) * 2 - 1
    else:
        X, y = load(a.model, a.data)
    if a.dtype == "float32":
        X, y = X.float(), y.float()
    if a.init:
        init = [float(v) for v in a.init.split(",")]
    elif a.model == "linear":
        init = [0.0, 0.0, math.log(float(torch.var(y)))]
    else:
        init = [0.0] * X.shape[1]
    run = run_linear if a.model == "linear" else run_logistic

    if a.draws:
        draws = torch.stack([run(X, y, a.lr, a.batch, a.iter, init, a.grad)
                             for _ in range(a.chains)])
        draws.numpy().tofile(a.draws)
        return
    run(X, y, a.lr, a.batch, min(a.iter, 1000), init, a.grad)   # warm-up, untimed
    for _ in range(a.reps):
        t0 = time.perf_counter()
        run(X, y, a.lr, a.batch, a.iter, init, a.grad)
        print("%.6f" % (time.perf_counter() - t0))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
