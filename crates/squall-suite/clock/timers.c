/* Timers: timerfd, POSIX timers, interval timers and alarm. A relative time or an interval asked
 * in seen time is the real time that makes it at the rate now; an absolute one the real time its
 * deadline is reached at; what is left of a timer is read back in seen time. */
#include "squall_clock.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/timerfd.h>

typedef int (*timerfd_create_fn)(clockid_t, int);
typedef int (*timerfd_settime_fn)(int, int, const struct itimerspec *, struct itimerspec *);
typedef int (*timerfd_gettime_fn)(int, struct itimerspec *);
typedef int (*timer_create_fn)(clockid_t, struct sigevent *, timer_t *);
typedef int (*timer_settime_fn)(timer_t, int, const struct itimerspec *, struct itimerspec *);
typedef int (*timer_gettime_fn)(timer_t, struct itimerspec *);
typedef int (*timer_delete_fn)(timer_t);
typedef int (*setitimer_fn)(int, const struct itimerval *, struct itimerval *);
typedef int (*getitimer_fn)(int, struct itimerval *);

/* The clock of each timerfd and POSIX timer made here (an absolute time is on it). */
#define KNOWN_FDS 4096
static unsigned char fd_clock[KNOWN_FDS]; /* clock + 1; 0 unknown */
#define KNOWN_TIMERS 256
static struct {
    timer_t id;
    clockid_t clock;
} timer_clock[KNOWN_TIMERS];

static clockid_t clock_of_fd(int fd, const struct timespec *deadline) {
    return fd >= 0 && fd < KNOWN_FDS && fd_clock[fd] ? (clockid_t)(fd_clock[fd] - 1) : clock_of_deadline(deadline);
}

static clockid_t clock_of_timer(timer_t id, const struct timespec *deadline) {
    for (int i = 0; i < KNOWN_TIMERS; i++) {
        if (timer_clock[i].id == id) {
            return timer_clock[i].clock;
        }
    }
    return clock_of_deadline(deadline);
}

static int zero(const struct timespec *t) { return t->tv_sec == 0 && t->tv_nsec == 0; }

/* A timer's setting in real time; zero stays zero (it disarms). */
static struct itimerspec real_setting(const struct itimerspec *seen, int absolute, clockid_t clock) {
    struct itimerspec real = *seen;
    if (!zero(&seen->it_interval)) {
        real.it_interval = timespec_of(real_span(ns_of(&seen->it_interval)));
    }
    if (!zero(&seen->it_value)) {
        real.it_value = absolute ? real_deadline(clock, &seen->it_value)
                                 : timespec_of(real_span(ns_of(&seen->it_value)));
        if (zero(&real.it_value)) {
            real.it_value.tv_nsec = 1; /* due already: at once, not disarmed */
        }
    }
    return real;
}

static void to_seen(struct itimerspec *t) {
    t->it_interval = timespec_of(seen_span(ns_of(&t->it_interval)));
    t->it_value = timespec_of(seen_span(ns_of(&t->it_value)));
}

static int valid(const struct itimerspec *t) {
    return t->it_value.tv_nsec >= 0 && t->it_value.tv_nsec < NS_PER_S && t->it_interval.tv_nsec >= 0 &&
           t->it_interval.tv_nsec < NS_PER_S && t->it_value.tv_sec >= 0 && t->it_interval.tv_sec >= 0;
}

int timerfd_create(clockid_t clock, int flags) {
    REAL(timerfd_create_fn, "timerfd_create");
    int fd = real(clock, flags);
    if (fd >= 0 && fd < KNOWN_FDS) {
        fd_clock[fd] = (unsigned char)(clock + 1);
    }
    return fd;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *asked, struct itimerspec *old) {
    REAL(timerfd_settime_fn, "timerfd_settime");
    if (!on_frame() || asked == NULL || !valid(asked)) {
        return real(fd, flags, asked, old);
    }
    clockid_t clock = clock_of_fd(fd, &asked->it_value);
    struct itimerspec setting = real_setting(asked, flags & TFD_TIMER_ABSTIME, clock);
    int result = real(fd, flags, &setting, old);
    if (result == 0 && old != NULL) {
        to_seen(old);
    }
    return result;
}

int timerfd_gettime(int fd, struct itimerspec *current) {
    REAL(timerfd_gettime_fn, "timerfd_gettime");
    int result = real(fd, current);
    if (result == 0 && on_frame()) {
        to_seen(current);
    }
    return result;
}

int timer_create(clockid_t clock, struct sigevent *event, timer_t *id) {
    REAL(timer_create_fn, "timer_create");
    int result = real(clock, event, id);
    if (result == 0) {
        for (int i = 0; i < KNOWN_TIMERS; i++) {
            timer_t empty = 0;
            if (__atomic_compare_exchange_n(&timer_clock[i].id, &empty, *id, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                timer_clock[i].clock = clock;
                break;
            }
        }
    }
    return result;
}

int timer_settime(timer_t id, int flags, const struct itimerspec *asked, struct itimerspec *old) {
    REAL(timer_settime_fn, "timer_settime");
    if (!on_frame() || asked == NULL || !valid(asked)) {
        return real(id, flags, asked, old);
    }
    clockid_t clock = clock_of_timer(id, &asked->it_value);
    struct itimerspec setting = real_setting(asked, flags & TIMER_ABSTIME, clock);
    int result = real(id, flags, &setting, old);
    if (result == 0 && old != NULL) {
        to_seen(old);
    }
    return result;
}

int timer_gettime(timer_t id, struct itimerspec *current) {
    REAL(timer_gettime_fn, "timer_gettime");
    int result = real(id, current);
    if (result == 0 && on_frame()) {
        to_seen(current);
    }
    return result;
}

int timer_delete(timer_t id) {
    REAL(timer_delete_fn, "timer_delete");
    for (int i = 0; i < KNOWN_TIMERS; i++) {
        timer_t mine = id;
        if (__atomic_compare_exchange_n(&timer_clock[i].id, &mine, (timer_t)0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            break;
        }
    }
    return real(id);
}

static struct itimerspec of_itimerval(const struct itimerval *v) {
    struct itimerspec s = {timespec_of(ns_of_timeval(&v->it_interval)), timespec_of(ns_of_timeval(&v->it_value))};
    return s;
}

static struct itimerval itimerval_of(const struct itimerspec *s) {
    struct itimerval v = {timeval_of(ns_of(&s->it_interval)), timeval_of(ns_of(&s->it_value))};
    return v;
}

/* Only ITIMER_REAL counts real time; the others count CPU time. */
int setitimer(__itimer_which_t which, const struct itimerval *asked, struct itimerval *old) {
    REAL(setitimer_fn, "setitimer");
    if (!on_frame() || which != ITIMER_REAL || asked == NULL || asked->it_value.tv_usec < 0 ||
        asked->it_value.tv_usec >= 1000000 || asked->it_interval.tv_usec < 0 || asked->it_interval.tv_usec >= 1000000) {
        return real(which, asked, old);
    }
    struct itimerspec seen = of_itimerval(asked);
    struct itimerspec setting = real_setting(&seen, 0, CLOCK_REALTIME);
    struct itimerval wanted = itimerval_of(&setting);
    int result = real(which, &wanted, old);
    if (result == 0 && old != NULL) {
        struct itimerspec left = of_itimerval(old);
        to_seen(&left);
        *old = itimerval_of(&left);
    }
    return result;
}

int getitimer(__itimer_which_t which, struct itimerval *current) {
    REAL(getitimer_fn, "getitimer");
    int result = real(which, current);
    if (result == 0 && on_frame() && which == ITIMER_REAL) {
        struct itimerspec left = of_itimerval(current);
        to_seen(&left);
        *current = itimerval_of(&left);
    }
    return result;
}

/* libc's alarm calls its setitimer from inside libc, where no preload reaches. */
unsigned int alarm(unsigned int seconds) {
    struct itimerval asked, old;
    memset(&asked, 0, sizeof asked);
    asked.it_value.tv_sec = (time_t)seconds;
    if (setitimer(ITIMER_REAL, &asked, &old) < 0) {
        return 0;
    }
    if (old.it_value.tv_sec == 0 && old.it_value.tv_usec == 0) {
        return 0;
    }
    unsigned int left = (unsigned int)old.it_value.tv_sec + (old.it_value.tv_usec >= 500000);
    return left > 0 ? left : 1;
}
