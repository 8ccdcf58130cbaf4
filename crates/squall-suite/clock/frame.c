/* The frame: the file SQUALL_CLOCK_FRAME names, mapped read-only, and what a process reads from it
 * (seen time, the rate now); libc's own functions, looked up once. */
#include "squall_clock.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The mapped frame, or NULL: this process reads real time. */
static const unsigned char *frame = NULL;

/* Seen monotonic time never goes back in a thread, even if a rate change is published late. */
static __thread int64_t last_seen_monotonic __attribute__((tls_model("initial-exec"))) = 0;

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

void *real_function(const char *name) {
    static void *libc = NULL;
    if (libc == NULL) {
        libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    }
    void *found = libc ? dlsym(libc, name) : NULL;
    /* glibc before 2.34 keeps the pthread functions in libpthread. */
    return found ? found : dlsym(RTLD_NEXT, name);
}

void *real_function_version(const char *name, const char *version) {
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    void *found = libc ? dlvsym(libc, name, version) : NULL;
    return found ? found : dlvsym(RTLD_NEXT, name, version);
}

static void say(const char *what, const char *path, int error) {
    char line[512];
    int len = snprintf(line, sizeof line, "squall-clock: %s %s (%s): this process reads real time\n", what, path,
                       strerror(error));
    if (len > 0) {
        ssize_t written = write(2, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
        (void)written;
    }
}

void attach_frame(void) {
    const unsigned char *old = frame;
    frame = NULL;
    if (old != NULL) {
        munmap((void *)old, FRAME_FILE_BYTES);
    }
    last_seen_monotonic = 0;
    const char *path = getenv("SQUALL_CLOCK_FRAME");
    if (path == NULL || *path == '\0') {
        return;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        say("cannot open the clock's frame", path, errno);
        return;
    }
    struct stat st;
    void *mapped = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size >= FRAME_FILE_BYTES) {
        mapped = mmap(NULL, FRAME_FILE_BYTES, PROT_READ, MAP_SHARED, fd, 0);
    }
    int error = errno;
    close(fd);
    if (mapped == MAP_FAILED) {
        say("cannot map the clock's frame", path, st.st_size < FRAME_FILE_BYTES ? EINVAL : error);
        return;
    }
    if (memcmp(mapped, FRAME_MAGIC, 8) != 0) {
        munmap(mapped, FRAME_FILE_BYTES);
        say("not a clock frame:", path, EINVAL);
        return;
    }
    frame = mapped;
}

__attribute__((constructor)) static void attach_at_start(void) { attach_frame(); }

int on_frame(void) { return frame != NULL; }

static uint64_t check_of(const struct segment *s) {
    uint64_t rate_bits;
    memcpy(&rate_bits, &s->rate, sizeof rate_bits);
    return (uint64_t)s->real_ns ^ (uint64_t)s->seen_ns ^ rate_bits ^ FRAME_CHECK_SALT;
}

/* The segment in force at real monotonic time `at`: the newest whole one that has begun. */
struct segment segment_at(int64_t at) {
    uint32_t count = __atomic_load_n((const uint32_t *)(frame + 8), __ATOMIC_ACQUIRE);
    if (count > FRAME_MAX_SEGMENTS) {
        count = FRAME_MAX_SEGMENTS;
    }
    struct segment s = {0, 0, 1.0, 0};
    for (uint32_t i = count; i > 0; i--) {
        memcpy(&s, frame + FRAME_HEADER_BYTES + (size_t)(i - 1) * FRAME_SEGMENT_BYTES, sizeof s);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (s.check == check_of(&s) && s.rate > 0.0 && (s.real_ns <= at || i == 1)) {
            return s;
        }
    }
    /* No whole segment: the writer is creating the frame. Real time until it has. */
    s.real_ns = at;
    s.seen_ns = at;
    s.rate = 1.0;
    return s;
}

int64_t real_ns(clockid_t clock) {
    REAL(clock_gettime_fn, "clock_gettime");
    struct timespec t = {0, 0};
    real(clock, &t);
    return ns_of(&t);
}

/* Seen monotonic time at real monotonic time `m`. */
static int64_t seen_at(int64_t m) {
    struct segment s = segment_at(m);
    int64_t seen = s.seen_ns + (int64_t)((double)(m - s.real_ns) * s.rate);
    if (seen < last_seen_monotonic) {
        return last_seen_monotonic;
    }
    last_seen_monotonic = seen;
    return seen;
}

int sped_up_clock(clockid_t clock) {
    switch (clock) {
    case CLOCK_REALTIME:
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
    case CLOCK_REALTIME_ALARM:
    case CLOCK_BOOTTIME_ALARM:
    case CLOCK_TAI:
        return 1;
    default:
        return 0; /* CPU-time clocks, and a process's or thread's CPU clock */
    }
}

static clockid_t monotonic_for(clockid_t clock) {
    return clock == CLOCK_REALTIME_COARSE || clock == CLOCK_MONOTONIC_COARSE ? CLOCK_MONOTONIC_COARSE
                                                                               : CLOCK_MONOTONIC;
}

int64_t seen_of_real(clockid_t clock, int64_t real) {
    if (!on_frame() || !sped_up_clock(clock)) {
        return real;
    }
    clockid_t base = monotonic_for(clock);
    int64_t m = clock == base ? real : real_ns(base);
    return real + (seen_at(m) - m);
}

int64_t seen_ns(clockid_t clock) { return seen_of_real(clock, real_ns(clock)); }

double rate_now(void) {
    if (!on_frame()) {
        return 1.0;
    }
    return segment_at(real_ns(CLOCK_MONOTONIC)).rate;
}

int64_t real_span(int64_t seen) {
    if (seen <= 0) {
        return seen;
    }
    int64_t real = (int64_t)((double)seen / rate_now());
    return real > 0 ? real : 1; /* never 0: a timeout of 0 means "do not wait" */
}

int64_t seen_span(int64_t real) {
    if (real <= 0) {
        return real;
    }
    return (int64_t)((double)real * rate_now());
}

struct timespec real_deadline(clockid_t clock, const struct timespec *seen) {
    int64_t real = real_ns(clock);
    int64_t now_seen = seen_of_real(clock, real);
    int64_t left = ns_of(seen) - now_seen;
    return timespec_of(real + (left > 0 ? real_span(left) : 0));
}

clockid_t clock_of_deadline(const struct timespec *deadline) {
    /* Realtime deadlines are past 2001; a monotonic one would need 31 years of uptime. */
    return deadline->tv_sec > 1000000000L ? CLOCK_REALTIME : CLOCK_MONOTONIC;
}

int64_t ns_of(const struct timespec *t) { return (int64_t)t->tv_sec * NS_PER_S + t->tv_nsec; }

struct timespec timespec_of(int64_t ns) {
    struct timespec t;
    if (ns < 0) {
        ns = 0;
    }
    t.tv_sec = (time_t)(ns / NS_PER_S);
    t.tv_nsec = (long)(ns % NS_PER_S);
    return t;
}

int64_t ns_of_timeval(const struct timeval *t) { return (int64_t)t->tv_sec * NS_PER_S + (int64_t)t->tv_usec * 1000; }

struct timeval timeval_of(int64_t ns) {
    struct timeval t;
    if (ns < 0) {
        ns = 0;
    }
    int64_t us = (ns + 999) / 1000; /* up: a wait never ends before its time */
    t.tv_sec = (time_t)(us / 1000000);
    t.tv_usec = (suseconds_t)(us % 1000000);
    return t;
}

const struct timespec *real_timeout(const struct timespec *seen, struct timespec *out) {
    if (seen == NULL || !on_frame() || seen->tv_nsec < 0 || seen->tv_nsec >= NS_PER_S || seen->tv_sec < 0) {
        return seen; /* none, or invalid: libc says so */
    }
    *out = timespec_of(real_span(ns_of(seen)));
    return out;
}
