//! When and how long to wait before trying a call again.

use reqwest::header::{HeaderMap, RETRY_AFTER};
use std::time::{Duration, SystemTime};

/// Retries of calls answered 429 or 503, and of calls that failed to connect (or, for
/// calls that are safe to repeat, failed in flight). The wait doubles from `initial` up
/// to `max_backoff`, with jitter; a `Retry-After` from the service replaces it, unless it
/// asks for longer than `max_retry_after`, when the call fails at once with the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retry {
    /// Attempts after the first; 0 turns retrying off.
    pub max_retries: u32,
    pub initial: Duration,
    pub max_backoff: Duration,
    pub max_retry_after: Duration,
}

impl Default for Retry {
    fn default() -> Self {
        Retry {
            max_retries: 4,
            initial: Duration::from_millis(200),
            max_backoff: Duration::from_secs(10),
            max_retry_after: Duration::from_secs(60),
        }
    }
}

impl Retry {
    /// No retries at all.
    pub fn never() -> Self {
        Retry { max_retries: 0, ..Retry::default() }
    }

    /// The wait before retry number `attempt` (0 for the first retry): exponential, with
    /// "equal jitter" (between half and all of it) so that many clients refused at once
    /// do not come back at once.
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let full = self.initial.saturating_mul(2u32.saturating_pow(attempt)).min(self.max_backoff);
        let half = full / 2;
        let spread = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
        let jitter = if spread == 0 { 0 } else { getrandom::u64().unwrap_or(0) % spread };
        half + Duration::from_nanos(jitter)
    }
}

/// `Retry-After` as delta-seconds or an HTTP date (RFC 9110 §10.2.3); a date in the past
/// means now.
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_784_000_000);
        assert_eq!(retry_after(&headers("7"), now), Some(Duration::from_secs(7)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(90));
        assert_eq!(retry_after(&headers(&later), now), Some(Duration::from_secs(90)));
        let earlier = httpdate::fmt_http_date(now - Duration::from_secs(90));
        assert_eq!(retry_after(&headers(&earlier), now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers("soon"), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn backoff_doubles_within_its_jitter_and_stops_at_the_cap() {
        let r = Retry { initial: Duration::from_millis(100), max_backoff: Duration::from_secs(1), ..Retry::default() };
        for (attempt, full) in [(0, 100), (1, 200), (2, 400), (3, 800), (4, 1000), (30, 1000)] {
            let wait = r.backoff(attempt);
            let full = Duration::from_millis(full);
            assert!(wait >= full / 2 && wait <= full, "attempt {attempt}: {wait:?}");
        }
    }
}
