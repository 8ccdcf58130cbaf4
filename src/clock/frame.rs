//! A clock frame: the file a process tree on squall's clock reads its time from (docs/clock.md).
//!
//! The preload (`crates/squall-suite/clock/`) maps it read-only in every process of the tree.
//! It holds the real time the frame started at, on the wall clock and on the monotonic one, and
//! segments: from real monotonic time `real_ns` on, seen monotonic time is `seen_ns` plus the
//! real time since, times `rate`. Every other clock is read as real time plus what the monotonic
//! one has gained. Segments are only ever appended, so a rate change reaches the whole tree at
//! its next clock read and the clock never goes back.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The file's first bytes.
const MAGIC: &[u8; 8] = b"SQCLOCK1";
/// The header's size; segments follow it.
const HEADER_BYTES: u64 = 64;
/// One segment: real and seen monotonic ns (i64), the rate (f64), a check word (u64).
const SEGMENT_BYTES: u64 = 32;
/// The file's size: preloads map this much, so segments never move.
pub(super) const FILE_BYTES: u64 = 1 << 20;
/// The most segments a frame holds.
pub(super) const MAX_SEGMENTS: u32 = ((FILE_BYTES - HEADER_BYTES) / SEGMENT_BYTES) as u32;
/// A segment's check word is its three fields xor this: a torn one is never read.
const CHECK_SALT: u64 = 0x5351_434c_4f43_4b31;

/// From real monotonic time `real_ns` on, seen monotonic time is `seen_ns` plus the real time
/// since, times `rate`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// Real monotonic time it starts at (ns).
    pub real_ns: i64,
    /// Seen monotonic time then (ns).
    pub seen_ns: i64,
    /// How many times faster than real time seen time runs.
    pub rate: f64,
}

impl Segment {
    fn check(&self) -> u64 {
        (self.real_ns as u64) ^ (self.seen_ns as u64) ^ self.rate.to_bits() ^ CHECK_SALT
    }

    /// Seen monotonic time at real monotonic time `real_ns`.
    fn seen_at(&self, real_ns: i64) -> i64 {
        self.seen_ns + ((real_ns - self.real_ns) as f64 * self.rate) as i64
    }
}

/// What went wrong with a frame file, naming it.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// It could not be read or written.
    #[error("clock frame {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// It is not a clock frame (or a torn one: no whole segment).
    #[error("clock frame {path}: {why}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        why: String,
    },
    /// A rate that is not a positive finite number.
    #[error("clock frame {path}: a rate is a positive number, not {rate}")]
    BadRate {
        /// The file.
        path: PathBuf,
        /// The rate asked for.
        rate: f64,
    },
    /// Every segment it can hold is written.
    #[error("clock frame {path}: full ({MAX_SEGMENTS} rate changes)")]
    Full {
        /// The file.
        path: PathBuf,
    },
}

/// A frame as read: its origin and its segments, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    origin_wall: SystemTime,
    origin_monotonic_ns: i64,
    segments: Vec<Segment>,
}

impl Frame {
    /// A frame that starts at real wall time `origin_wall` (monotonic `origin_monotonic_ns`, read
    /// at the same moment) at `rate`.
    pub fn starting(origin_wall: SystemTime, origin_monotonic_ns: i64, rate: f64) -> Frame {
        let first = Segment { real_ns: origin_monotonic_ns, seen_ns: origin_monotonic_ns, rate: valid_rate(rate) };
        Frame { origin_wall, origin_monotonic_ns, segments: vec![first] }
    }

    /// Write it to `path` whole: a new file that takes the name at once, so that no process
    /// ever maps half a frame.
    pub fn create(&self, path: &Path) -> Result<(), FrameError> {
        let io = |source| FrameError::Io { path: path.to_owned(), source };
        let temporary = path.with_extension("partial");
        let mut bytes = Vec::with_capacity((HEADER_BYTES + SEGMENT_BYTES * self.segments.len() as u64) as usize);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&(self.segments.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&0u32.to_le_bytes());
        bytes.extend_from_slice(&wall_ns(self.origin_wall).to_le_bytes());
        bytes.extend_from_slice(&self.origin_monotonic_ns.to_le_bytes());
        bytes.resize(HEADER_BYTES as usize, 0);
        for segment in &self.segments {
            bytes.extend_from_slice(&segment_bytes(segment));
        }
        let mut file = File::create(&temporary).map_err(io)?;
        file.set_len(FILE_BYTES).map_err(io)?;
        file.write_all(&bytes).map_err(io)?;
        std::fs::rename(&temporary, path).map_err(io)
    }

    /// The frame in `path`.
    pub fn read(path: &Path) -> Result<Frame, FrameError> {
        let io = |source| FrameError::Io { path: path.to_owned(), source };
        let invalid = |why: &str| FrameError::Invalid { path: path.to_owned(), why: why.to_owned() };
        let mut file = File::open(path).map_err(io)?;
        let mut header = [0u8; HEADER_BYTES as usize];
        file.read_exact(&mut header).map_err(io)?;
        if &header[..8] != MAGIC {
            return Err(invalid("not a clock frame (its first bytes are not SQCLOCK1)"));
        }
        let count = u32::from_le_bytes([header[8], header[9], header[10], header[11]]).min(MAX_SEGMENTS);
        let origin_wall =
            SystemTime::UNIX_EPOCH + Duration::from_nanos(i64::from_le_bytes(word(&header, 16)).max(0) as u64);
        let origin_monotonic_ns = i64::from_le_bytes(word(&header, 24));
        let mut raw = vec![0u8; (u64::from(count) * SEGMENT_BYTES) as usize];
        file.read_exact(&mut raw).map_err(io)?;
        let segments: Vec<Segment> = raw
            .chunks_exact(SEGMENT_BYTES as usize)
            .map(|bytes| {
                let segment = Segment {
                    real_ns: i64::from_le_bytes(word(bytes, 0)),
                    seen_ns: i64::from_le_bytes(word(bytes, 8)),
                    rate: f64::from_le_bytes(word(bytes, 16)),
                };
                (segment.check() == u64::from_le_bytes(word(bytes, 24)) && segment.rate > 0.0).then_some(segment)
            })
            .map_while(|segment| segment)
            .collect();
        if segments.is_empty() {
            return Err(invalid("no whole segment"));
        }
        Ok(Frame { origin_wall, origin_monotonic_ns, segments })
    }

    /// Append to `path` the segment that runs at `rate` from real monotonic time `at_ns` on
    /// (a moment just ahead: processes read the old rate until then). One writer at a time.
    pub fn append(path: &Path, at_ns: i64, rate: f64) -> Result<Segment, FrameError> {
        if !(rate.is_finite() && rate > 0.0) {
            return Err(FrameError::BadRate { path: path.to_owned(), rate });
        }
        let frame = Frame::read(path)?;
        let count = frame.segments.len() as u32;
        if count >= MAX_SEGMENTS {
            return Err(FrameError::Full { path: path.to_owned() });
        }
        let next = Segment { real_ns: at_ns, seen_ns: frame.segment_at(at_ns).seen_at(at_ns), rate };
        let io = |source| FrameError::Io { path: path.to_owned(), source };
        let mut file = std::fs::OpenOptions::new().write(true).open(path).map_err(io)?;
        file.seek(SeekFrom::Start(HEADER_BYTES + u64::from(count) * SEGMENT_BYTES)).map_err(io)?;
        file.write_all(&segment_bytes(&next)).map_err(io)?;
        // The count last: a reader that sees it sees the whole segment.
        file.seek(SeekFrom::Start(8)).map_err(io)?;
        file.write_all(&(count + 1).to_le_bytes()).map_err(io)?;
        Ok(next)
    }

    /// Its segments, oldest first.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The real wall time it started at.
    pub fn origin(&self) -> SystemTime {
        self.origin_wall
    }

    /// The wall time a process on it reads when real wall time is `real`.
    pub fn seen(&self, real: SystemTime) -> SystemTime {
        let monotonic = self.origin_monotonic_ns + signed_ns(real, self.origin_wall);
        let gained = self.segment_at(monotonic).seen_at(monotonic) - monotonic;
        shifted(real, gained)
    }

    /// Its rate when real wall time is `real`.
    pub fn rate_at(&self, real: SystemTime) -> f64 {
        self.segment_at(self.origin_monotonic_ns + signed_ns(real, self.origin_wall)).rate
    }

    /// The segment in force at real monotonic time `real_ns` (the first one before it began).
    fn segment_at(&self, real_ns: i64) -> &Segment {
        self.segments.iter().rev().find(|s| s.real_ns <= real_ns).unwrap_or(&self.segments[0])
    }
}

fn valid_rate(rate: f64) -> f64 {
    if rate.is_finite() && rate > 0.0 {
        rate
    } else {
        1.0
    }
}

fn segment_bytes(segment: &Segment) -> [u8; SEGMENT_BYTES as usize] {
    let mut bytes = [0u8; SEGMENT_BYTES as usize];
    bytes[0..8].copy_from_slice(&segment.real_ns.to_le_bytes());
    bytes[8..16].copy_from_slice(&segment.seen_ns.to_le_bytes());
    bytes[16..24].copy_from_slice(&segment.rate.to_le_bytes());
    bytes[24..32].copy_from_slice(&segment.check().to_le_bytes());
    bytes
}

fn word(bytes: &[u8], at: usize) -> [u8; 8] {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    word
}

fn wall_ns(time: SystemTime) -> i64 {
    signed_ns(time, SystemTime::UNIX_EPOCH)
}

/// `a - b` in ns.
fn signed_ns(a: SystemTime, b: SystemTime) -> i64 {
    match a.duration_since(b) {
        Ok(after) => after.as_nanos() as i64,
        Err(before) => -(before.duration().as_nanos() as i64),
    }
}

fn shifted(time: SystemTime, ns: i64) -> SystemTime {
    if ns >= 0 {
        time + Duration::from_nanos(ns as u64)
    } else {
        time.checked_sub(Duration::from_nanos(ns.unsigned_abs())).unwrap_or(time)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000_000;

    #[test]
    fn a_frame_reads_real_time_sped_up_from_its_origin_and_through_each_rate_change() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("frame");
        let origin = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        Frame::starting(origin, 50 * S, 100.0).create(&path).expect("created");
        assert_eq!(std::fs::metadata(&path).expect("written").len(), FILE_BYTES);
        let frame = Frame::read(&path).expect("read");
        assert_eq!(frame.seen(origin), origin);
        assert_eq!(frame.seen(origin + Duration::from_millis(30)), origin + Duration::from_secs(3));
        // From 1 s of real time on, rate 1: seen time goes on from the 100 s it had reached.
        let change = Frame::append(&path, 51 * S, 1.0).expect("appended");
        assert_eq!(change, Segment { real_ns: 51 * S, seen_ns: 150 * S, rate: 1.0 });
        let frame = Frame::read(&path).expect("read again");
        assert_eq!(frame.segments().len(), 2);
        assert_eq!(frame.seen(origin + Duration::from_secs(1)), origin + Duration::from_secs(100));
        assert_eq!(frame.seen(origin + Duration::from_secs(3)), origin + Duration::from_secs(102));
        assert_eq!(frame.rate_at(origin + Duration::from_millis(500)), 100.0);
        assert_eq!(frame.rate_at(origin + Duration::from_secs(2)), 1.0);
    }

    #[test]
    fn a_file_that_is_no_frame_or_a_bad_rate_is_refused_naming_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("not-a-frame");
        std::fs::write(&path, vec![b'x'; 200]).expect("written");
        let refused = Frame::read(&path).expect_err("refused").to_string();
        assert!(refused.contains("not-a-frame") && refused.contains("SQCLOCK1"), "{refused}");
        let frame = dir.path().join("frame");
        Frame::starting(SystemTime::now(), 0, 1.0).create(&frame).expect("created");
        assert!(matches!(Frame::append(&frame, S, 0.0), Err(FrameError::BadRate { .. })));
        assert!(matches!(Frame::read(&dir.path().join("missing")), Err(FrameError::Io { .. })));
    }

    #[test]
    fn a_torn_segment_is_never_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("frame");
        Frame::starting(SystemTime::now(), 0, 100.0).create(&path).expect("created");
        Frame::append(&path, S, 1.0).expect("appended");
        // The second segment's rate half written.
        let mut bytes = std::fs::read(&path).expect("read");
        let rate_at = (HEADER_BYTES + SEGMENT_BYTES + 16) as usize;
        bytes[rate_at] ^= 0xff;
        std::fs::write(&path, bytes).expect("written");
        assert_eq!(Frame::read(&path).expect("read").segments().len(), 1);
    }
}
