// squall's clock in the test runner's own process (docs/clock.md). A runner started with
// `squall clock -- node --test …` (or `… vitest run`) runs on squall's preload at rate 1; for
// each case the helper appends a segment to the tree's frame file so that the client runs at the
// case's rate, and another to go back to 1. The frame's format is docs/clock.md's; the client is
// called as shipped.
import { closeSync, openSync, readFileSync, readSync, unlinkSync, writeSync } from "node:fs";

const HEADER = 64;
const SEGMENT = 32;
const MAX_SEGMENTS = ((1 << 20) - HEADER) / SEGMENT;
const SALT = 0x5351434c4f434b31n;
const MASK = (1n << 64n) - 1n;
// A rate change starts this far ahead, so every process switches at the same moment.
const LEAD_NS = 10_000_000n;

/** One segment: from real monotonic `realNs` on, seen monotonic time is `seenNs` plus the real
 * time since, times `rate`. */
function segmentAt(bytes, index) {
  const view = new DataView(bytes.buffer, bytes.byteOffset + HEADER + index * SEGMENT, SEGMENT);
  const segment = {
    realNs: view.getBigInt64(0, true),
    seenNs: view.getBigInt64(8, true),
    rate: view.getFloat64(16, true),
    rateBits: view.getBigUint64(16, true),
  };
  const check = view.getBigUint64(24, true);
  const expected = (BigInt.asUintN(64, segment.realNs) ^ BigInt.asUintN(64, segment.seenNs) ^ segment.rateBits ^ SALT) & MASK;
  return check === expected && segment.rate > 0 ? segment : null;
}

/** The clock this process runs on, or null on real time. */
export class Clock {
  constructor(frame) {
    this.frame = frame;
  }

  static here() {
    const frame = process.env.SQUALL_CLOCK_FRAME;
    const preloaded = (process.env.LD_PRELOAD ?? "").includes("libsquall_clock");
    return frame && preloaded ? new Clock(frame) : null;
  }

  /** The frame's whole segments, oldest first. */
  segments() {
    const fd = openSync(this.frame, "r");
    try {
      const header = Buffer.alloc(HEADER);
      readSync(fd, header, 0, HEADER, 0);
      if (header.toString("latin1", 0, 8) !== "SQCLOCK1") throw new Error(`squall clock: ${this.frame} is not a clock frame`);
      const count = Math.min(header.readUInt32LE(8), MAX_SEGMENTS);
      const bytes = Buffer.alloc(count * SEGMENT + HEADER);
      readSync(fd, bytes, HEADER, count * SEGMENT, HEADER);
      const segments = [];
      for (let i = 0; i < count; i++) {
        const segment = segmentAt(bytes, i);
        if (!segment) break;
        segments.push(segment);
      }
      return segments;
    } finally {
      closeSync(fd);
    }
  }

  /** Real monotonic time now, in ns: the seen time read, turned back by the segment it is in. */
  realNs() {
    const seen = process.hrtime.bigint();
    const segments = this.segments();
    const segment = [...segments].reverse().find((s) => s.seenNs <= seen) ?? segments[0];
    return segment.realNs + BigInt(Math.round(Number(seen - segment.seenNs) / segment.rate));
  }

  /** The rate now. */
  rate() {
    const real = this.realNs();
    const segments = this.segments();
    return ([...segments].reverse().find((s) => s.realNs <= real) ?? segments[0]).rate;
  }

  /** Append a segment at `rate`, from a moment just ahead; resolves once it is in force. */
  async setRate(rate) {
    if (!(rate > 0 && Number.isFinite(rate))) throw new Error(`squall clock: a rate is a positive number, not ${rate}`);
    const segments = this.segments();
    if (segments.length >= MAX_SEGMENTS) throw new Error(`squall clock: ${this.frame} is full`);
    const at = this.realNs() + LEAD_NS;
    const now = [...segments].reverse().find((s) => s.realNs <= at) ?? segments[0];
    const seenAt = now.seenNs + BigInt(Math.round(Number(at - now.realNs) * now.rate));
    const bytes = Buffer.alloc(SEGMENT);
    bytes.writeBigInt64LE(at, 0);
    bytes.writeBigInt64LE(seenAt, 8);
    bytes.writeDoubleLE(rate, 16);
    const rateBits = bytes.readBigUInt64LE(16);
    bytes.writeBigUInt64LE((BigInt.asUintN(64, at) ^ BigInt.asUintN(64, seenAt) ^ rateBits ^ SALT) & MASK, 24);
    const fd = openSync(this.frame, "r+");
    try {
      writeSync(fd, bytes, 0, SEGMENT, HEADER + segments.length * SEGMENT);
      const count = Buffer.alloc(4);
      count.writeUInt32LE(segments.length + 1);
      writeSync(fd, count, 0, 4, 8); // the count last: a reader that sees it sees the segment
    } finally {
      closeSync(fd);
    }
    while (this.realNs() < at) await new Promise((resolve) => setTimeout(resolve, 1));
  }

  /** `run()` with the whole tree at `rate`, back at 1 after; one case at a time per tree. */
  async at(rate, run) {
    const release = await turn(`${this.frame}.lock`);
    try {
      await this.setRate(rate);
      try {
        return await run();
      } finally {
        await this.setRate(1);
      }
    } finally {
      release();
    }
  }
}

/** A lock file beside the frame holding the holder's pid: the cases of one tree take turns. */
async function turn(path) {
  for (;;) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          unlinkSync(path);
        } catch {}
      };
    } catch (error) {
      if (error.code !== "EEXIST") throw error;
      if (!heldByALiveProcess(path)) {
        try {
          unlinkSync(path);
        } catch {}
        continue;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

function heldByALiveProcess(path) {
  let pid;
  try {
    pid = Number(readFileSync(path, "utf8").trim());
  } catch {
    return true; // being written: wait
  }
  if (!(pid > 0)) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

/** `env` for a process of squall's own (the server the helper starts): no preload, no frame. */
export function withoutClock(env) {
  const kept = { ...env };
  delete kept.SQUALL_CLOCK_FRAME;
  delete kept.SQUALL_CLOCK;
  const preload = (kept.LD_PRELOAD ?? "").split(":").filter((part) => part && !part.includes("libsquall_clock"));
  if (preload.length) kept.LD_PRELOAD = preload.join(":");
  else delete kept.LD_PRELOAD;
  return kept;
}
