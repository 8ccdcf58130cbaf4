/* Sleeping: a sleep asked in seen time sleeps the real time that makes it at the rate now; an
 * absolute one ends at the real time its deadline is reached at that rate. A rate change during a
 * sleep leaves its real end where it was. */
#include "squall_clock.h"

#include <errno.h>
#include <unistd.h>

typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);

static int valid(const struct timespec *t) { return t->tv_sec >= 0 && t->tv_nsec >= 0 && t->tv_nsec < NS_PER_S; }

int nanosleep(const struct timespec *asked, struct timespec *left) {
    REAL(nanosleep_fn, "nanosleep");
    if (!on_frame() || asked == NULL || !valid(asked)) {
        return real(asked, left);
    }
    struct timespec wait = timespec_of(real_span(ns_of(asked))), real_left = {0, 0};
    int result = real(&wait, left ? &real_left : NULL);
    if (result != 0 && left != NULL) {
        *left = timespec_of(seen_span(ns_of(&real_left)));
    }
    return result;
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *asked, struct timespec *left) {
    REAL(clock_nanosleep_fn, "clock_nanosleep");
    if (!on_frame() || !sped_up_clock(clock) || asked == NULL || !valid(asked)) {
        return real(clock, flags, asked, left);
    }
    if (flags & TIMER_ABSTIME) {
        struct timespec deadline = real_deadline(clock, asked);
        return real(clock, flags, &deadline, left);
    }
    struct timespec wait = timespec_of(real_span(ns_of(asked))), real_left = {0, 0};
    int result = real(clock, flags, &wait, left ? &real_left : NULL);
    if (result == EINTR && left != NULL) {
        *left = timespec_of(seen_span(ns_of(&real_left)));
    }
    return result;
}

/* libc's usleep and sleep call its nanosleep from inside libc, where no preload reaches. */
int usleep(useconds_t us) {
    struct timespec asked = timespec_of((int64_t)us * 1000);
    return nanosleep(&asked, NULL);
}

unsigned int sleep(unsigned int seconds) {
    struct timespec asked = {(time_t)seconds, 0}, left = {0, 0};
    if (nanosleep(&asked, &left) == 0) {
        return 0;
    }
    return (unsigned int)left.tv_sec + (left.tv_nsec >= 500000000L);
}
