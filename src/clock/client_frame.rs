//! The wall time a client on squall's clock reads. Its process tree reads time sped up from a
//! frame ([`Frame`]): a date squall sends it (an HTTP-date `retry-after`, a quota's reset) must be
//! in that frame, or it would lie in the client's past.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use super::frame::{Frame, FrameError};

/// A client's frame of wall time: a frame squall made and knows, or one another process changes
/// (a test runner on the clock) and that is read again at each date.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientFrame(Source);

#[derive(Debug, Clone, PartialEq)]
enum Source {
    Known(Frame),
    Followed { path: Arc<PathBuf>, when_followed: Frame },
}

impl ClientFrame {
    /// A frame that started at real `origin` and runs `rate` times real time (a rate that is not
    /// a positive finite number is taken as 1: real time).
    pub fn new(origin: SystemTime, rate: f64) -> ClientFrame {
        ClientFrame(Source::Known(Frame::starting(origin, 0, rate)))
    }

    /// The frame `frame`, which nobody changes.
    pub fn known(frame: Frame) -> ClientFrame {
        ClientFrame(Source::Known(frame))
    }

    /// The frame in the file `path`, read again at each date (its rate changes while it runs).
    pub fn followed(path: &Path) -> Result<ClientFrame, FrameError> {
        let when_followed = Frame::read(path)?;
        Ok(ClientFrame(Source::Followed { path: Arc::new(path.to_owned()), when_followed }))
    }

    /// The wall time the client reads when real wall time is `real`.
    pub fn seen(&self, real: SystemTime) -> SystemTime {
        self.frame_now().seen(real)
    }

    /// How much faster than real time it runs now.
    pub fn rate(&self) -> f64 {
        self.frame_now().rate_at(SystemTime::now())
    }

    /// The real time it started at.
    pub fn origin(&self) -> SystemTime {
        self.frame_now().origin()
    }

    fn frame_now(&self) -> std::borrow::Cow<'_, Frame> {
        match &self.0 {
            Source::Known(frame) => std::borrow::Cow::Borrowed(frame),
            // A file that went away (its runner ended) leaves the frame as it last was.
            Source::Followed { path, when_followed } => {
                Frame::read(path).map_or(std::borrow::Cow::Borrowed(when_followed), std::borrow::Cow::Owned)
            }
        }
    }
}

impl Default for ClientFrame {
    /// Real time.
    fn default() -> Self {
        ClientFrame::new(SystemTime::UNIX_EPOCH, 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_sped_up_client_reads_its_origin_then_time_rate_times_faster() {
        let origin = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let frame = ClientFrame::new(origin, 100.0);
        assert_eq!(frame.seen(origin), origin);
        assert_eq!(frame.seen(origin + Duration::from_millis(30)), origin + Duration::from_secs(3));
        assert_eq!(frame.seen(origin - Duration::from_millis(1)), origin - Duration::from_millis(100));
        let real = ClientFrame::default();
        assert_eq!(real.seen(origin), origin, "the default frame is real time");
        assert_eq!(ClientFrame::new(origin, f64::NAN).rate(), 1.0);
    }

    #[test]
    fn a_followed_frame_is_read_again_at_each_date() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("frame");
        let origin = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        Frame::starting(origin, 0, 1.0).create(&path).expect("created");
        let frame = ClientFrame::followed(&path).expect("followed");
        assert_eq!(frame.seen(origin + Duration::from_secs(2)), origin + Duration::from_secs(2));
        // A runner switches the tree to x100 from 1 s on.
        Frame::append(&path, 1_000_000_000, 100.0).expect("appended");
        assert_eq!(frame.seen(origin + Duration::from_secs(2)), origin + Duration::from_secs(101));
        drop(dir);
        assert_eq!(frame.seen(origin + Duration::from_secs(2)), origin + Duration::from_secs(2), "as it was followed");
    }
}
