#!/usr/bin/python3
"""SGLD on a 784-H-10 ReLU network in PyTorch (CPU), for bench/fashion-mnist.R:
the time per epoch of the same algorithm as the package's sgld() on
model_mlp(x, y, hidden = H, family = "categorical"):

    w <- w + eta * g_hat + sqrt(2 * eta) * xi,
    g_hat = grad log prior(w) + (n / m) * sum over the batch of grad log lik,

softmax likelihood, N(0, 1 / fan-in) prior on every weight and bias of a
layer (or N(0, prior_sd^2) on all of them, model_mlp(prior = prior_normal(0, prior_sd))), inputs standardised with the training images' means and sds (a
constant pixel only centred), batches of m distinct images (a random
permutation per epoch, walked in order). Gradients by autograd; the update
in place under torch.no_grad().

  python3 bench/torch_mlp_sgld.py [n_train] [hidden] [epochs] [threads] [dtype] [prior_sd]
  (defaults 60000 400 2 2 float32, and the 1 / fan-in prior)

Reads Debian's dataset-fashion-mnist idx files. Prints one line per epoch
(seconds, the first epoch includes warm-up) and the test accuracy of the
last draw.
"""
import gzip, sys, time, math
import torch

D = "/usr/share/datasets/fashion-mnist/"

def idx(name, images):
    with gzip.open(D + name, "rb") as f:
        b = f.read()
    if images:
        n, r, c = (int.from_bytes(b[k:k + 4], "big") for k in (4, 8, 12))
        return torch.frombuffer(bytearray(b[16:]), dtype=torch.uint8).reshape(n, r * c).double()
    return torch.frombuffer(bytearray(b[8:]), dtype=torch.uint8).long()

args = sys.argv[1:]
n = int(args[0]) if len(args) > 0 else 60000
H = int(args[1]) if len(args) > 1 else 400
epochs = int(args[2]) if len(args) > 2 else 2
threads = int(args[3]) if len(args) > 3 else 2
dtype = getattr(torch, args[4]) if len(args) > 4 else torch.float32
prior_sd = float(args[5]) if len(args) > 5 else None
torch.set_num_threads(threads)
torch.manual_seed(1)

x = idx("train-images-idx3-ubyte.gz", True)[:n]
y = idx("train-labels-idx1-ubyte.gz", False)[:n]
xt = idx("t10k-images-idx3-ubyte.gz", True)
yt = idx("t10k-labels-idx1-ubyte.gz", False)
mu, sd = x.mean(0), x.std(0)
sd[sd == 0] = 1.0
X = ((x - mu) / sd).to(dtype)
Y = y
XT = ((xt - mu) / sd).to(dtype)

p, K, m, eta = X.shape[1], 10, 100, 0.05 / n
W1 = (torch.randn(H, p, dtype=dtype) * math.sqrt(2.0 / p)).requires_grad_()
b1 = torch.zeros(H, dtype=dtype, requires_grad=True)
W2 = (torch.randn(K, H, dtype=dtype) * math.sqrt(2.0 / H)).requires_grad_()
b2 = torch.zeros(K, dtype=dtype, requires_grad=True)
# (tensor, prior precision: the fan-in of its layer, or 1 / prior_sd^2)
prec1, prec2 = (p, H) if prior_sd is None else (1 / prior_sd**2, 1 / prior_sd**2)
params = [(W1, prec1), (b1, prec1), (W2, prec2), (b2, prec2)]

def logits(xb):
    return torch.relu(xb @ W1.T + b1) @ W2.T + b2

for e in range(epochs):
    t0 = time.perf_counter()
    perm = torch.randperm(n)
    for s in range(0, n - m + 1, m):
        idx_b = perm[s:s + m]
        ll = -torch.nn.functional.cross_entropy(logits(X[idx_b]), Y[idx_b], reduction="sum")
        lp = sum(-0.5 * prec * (w * w).sum() for w, prec in params)
        obj = (n / m) * ll + lp
        grads = torch.autograd.grad(obj, [w for w, _ in params])
        with torch.no_grad():
            for (w, _), g in zip(params, grads):
                w.add_(g, alpha=eta)
                w.add_(torch.randn_like(w), alpha=math.sqrt(2 * eta))
    print(f"epoch {e + 1}: {time.perf_counter() - t0:.3f} s", flush=True)

with torch.no_grad():
    acc = (logits(XT).argmax(1) == yt).double().mean().item()
print(f"n {n} hidden {H} threads {threads} {dtype}: test accuracy of the last draw {acc:.4f}")
