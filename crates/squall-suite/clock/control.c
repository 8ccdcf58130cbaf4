/* What squall's integrations call in a process on the clock (through ctypes, say): its rate, real
 * time, a rate change for the whole tree, and a frame attached again after a fork. */
#include "squall_clock.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The preload's version, as squall records it in a report's provenance. */
const char squall_clock_version[] = "squall-clock 2";

/* How far ahead of now a rate change starts: every process reads the old rate until then and
 * the new one from then on, so the clock stays continuous if the change is published in time. */
#define CHANGE_LEAD_NS 10000000LL

typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);

int append_segment(double rate) {
    const char *path = getenv("SQUALL_CLOCK_FRAME");
    if (!on_frame() || path == NULL) {
        return -ENOENT;
    }
    if (!(rate > 0.0) || !isfinite(rate)) {
        return -EINVAL;
    }
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    uint32_t count = 0;
    int result = pread(fd, &count, sizeof count, 8) == sizeof count ? 0 : -EIO;
    if (result == 0 && count >= FRAME_MAX_SEGMENTS) {
        result = -ENOSPC;
    }
    int64_t at = real_ns(CLOCK_MONOTONIC) + CHANGE_LEAD_NS;
    if (result == 0) {
        struct segment now = segment_at(at);
        struct segment next = {at, now.seen_ns + (int64_t)((double)(at - now.real_ns) * now.rate), rate, 0};
        uint64_t rate_bits;
        memcpy(&rate_bits, &next.rate, sizeof rate_bits);
        next.check = (uint64_t)next.real_ns ^ (uint64_t)next.seen_ns ^ rate_bits ^ FRAME_CHECK_SALT;
        off_t slot = FRAME_HEADER_BYTES + (off_t)count * FRAME_SEGMENT_BYTES;
        uint32_t written = count + 1;
        if (pwrite(fd, &next, sizeof next, slot) != sizeof next || pwrite(fd, &written, sizeof written, 8) != sizeof written) {
            result = -EIO;
        }
    }
    close(fd);
    if (result == 0) {
        REAL(nanosleep_fn, "nanosleep");
        int64_t left = at - real_ns(CLOCK_MONOTONIC);
        struct timespec wait = timespec_of(left > 0 ? left : 0);
        while (real(&wait, &wait) != 0 && errno == EINTR) {
        }
    }
    return result;
}

int squall_clock_set_rate(double rate) { return append_segment(rate); }

double squall_clock_rate(void) { return rate_now(); }

long long squall_clock_real_ns(int clock) { return (long long)real_ns((clockid_t)clock); }

int squall_clock_restart(void) {
    attach_frame();
    return on_frame() ? 0 : -1;
}
