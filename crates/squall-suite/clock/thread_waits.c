/* Waits on a thread primitive until an absolute deadline: the deadline, read in seen time on its
 * clock, becomes the real time at which it is reached at the rate now. */
#include "squall_clock.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>

typedef int (*sem_timedwait_fn)(sem_t *, const struct timespec *);
typedef int (*sem_clockwait_fn)(sem_t *, clockid_t, const struct timespec *);
typedef int (*cond_timedwait_fn)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
typedef int (*cond_clockwait_fn)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*mutex_timedlock_fn)(pthread_mutex_t *, const struct timespec *);
typedef int (*mutex_clocklock_fn)(pthread_mutex_t *, clockid_t, const struct timespec *);
typedef int (*rwlock_timed_fn)(pthread_rwlock_t *, const struct timespec *);
typedef int (*rwlock_clock_fn)(pthread_rwlock_t *, clockid_t, const struct timespec *);
typedef int (*timedjoin_fn)(pthread_t, void **, const struct timespec *);
typedef int (*clockjoin_fn)(pthread_t, void **, clockid_t, const struct timespec *);

/* The deadline to hand libc: converted when it is a valid one on a sped-up clock. */
static const struct timespec *real_at(clockid_t clock, const struct timespec *seen, struct timespec *out) {
    if (!on_frame() || seen == NULL || !sped_up_clock(clock) || seen->tv_nsec < 0 || seen->tv_nsec >= NS_PER_S) {
        return seen;
    }
    *out = real_deadline(clock, seen);
    return out;
}

int sem_timedwait(sem_t *sem, const struct timespec *deadline) {
    REAL(sem_timedwait_fn, "sem_timedwait");
    struct timespec at;
    return real(sem, real_at(CLOCK_REALTIME, deadline, &at));
}

int sem_clockwait(sem_t *sem, clockid_t clock, const struct timespec *deadline) {
    REAL(sem_clockwait_fn, "sem_clockwait");
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    struct timespec at;
    return real(sem, clock, real_at(clock, deadline, &at));
}

/* A condition variable's clock is set when it is made and glibc keeps it private: its deadline's
 * size tells (clock_of_deadline). */
static int cond_timedwait(cond_timedwait_fn real, pthread_cond_t *cond, pthread_mutex_t *mutex,
                          const struct timespec *deadline) {
    struct timespec at;
    clockid_t clock = deadline ? clock_of_deadline(deadline) : CLOCK_REALTIME;
    return real(cond, mutex, real_at(clock, deadline, &at));
}

#if defined(__x86_64__)
/* x86_64's glibc has two: the condition variable of glibc 2.3.2 on, and the one before. */
__asm__(".symver squall_cond_timedwait_new, pthread_cond_timedwait@@GLIBC_2.3.2");
__asm__(".symver squall_cond_timedwait_old, pthread_cond_timedwait@GLIBC_2.2.5");

int squall_cond_timedwait_new(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *deadline) {
    static cond_timedwait_fn real = NULL;
    if (real == NULL) {
        real = (cond_timedwait_fn)real_function_version("pthread_cond_timedwait", "GLIBC_2.3.2");
    }
    return cond_timedwait(real, cond, mutex, deadline);
}

int squall_cond_timedwait_old(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *deadline) {
    static cond_timedwait_fn real = NULL;
    if (real == NULL) {
        real = (cond_timedwait_fn)real_function_version("pthread_cond_timedwait", "GLIBC_2.2.5");
    }
    return cond_timedwait(real, cond, mutex, deadline);
}
#else
int pthread_cond_timedwait(pthread_cond_t *cond, pthread_mutex_t *mutex, const struct timespec *deadline) {
    REAL(cond_timedwait_fn, "pthread_cond_timedwait");
    return cond_timedwait(real, cond, mutex, deadline);
}
#endif

int pthread_cond_clockwait(pthread_cond_t *cond, pthread_mutex_t *mutex, clockid_t clock,
                           const struct timespec *deadline) {
    REAL(cond_clockwait_fn, "pthread_cond_clockwait");
    if (real == NULL) {
        return ENOSYS;
    }
    struct timespec at;
    return real(cond, mutex, clock, real_at(clock, deadline, &at));
}

int pthread_mutex_timedlock(pthread_mutex_t *mutex, const struct timespec *deadline) {
    REAL(mutex_timedlock_fn, "pthread_mutex_timedlock");
    struct timespec at;
    return real(mutex, real_at(CLOCK_REALTIME, deadline, &at));
}

int pthread_mutex_clocklock(pthread_mutex_t *mutex, clockid_t clock, const struct timespec *deadline) {
    REAL(mutex_clocklock_fn, "pthread_mutex_clocklock");
    if (real == NULL) {
        return ENOSYS;
    }
    struct timespec at;
    return real(mutex, clock, real_at(clock, deadline, &at));
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *lock, const struct timespec *deadline) {
    REAL(rwlock_timed_fn, "pthread_rwlock_timedrdlock");
    struct timespec at;
    return real(lock, real_at(CLOCK_REALTIME, deadline, &at));
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *lock, const struct timespec *deadline) {
    REAL(rwlock_timed_fn, "pthread_rwlock_timedwrlock");
    struct timespec at;
    return real(lock, real_at(CLOCK_REALTIME, deadline, &at));
}

int pthread_rwlock_clockrdlock(pthread_rwlock_t *lock, clockid_t clock, const struct timespec *deadline) {
    REAL(rwlock_clock_fn, "pthread_rwlock_clockrdlock");
    if (real == NULL) {
        return ENOSYS;
    }
    struct timespec at;
    return real(lock, clock, real_at(clock, deadline, &at));
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *lock, clockid_t clock, const struct timespec *deadline) {
    REAL(rwlock_clock_fn, "pthread_rwlock_clockwrlock");
    if (real == NULL) {
        return ENOSYS;
    }
    struct timespec at;
    return real(lock, clock, real_at(clock, deadline, &at));
}

int pthread_timedjoin_np(pthread_t thread, void **value, const struct timespec *deadline) {
    REAL(timedjoin_fn, "pthread_timedjoin_np");
    struct timespec at;
    return real(thread, value, real_at(CLOCK_REALTIME, deadline, &at));
}

int pthread_clockjoin_np(pthread_t thread, void **value, clockid_t clock, const struct timespec *deadline) {
    REAL(clockjoin_fn, "pthread_clockjoin_np");
    if (real == NULL) {
        return ENOSYS;
    }
    struct timespec at;
    return real(thread, value, clock, real_at(clock, deadline, &at));
}
