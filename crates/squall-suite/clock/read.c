/* Reading the time: every clock but the CPU-time ones reads seen time. */
#include "squall_clock.h"

#include <stddef.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);
typedef int (*timespec_get_fn)(struct timespec *, int);

int clock_gettime(clockid_t clock, struct timespec *t) {
    REAL(clock_gettime_fn, "clock_gettime");
    int result = real(clock, t);
    if (result == 0 && on_frame() && sped_up_clock(clock)) {
        *t = timespec_of(seen_of_real(clock, ns_of(t)));
    }
    return result;
}

/* Whether `p` points somewhere (glibc declares gettimeofday's first argument non-null; callers
 * may still pass NULL). */
static int present(const void *p) { return p != NULL; }

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    REAL(gettimeofday_fn, "gettimeofday");
    int result = real(tv, tz);
    if (result == 0 && present(tv) && on_frame()) {
        int64_t seen = seen_ns(CLOCK_REALTIME);
        tv->tv_sec = (time_t)(seen / NS_PER_S);
        tv->tv_usec = (suseconds_t)(seen % NS_PER_S / 1000);
    }
    return result;
}

time_t time(time_t *out) {
    time_t now = (time_t)(seen_ns(CLOCK_REALTIME) / NS_PER_S);
    if (out != NULL) {
        *out = now;
    }
    return now;
}

int timespec_get(struct timespec *t, int base) {
    REAL(timespec_get_fn, "timespec_get");
    int result = real(t, base);
    if (result == TIME_UTC && on_frame()) {
        *t = timespec_of(seen_of_real(CLOCK_REALTIME, ns_of(t)));
    }
    return result;
}
