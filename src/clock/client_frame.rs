//! The wall time a client on a sped-up clock reads. A client whose process runs on a clock sped
//! up `rate` times (libfaketime, `squall run --clock accelerated`) reads wall time that started
//! at real time `origin` and runs `rate` times faster; a date squall sends it (an HTTP-date
//! `retry-after`, a quota's reset) must be in that frame, or it would lie in the client's past.

use std::time::SystemTime;

/// A client's frame of wall time: it started at real `origin` and runs `rate` times real time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientFrame {
    origin: SystemTime,
    rate: f64,
}

impl ClientFrame {
    /// A frame that started at real `origin` and runs `rate` times real time (a rate that is not
    /// a positive finite number is taken as 1: real time).
    pub fn new(origin: SystemTime, rate: f64) -> ClientFrame {
        let rate = if rate.is_finite() && rate > 0.0 { rate } else { 1.0 };
        ClientFrame { origin, rate }
    }

    /// The wall time the client reads when real wall time is `real`.
    pub fn seen(&self, real: SystemTime) -> SystemTime {
        match real.duration_since(self.origin) {
            Ok(after) => self.origin + after.mul_f64(self.rate),
            Err(before) => self.origin.checked_sub(before.duration().mul_f64(self.rate)).unwrap_or(self.origin),
        }
    }

    /// How much faster than real time it runs.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// The real time it started at.
    pub fn origin(&self) -> SystemTime {
        self.origin
    }
}

impl Default for ClientFrame {
    /// Real time.
    fn default() -> Self {
        ClientFrame { origin: SystemTime::UNIX_EPOCH, rate: 1.0 }
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
}
