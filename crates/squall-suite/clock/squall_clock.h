/* squall's clock: what the preload's files share (docs/clock.md).
 *
 * A process reads "seen" time: real time sped up by the rate of its frame's current segment.
 * The frame is a file named by SQUALL_CLOCK_FRAME, shared by the whole process tree; every clock
 * but the CPU-time ones reads seen time, and every wait asked in seen time waits the real time
 * that makes it. */
#ifndef SQUALL_CLOCK_H
#define SQUALL_CLOCK_H

#define _GNU_SOURCE
#include <stdint.h>
#include <sys/time.h>
#include <time.h>

#define NS_PER_S 1000000000LL

/* The frame file's layout: a header, then segments appended one after another. */
#define FRAME_MAGIC "SQCLOCK1"
#define FRAME_HEADER_BYTES 64
#define FRAME_SEGMENT_BYTES 32
#define FRAME_FILE_BYTES (1 << 20)
#define FRAME_MAX_SEGMENTS ((FRAME_FILE_BYTES - FRAME_HEADER_BYTES) / FRAME_SEGMENT_BYTES)
/* A segment's check word: its three fields xor this, so a torn one is never used. */
#define FRAME_CHECK_SALT 0x5351434c4f434b31ULL

/* From real monotonic time `real_ns` on, seen monotonic time is `seen_ns` plus the real time
 * since, times `rate`. */
struct segment {
    int64_t real_ns;
    int64_t seen_ns;
    double rate;
    uint64_t check;
};

/* libc's own functions (the real ones), looked up once by name. */
void *real_function(const char *name);
void *real_function_version(const char *name, const char *version);

/* `real`, libc's function `name` of type `type`, looked up at the first call. */
#define REAL(type, name)                                                                                              \
    static type real = NULL;                                                                                         \
    if (real == NULL) {                                                                                              \
        real = (type)real_function(name);                                                                            \
    }

/* Whether this process is on a frame; when it is not, every function is libc's. */
int on_frame(void);

/* The rate now (1 without a frame). */
double rate_now(void);

/* Real and seen time on `clock`, in ns; whether `clock` is one the frame speeds up. */
int64_t real_ns(clockid_t clock);
int64_t seen_ns(clockid_t clock);
/* Seen time on `clock` when it has just read `real`. */
int64_t seen_of_real(clockid_t clock, int64_t real);
int sped_up_clock(clockid_t clock);

/* Durations and deadlines: seen to real and back. */
int64_t real_span(int64_t seen_span_ns);
int64_t seen_span(int64_t real_span_ns);
/* A deadline on `clock` in seen time, as a deadline on the same clock in real time. */
struct timespec real_deadline(clockid_t clock, const struct timespec *seen);
/* The clock an absolute deadline of a thread primitive is on, where the caller did not say. */
clockid_t clock_of_deadline(const struct timespec *deadline);

int64_t ns_of(const struct timespec *t);
struct timespec timespec_of(int64_t ns);
int64_t ns_of_timeval(const struct timeval *t);
struct timeval timeval_of(int64_t ns);
/* A relative timeout in seen time (NULL: none), as real time in `out`. */
const struct timespec *real_timeout(const struct timespec *seen, struct timespec *out);

/* The segment in force at real monotonic time `at`. */
struct segment segment_at(int64_t at);

/* Append a segment: from a moment just ahead, `rate`; returns once it is in force (0, or -errno). */
int append_segment(double rate);

/* Attach the frame SQUALL_CLOCK_FRAME names (again, after a fork that changed it). */
void attach_frame(void);

#endif
