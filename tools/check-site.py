#!/usr/bin/env python3
"""Opens every page of the pkgdown site in headless Chromium and checks it.

    python3 tools/check-site.py [--screenshots DIR] [site directory, default docs]

The site is served from a local HTTP server on 127.0.0.1; Chromium runs
headless under chromedriver (Debian's chromium and chromium-driver) with a
fresh profile and no background networking. For every HTML page it checks
that the page opens (served, with a title), that the browser's console shows
no error (a script error, a resource that failed to load), that every image
has loaded with a size, that every link within the site points to a file
that exists, and that no code box cuts a line: at a desktop window width
(WINDOW, the width a reader of the site has), each <pre> must show its whole
width (its scroll width no larger than its box), so no line is hidden
behind a scroll bar. With --screenshots DIR it also saves a PNG of every
page there, to look at. Exits 1 listing the failures, 0 when every page passes. Uses the
Python standard library only.
"""
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGE_SECONDS = 30
WINDOW = (1280, 1000)   # a laptop's browser window, in CSS pixels


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(root):
    """A quiet HTTP server over `root` that remembers what it could not serve."""
    missing = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=root, **kwargs)

        def send_error(self, code, message=None, explain=None):
            missing.append((code, self.path))
            super().send_error(code, message, explain)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, missing


class Driver:
    """The few WebDriver commands the check needs, over chromedriver's HTTP API."""

    def __init__(self, profile):
        self.port = free_port()
        self.process = subprocess.Popen([CHROMEDRIVER, "--port=%d" % self.port],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.base = "http://127.0.0.1:%d" % self.port
        for _ in range(100):
            try:
                self.call("GET", "/status")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        options = {"binary": CHROMIUM, "args": FLAGS + ["--user-data-dir=" + profile]}
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options,
            "goog:loggingPrefs": {"browser": "ALL"},
            "timeouts": {"pageLoad": PAGE_SECONDS * 1000, "script": PAGE_SECONDS * 1000}}}}
        self.session = self.call("POST", "/session", caps)["sessionId"]

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=PAGE_SECONDS + 30) as r:
                return json.loads(r.read().decode())["value"]
        except urllib.error.HTTPError as e:
            value = json.loads(e.read().decode()).get("value", {})
            raise RuntimeError("%s %s: %s" % (method, path, value.get("message", value)))

    def open(self, url):
        self.call("POST", "/session/%s/url" % self.session, {"url": url})

    def run(self, script):
        return self.call("POST", "/session/%s/execute/sync" % self.session,
                         {"script": script, "args": []})

    def resize(self, width, height):
        self.call("POST", "/session/%s/window/rect" % self.session,
                  {"width": width, "height": height})

    def screenshot(self, path):
        import base64
        png = self.call("GET", "/session/%s/screenshot" % self.session)
        with open(path, "wb") as f:
            f.write(base64.b64decode(png))

    def console(self):
        return self.call("POST", "/session/%s/se/log" % self.session, {"type": "browser"})

    def close(self):
        try:
            self.call("DELETE", "/session/%s" % self.session)
        finally:
            self.process.terminate()
            self.process.wait(10)


# Done when the page has loaded and MathJax (if the page has it) has
# typeset; then the state of its images and its links within the site.
WAIT = """
return document.readyState === 'complete' &&
  (typeof MathJax === 'undefined' || !MathJax.Hub ||
   (MathJax.isReady && MathJax.Hub.queue.pending === 0 && MathJax.Hub.queue.running === 0));
"""
INSPECT = """
var imgs = Array.from(document.images);
return {
  title: document.title,
  images: imgs.length,
  broken: imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; })
              .map(function (i) { return i.getAttribute('src').slice(0, 100); }),
  links: Array.from(document.querySelectorAll('a[href]')).map(function (a) { return a.href; }),
  cut: Array.from(document.querySelectorAll('pre'))
    .filter(function (p) { return p.scrollWidth > p.clientWidth + 1; })
    .map(function (p) {
      var lines = p.textContent.split('\\n');
      var longest = lines.reduce(function (a, b) { return b.length > a.length ? b : a; }, '');
      return p.scrollWidth + ' px in a box of ' + p.clientWidth + ': ' + longest.slice(0, 90);
    })
};
"""


def main():
    args = sys.argv[1:]
    shots = None
    if args[:1] == ["--screenshots"]:
        shots = os.path.abspath(args[1])
        os.makedirs(shots, exist_ok=True)
        args = args[2:]
    root = os.path.abspath(args[0] if args else "docs")
    if not os.path.isfile(os.path.join(root, "index.html")):
        sys.exit("no site at %s: build it with `make site`" % root)
    for tool in (CHROMIUM, CHROMEDRIVER):
        if not os.access(tool, os.X_OK):
            sys.exit("%s is missing (bash tools/install-deps.sh --site)" % tool)
    pages = sorted(os.path.relpath(os.path.join(d, f), root)
                   for d, _, files in os.walk(root) for f in files
                   if f.endswith(".html") and not os.path.relpath(d, root).startswith("mathjax"))
    server, missing = serve(root)
    host = "http://127.0.0.1:%d/" % server.server_address[1]
    profile = tempfile.mkdtemp(prefix="sgld-site-check-")
    failures = []
    images = 0
    started = time.time()
    driver = Driver(profile)
    driver.resize(*WINDOW)
    try:
        for page in pages:
            url = host + urllib.parse.quote(page)
            before = len(missing)
            problems = []
            try:
                driver.open(url)
                deadline = time.time() + PAGE_SECONDS
                while not driver.run(WAIT):
                    if time.time() > deadline:
                        problems.append("did not finish loading in %d s" % PAGE_SECONDS)
                        break
                    time.sleep(0.1)
                state = driver.run(INSPECT)
            except RuntimeError as e:
                failures.append((page, ["did not open: %s" % e]))
                continue
            for entry in driver.console():
                if entry.get("level") == "SEVERE":
                    problems.append("console: " + entry.get("message", "")[:300])
            if not state["title"].strip():
                problems.append("no title")
            images += state["images"]
            problems += ["image did not load: " + src for src in state["broken"]]
            problems += ["code box cuts a line (%s)" % c for c in state["cut"]]
            if shots:
                driver.screenshot(os.path.join(shots, page.replace(os.sep, "_") + ".png"))
            for link in state["links"]:
                if not link.startswith(host):
                    continue
                path = urllib.parse.unquote(urllib.parse.urlsplit(link).path[1:]) or "index.html"
                target = os.path.join(root, path)
                if os.path.isdir(target):
                    target = os.path.join(target, "index.html")
                if not os.path.exists(target):
                    problems.append("link to a missing file: " + path)
            problems += ["not served (%d): %s" % m for m in missing[before:]]
            if problems:
                failures.append((page, sorted(set(problems))))
    finally:
        driver.close()
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    print("%d pages, %d images, %.0f s" % (len(pages), images, time.time() - started))
    for page, problems in failures:
        print("FAIL %s" % page)
        for p in problems:
            print("  " + p)
    if failures:
        print("%d of %d pages failed" % (len(failures), len(pages)))
        sys.exit(1)
    print("every page opened, with no console error, every image loaded and no code line cut")


if __name__ == "__main__":
    main()
