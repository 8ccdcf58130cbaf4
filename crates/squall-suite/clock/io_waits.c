/* Waiting on descriptors and signals with a timeout, and socket timeouts: a timeout asked in seen
 * time waits the real time that makes it, exactly (millisecond ones through their nanosecond
 * twins, so that a 50 ms poll at x100 waits 0.5 ms, not 0). */
#include "squall_clock.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>

typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int, const sigset_t *);
typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int, const struct timespec *, const sigset_t *);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *, const struct timespec *);
typedef int (*setsockopt_fn)(int, int, int, const void *, socklen_t);
typedef int (*getsockopt_fn)(int, int, int, void *, socklen_t *);

int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout) {
    REAL(select_fn, "select");
    if (!on_frame() || timeout == NULL || timeout->tv_sec < 0 || timeout->tv_usec < 0) {
        return real(n, r, w, e, timeout);
    }
    int64_t asked = ns_of_timeval(timeout);
    struct timeval wait = timeval_of(real_span(asked));
    int result = real(n, r, w, e, &wait);
    /* Linux writes back what was left of the wait: in seen time here. */
    int saved = errno;
    *timeout = timeval_of(seen_span(ns_of_timeval(&wait)));
    errno = saved;
    return result;
}

int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *timeout, const sigset_t *mask) {
    REAL(pselect_fn, "pselect");
    struct timespec wait;
    return real(n, r, w, e, real_timeout(timeout, &wait), mask);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask) {
    REAL(ppoll_fn, "ppoll");
    struct timespec wait;
    return real(fds, n, real_timeout(timeout, &wait), mask);
}

int poll(struct pollfd *fds, nfds_t n, int ms) {
    REAL(poll_fn, "poll");
    if (!on_frame() || ms <= 0) {
        return real(fds, n, ms);
    }
    struct timespec asked = timespec_of((int64_t)ms * 1000000);
    return ppoll(fds, n, &asked, NULL);
}

int epoll_pwait2(int fd, struct epoll_event *events, int max, const struct timespec *timeout, const sigset_t *mask) {
    REAL(epoll_pwait2_fn, "epoll_pwait2");
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    struct timespec wait;
    return real(fd, events, max, real_timeout(timeout, &wait), mask);
}

int epoll_pwait(int fd, struct epoll_event *events, int max, int ms, const sigset_t *mask) {
    REAL(epoll_pwait_fn, "epoll_pwait");
    static int no_pwait2 = 0;
    if (!on_frame() || ms <= 0) {
        return real(fd, events, max, ms, mask);
    }
    struct timespec asked = timespec_of((int64_t)ms * 1000000);
    if (!no_pwait2) {
        int result = epoll_pwait2(fd, events, max, &asked, mask);
        if (result >= 0 || errno != ENOSYS) {
            return result;
        }
        no_pwait2 = 1; /* a kernel before 5.11 */
    }
    int64_t wait = real_span(ns_of(&asked));
    return real(fd, events, max, (int)((wait + 999999) / 1000000), mask);
}

int epoll_wait(int fd, struct epoll_event *events, int max, int ms) { return epoll_pwait(fd, events, max, ms, NULL); }

int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout) {
    REAL(sigtimedwait_fn, "sigtimedwait");
    struct timespec wait;
    return real(set, info, real_timeout(timeout, &wait));
}

/* SO_RCVTIMEO and SO_SNDTIMEO, in both their forms (a timeval; 64-bit fields either way here). */
static int socket_timeout(int level, int name) {
    return level == SOL_SOCKET && (name == 20 || name == 21 || name == 66 || name == 67);
}

int setsockopt(int fd, int level, int name, const void *value, socklen_t len) {
    REAL(setsockopt_fn, "setsockopt");
    if (!on_frame() || !socket_timeout(level, name) || value == NULL || len < sizeof(struct timeval)) {
        return real(fd, level, name, value, len);
    }
    struct timeval asked = *(const struct timeval *)value;
    struct timeval wait = asked;
    if ((asked.tv_sec > 0 || asked.tv_usec > 0) && asked.tv_usec >= 0 && asked.tv_usec < 1000000) {
        wait = timeval_of(real_span(ns_of_timeval(&asked))); /* 0 stays "no timeout" */
    }
    return real(fd, level, name, &wait, sizeof wait);
}

int getsockopt(int fd, int level, int name, void *value, socklen_t *len) {
    REAL(getsockopt_fn, "getsockopt");
    int result = real(fd, level, name, value, len);
    if (result == 0 && on_frame() && socket_timeout(level, name) && len && *len >= sizeof(struct timeval)) {
        struct timeval *t = value;
        *t = timeval_of(seen_span(ns_of_timeval(t)));
    }
    return result;
}
