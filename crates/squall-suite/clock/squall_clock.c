/* squall's clock preload: loaded beside libfaketime into an implementation's process when squall
 * runs it on a sped-up clock (`--clock accelerated`, docs/iut-contract.md). It covers what the
 * libfaketime packaged by Debian 12 (0.9.10) gets wrong at a rate:
 *
 * - waits on a thread primitive with an absolute deadline it does not wrap (sem_clockwait,
 *   pthread_cond_clockwait, pthread_mutex_timedlock/clocklock, pthread_rwlock_timed/clock*), or
 *   wraps wrongly (sem_timedwait multiplies by the rate instead of dividing): the deadline, read
 *   in the sped-up frame, becomes a real one;
 * - millisecond timeouts (poll, epoll_wait, epoll_pwait), which libfaketime divides as integers:
 *   at x100 a wait of 1-99 ms became 0, and a client's poll loop spun; here they wait the exact
 *   real time through ppoll and epoll_pwait2 (rounded up to 1 ms where the kernel lacks it).
 *
 * The rate is the `xN` of FAKETIME. The real functions are libc's own (looked up in libc, not
 * with RTLD_NEXT), so the order of the preloads does not matter; the real clock is read with a
 * raw system call, which libfaketime does not wrap. When SQUALL_CLOCK_ORIGIN names a file, the
 * first process of the tree writes there the real time (s since the epoch) at which its
 * sped-up clock started, which squall needs to write dates in the client's frame. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The preload's version, as squall records it in a report's provenance. */
const char squall_clock_version[] = "squall-clock 1";

/* The rate read from FAKETIME, 0 until read. */
static double cached = 0.0;

static double rate(void) {
    if (cached == 0.0) {
        const char *spec = getenv("FAKETIME");
        const char *x = spec ? strchr(spec, 'x') : NULL;
        double parsed = x ? strtod(x + 1, NULL) : 1.0;
        cached = parsed > 0.0 ? parsed : 1.0;
    }
    return cached;
}

static void *libc_symbol(const char *name) {
    static void *libc = NULL;
    if (libc == NULL) {
        libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    }
    return libc ? dlsym(libc, name) : NULL;
}

static double seconds(const struct timespec *t) { return (double)t->tv_sec + (double)t->tv_nsec / 1e9; }

static struct timespec timespec_of(double s) {
    struct timespec t;
    if (s < 0.0) {
        s = 0.0;
    }
    t.tv_sec = (time_t)s;
    t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec += 1;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static double real_now(clockid_t clock) {
    struct timespec t;
    syscall(SYS_clock_gettime, clock, &t);
    return seconds(&t);
}

/* A deadline `abs` on `clock` as the process reads it (sped up), on the same clock in real time. */
static struct timespec real_deadline(clockid_t clock, const struct timespec *abs) {
    struct timespec seen;
    clock_gettime(clock, &seen); /* libfaketime's, when it is loaded */
    double left = (seconds(abs) - seconds(&seen)) / rate();
    return timespec_of(real_now(clock) + (left > 0.0 ? left : 0.0));
}

/* A millisecond timeout as the process means it, in real time (NULL: wait for ever). */
static struct timespec *real_timeout(int ms, struct timespec *out) {
    if (ms < 0) {
        return NULL;
    }
    *out = timespec_of((double)ms / 1e3 / rate());
    return out;
}

/* The same in whole real milliseconds, never 0 unless 0 was asked. */
static int real_ms(int ms) {
    if (ms <= 0) {
        return ms;
    }
    double real = (double)ms / rate();
    int whole = (int)real;
    return whole < real ? whole + 1 : whole;
}

typedef int (*sem_clockwait_fn)(sem_t *, clockid_t, const struct timespec *);
typedef int (*cond_clockwait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*mutex_clocklock_fn)(pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*rwlock_clock_fn)(pthread_rwlock_t *, clockid_t, const struct timespec *);

int sem_clockwait(sem_t *sem, clockid_t clock, const struct timespec *abs) {
    sem_clockwait_fn real = (sem_clockwait_fn)libc_symbol("sem_clockwait");
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    struct timespec deadline = real_deadline(clock, abs);
    return real(sem, clock, &deadline);
}

int sem_timedwait(sem_t *sem, const struct timespec *abs) { return sem_clockwait(sem, CLOCK_REALTIME, abs); }

int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock, const struct timespec *abs) {
    cond_clockwait_fn real = (cond_clockwait_fn)libc_symbol("pthread_cond_clockwait");
    if (real == NULL) {
        return ENOSYS;
    }
    struct timespec deadline = real_deadline(clock, abs);
    return real(cond, mutex, clock, &deadline);
}

int pthread_mutex_clocklock(pthread_mutex_t *mutex, clockid_t clock, const struct timespec *abs) {
    mutex_clocklock_fn real = (mutex_clocklock_fn)libc_symbol("pthread_mutex_clocklock");
    if (real == NULL) {
        return ENOSYS;
    }
    struct timespec deadline = real_deadline(clock, abs);
    return real(mutex, clock, &deadline);
}

int pthread_mutex_timedlock(pthread_mutex_t *mutex, const struct timespec *abs) {
    return pthread_mutex_clocklock(mutex, CLOCK_REALTIME, abs);
}

static int rwlock(const char *name, pthread_rwlock_t *lock, clockid_t clock, const struct timespec *abs) {
    rwlock_clock_fn real = (rwlock_clock_fn)libc_symbol(name);
    if (real == NULL) {
        return ENOSYS;
    }
    struct timespec deadline = real_deadline(clock, abs);
    return real(lock, clock, &deadline);
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t *lock, clockid_t clock, const struct timespec *abs) {
    return rwlock("pthread_rwlock_clockrdlock", lock, clock, abs);
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *lock, clockid_t clock, const struct timespec *abs) {
    return rwlock("pthread_rwlock_clockwrlock", lock, clock, abs);
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *lock, const struct timespec *abs) {
    return rwlock("pthread_rwlock_clockrdlock", lock, CLOCK_REALTIME, abs);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *lock, const struct timespec *abs) {
    return rwlock("pthread_rwlock_clockwrlock", lock, CLOCK_REALTIME, abs);
}

typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);
typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int, const struct timespec *, const sigset_t *);

int poll(struct pollfd *fds, nfds_t n, int ms) {
    ppoll_fn real = (ppoll_fn)libc_symbol("ppoll");
    struct timespec timeout;
    return real ? real(fds, n, real_timeout(ms, &timeout), NULL) : (errno = ENOSYS, -1);
}

int epoll_pwait(int fd, struct epoll_event *events, int max, int ms, const sigset_t *mask) {
    static int no_pwait2 = 0;
    epoll_pwait2_fn exact = (epoll_pwait2_fn)libc_symbol("epoll_pwait2");
    if (exact != NULL && !no_pwait2) {
        struct timespec timeout;
        int result = exact(fd, events, max, real_timeout(ms, &timeout), mask);
        if (result >= 0 || errno != ENOSYS) {
            return result;
        }
        no_pwait2 = 1; /* a kernel before 5.11 */
    }
    epoll_pwait_fn real = (epoll_pwait_fn)libc_symbol("epoll_pwait");
    return real ? real(fd, events, max, real_ms(ms), mask) : (errno = ENOSYS, -1);
}

int epoll_wait(int fd, struct epoll_event *events, int max, int ms) { return epoll_pwait(fd, events, max, ms, NULL); }

/* The real time the sped-up clock started at: where it reads what real time reads, going back
 * from now at the rate (seen = origin + (real - origin) * rate). */
__attribute__((constructor)) static void write_origin(void);

/* For squall's warm start (`warm/squall_warm.py`): a process forked from one that ran at another
 * rate, its FAKETIME changed since (libfaketime re-reads it at every call with
 * FAKETIME_NO_CACHE=1), reads its rate again and writes its frame's origin. */
int squall_clock_restart(void) {
    cached = 0.0;
    write_origin();
    return 0;
}

static void write_origin(void) {
    const char *path = getenv("SQUALL_CLOCK_ORIGIN");
    if (path == NULL || *path == '\0' || rate() == 1.0) {
        return;
    }
    struct timespec seen;
    clock_gettime(CLOCK_REALTIME, &seen);
    double real = real_now(CLOCK_REALTIME);
    double origin = (rate() * real - seconds(&seen)) / (rate() - 1.0);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        return; /* an earlier process of the tree wrote it */
    }
    char text[64];
    int len = snprintf(text, sizeof text, "%.6f\n", origin);
    if (len > 0) {
        ssize_t written = write(fd, text, (size_t)len);
        (void)written;
    }
    close(fd);
}
