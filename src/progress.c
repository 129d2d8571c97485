/*
 * The progress display: one line on stderr, redrawn in place at most
 * REDRAW_SECONDS apart by the main thread between chunks, showing the
 * iterations done of the total (all chains), the speed, the time left and
 * how many chains are running, done, and diverged or stopped. Runs shorter
 * than QUIET_SECONDS draw nothing, so quick calls stay quiet even with the
 * display on. The cost is one clock read per chunk (chunks last about 10 ms)
 * and a line of output a few times a second.
 */
#include <stdio.h>
#include <R_ext/Print.h>
#include "run.h"
#ifdef _WIN32
#include <windows.h>
#else
#include <time.h>
#endif

#define REDRAW_SECONDS 0.25
#define QUIET_SECONDS 0.5

/* seconds on a monotonic clock */
double wall_seconds(void) {
#ifdef _WIN32
  LARGE_INTEGER count, freq;
  QueryPerformanceCounter(&count);
  QueryPerformanceFrequency(&freq);
  return (double) count.QuadPart / (double) freq.QuadPart;
#else
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
#endif
}

void progress_begin(progress_line *p, int on, R_xlen_t total, int chains) {
  p->on = on;
  p->drawn = 0;
  p->started = p->last_drawn = wall_seconds();
  p->total = total;
  p->chains = chains;
}

/* 1234567 as "1.23M": short enough for one line at any size */
static void short_count(char *buf, size_t size, double x) {
  if (x >= 1e9) snprintf(buf, size, "%.3gG", x / 1e9);
  else if (x >= 1e6) snprintf(buf, size, "%.3gM", x / 1e6);
  else if (x >= 1e4) snprintf(buf, size, "%.3gk", x / 1e3);
  else snprintf(buf, size, "%.0f", x);
}

static void short_time(char *buf, size_t size, double s) {
  if (s < 60) snprintf(buf, size, "%.0fs", s);
  else if (s < 3600) snprintf(buf, size, "%dm%02ds", (int) (s / 60), (int) s % 60);
  else snprintf(buf, size, "%.1fh", s / 3600);
}

void progress_update(progress_line *p, const chain *chains, int final) {
  if (!p->on) return;
  const double now = wall_seconds(), elapsed = now - p->started;
  if (!final && (elapsed < QUIET_SECONDS || now - p->last_drawn < REDRAW_SECONDS)) return;
  if (final && !p->drawn && elapsed < QUIET_SECONDS) return;
  double done = 0, left = 0;
  int running = 0, finished = 0, diverged = 0;
  for (int c = 0; c < p->chains; c++) {
    const chain *ch = &chains[c];
    done += (double) ch->t;
    if (ch->running) {
      left += (double) (p->total - ch->t);
    } else if (ch->res.status == STATUS_NOT_RUN) {
      left += (double) p->total;         /* one after the other: not started yet */
    }
    running += ch->running;
    finished += !ch->running && ch->res.status == STATUS_DONE && ch->t == p->total;
    diverged += ch->res.status == STATUS_NONFINITE_PARAMETER ||
                ch->res.status == STATUS_NONFINITE_GRADIENT;
  }
  const double rate = elapsed > 0 ? done / elapsed : 0;
  char n_done[16], n_total[16], speed[16], eta[16];
  short_count(n_done, sizeof n_done, done);
  short_count(n_total, sizeof n_total, (double) p->total * p->chains);
  short_count(speed, sizeof speed, rate);
  short_time(eta, sizeof eta, final ? elapsed : (rate > 0 ? left / rate : 0));
  REprintf("\rsgld %3.0f%% | %s/%s it | %s it/s | %s %s | chains: %d running, %d done, %d diverged ",
           100.0 * done / ((double) p->total * p->chains), n_done, n_total, speed, eta,
           final ? "total" : "left", running, finished, diverged);
  if (final) REprintf("\n");
  p->drawn = 1;
  p->last_drawn = now;
}
