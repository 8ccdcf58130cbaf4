/* libc's syscall(): a runtime calls futex through it with a timeout (Rust's Condvar::wait_timeout
 * and thread::park_timeout), and some read or wait on the clock through it too. Those calls get
 * seen time; every other number goes to the kernel untouched. */
#include "squall_clock.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#define FUTEX_COMMAND(op) ((op) & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))

typedef long (*syscall_fn)(long, ...);

static syscall_fn real_syscall(void) {
    static syscall_fn real = NULL;
    if (real == NULL) {
        real = (syscall_fn)real_function("syscall");
    }
    return real;
}

/* A futex wait's timeout in real time: relative for FUTEX_WAIT, else an absolute deadline on
 * CLOCK_MONOTONIC, or CLOCK_REALTIME where the operation or its flag says so. */
static long futex(long address, long op, long value, long timeout, long address2, long value3) {
    const struct timespec *asked = (const struct timespec *)timeout;
    struct timespec real;
    switch (FUTEX_COMMAND(op)) {
    case FUTEX_WAIT:
        asked = real_timeout(asked, &real);
        break;
    case FUTEX_WAIT_BITSET:
    case FUTEX_WAIT_REQUEUE_PI:
    case FUTEX_LOCK_PI2:
        if (asked != NULL && asked->tv_nsec >= 0 && asked->tv_nsec < NS_PER_S) {
            real = real_deadline(op & FUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC, asked);
            asked = &real;
        }
        break;
    case FUTEX_LOCK_PI:
        if (asked != NULL && asked->tv_nsec >= 0 && asked->tv_nsec < NS_PER_S) {
            real = real_deadline(CLOCK_REALTIME, asked);
            asked = &real;
        }
        break;
    default:
        break; /* no timeout: the fourth argument is something else */
    }
    return real_syscall()(SYS_futex, address, op, value, (long)asked, address2, value3);
}

/* A libc function's result as syscall() gives it: -1 and errno for an error number. */
static long as_syscall(int error) {
    if (error == 0) {
        return 0;
    }
    errno = error;
    return -1;
}

long syscall(long number, ...) {
    va_list args;
    va_start(args, number);
    long a = va_arg(args, long), b = va_arg(args, long), c = va_arg(args, long);
    long d = va_arg(args, long), e = va_arg(args, long), f = va_arg(args, long);
    va_end(args);
    if (!on_frame()) {
        return real_syscall()(number, a, b, c, d, e, f);
    }
    switch (number) {
    case SYS_futex:
        return futex(a, b, c, d, e, f);
    case SYS_futex_waitv: {
        struct timespec real;
        const struct timespec *deadline = (const struct timespec *)d;
        if (deadline != NULL && deadline->tv_nsec >= 0 && deadline->tv_nsec < NS_PER_S) {
            real = real_deadline((clockid_t)e, deadline);
            deadline = &real;
        }
        return real_syscall()(number, a, b, c, (long)deadline, e, f);
    }
    case SYS_clock_gettime:
        return clock_gettime((clockid_t)a, (struct timespec *)b);
    case SYS_gettimeofday:
        return gettimeofday((struct timeval *)a, (void *)b);
    case SYS_nanosleep:
        return nanosleep((const struct timespec *)a, (struct timespec *)b);
    case SYS_clock_nanosleep:
        return as_syscall(clock_nanosleep((clockid_t)a, (int)b, (const struct timespec *)c, (struct timespec *)d));
    default:
        return real_syscall()(number, a, b, c, d, e, f);
    }
}
