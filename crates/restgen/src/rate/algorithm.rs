//! The four algorithms, as pure functions of a budget's state and the time: the same
//! code decides whether the state lives in this process or in PostgreSQL, so a service
//! limits alike on either database. Times are microseconds since the Unix epoch.

use crate::spec::RateAlgorithm;
use crate::store::Budget;

const SECOND: i64 = 1_000_000;

/// A limit with the deployment's scale applied: what one budget allows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Quota {
    /// `interval`: microseconds to earn one request; `capacity`: the largest burst.
    Bucket {
        capacity: i64,
        interval: i64,
    },
    /// `interval`: microseconds between two requests leaving; `capacity`: how many may
    /// be in the bucket (waiting, or leaving now).
    Leaky {
        capacity: i64,
        interval: i64,
    },
    Fixed {
        limit: i64,
        window: i64,
    },
    Sliding {
        limit: i64,
        window: i64,
    },
}

impl Quota {
    /// `algorithm` with its quotas and refill rate multiplied by `scale` (at least one
    /// request per window, whatever the scale).
    pub fn scaled(algorithm: RateAlgorithm, scale: f64) -> Quota {
        let times = |n: u32| ((f64::from(n) * scale).round() as i64).max(1);
        let window = |w: std::time::Duration| i64::try_from(w.as_micros()).unwrap_or(i64::MAX).max(1);
        match algorithm {
            RateAlgorithm::TokenBucket { capacity, refill_per_second } => Quota::Bucket {
                capacity: times(capacity),
                interval: ((SECOND as f64) / (refill_per_second * scale)).round().max(1.0) as i64,
            },
            RateAlgorithm::LeakyBucket { capacity, leak_per_second } => Quota::Leaky {
                capacity: times(capacity),
                interval: ((SECOND as f64) / (leak_per_second * scale)).round().max(1.0) as i64,
            },
            RateAlgorithm::FixedWindow { limit, window: w } => Quota::Fixed { limit: times(limit), window: window(w) },
            RateAlgorithm::SlidingWindow { limit, window: w } => {
                Quota::Sliding { limit: times(limit), window: window(w) }
            }
        }
    }

    /// The requests a budget holds when untouched (`q` of `RateLimit-Policy`).
    pub fn limit(self) -> i64 {
        match self {
            Quota::Bucket { capacity, .. } | Quota::Leaky { capacity, .. } => capacity,
            Quota::Fixed { limit, .. } | Quota::Sliding { limit, .. } => limit,
        }
    }

    /// The span the quota is measured over, in whole seconds (`w` of `RateLimit-Policy`):
    /// a bucket's is the time it takes to refill from empty, so `q / w` is its
    /// sustained rate.
    pub fn window_seconds(self) -> i64 {
        let micros = match self {
            Quota::Bucket { capacity, interval } | Quota::Leaky { capacity, interval } => {
                capacity.saturating_mul(interval)
            }
            Quota::Fixed { window, .. } | Quota::Sliding { window, .. } => window,
        };
        ceil_div(micros, SECOND).max(1)
    }

    /// A tag for the state's meaning, part of the budget's key: a limit whose algorithm
    /// changes between deployments starts afresh instead of misreading the old state.
    pub fn tag(self) -> &'static str {
        match self {
            Quota::Bucket { .. } => "tb",
            Quota::Leaky { .. } => "lb",
            Quota::Fixed { .. } => "fw",
            Quota::Sliding { .. } => "sw",
        }
    }
}

/// What one request's check decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub allowed: bool,
    /// Requests left in the budget after this one (`r` of `RateLimit`).
    pub remaining: i64,
    /// Microseconds until the whole quota is available again (`t` of `RateLimit`).
    pub reset: i64,
    /// When refused: microseconds until a request would pass.
    pub retry_after: i64,
    /// The state to keep; only an allowed request changes it.
    pub state: Budget,
    /// From this moment the state means the same as no state: it may be dropped.
    pub expires_at: i64,
    /// Microseconds an admitted request waits for its turn before it is served (a leaky
    /// bucket's queue; 0 for the others).
    pub delay: i64,
}

/// Whether one more request fits the budget `state` describes at `now`.
pub(crate) fn decide(quota: Quota, state: Option<Budget>, now: i64) -> Verdict {
    match quota {
        Quota::Bucket { capacity, interval } => bucket(capacity, interval, state, now),
        Quota::Leaky { capacity, interval } => leaky(capacity, interval, state, now),
        Quota::Fixed { limit, window } => fixed(limit, window, state, now),
        Quota::Sliding { limit, window } => sliding(limit, window, state, now),
    }
}

/// GCRA: the bucket holds `capacity` requests; each request moves the theoretical
/// arrival time one `interval` on, and a request that would move it more than the whole
/// bucket ahead of now is refused.
fn bucket(capacity: i64, interval: i64, state: Option<Budget>, now: i64) -> Verdict {
    let burst = capacity.saturating_mul(interval);
    let tat = state.map_or(now, |s| s.start).max(now);
    let next = tat + interval;
    if next - now > burst {
        let retry_after = next - burst - now;
        return Verdict {
            allowed: false,
            remaining: 0,
            reset: tat - now,
            retry_after,
            state: Budget { start: tat, ..Budget::default() },
            expires_at: tat,
            delay: 0,
        };
    }
    Verdict {
        allowed: true,
        remaining: (burst - (next - now)) / interval,
        reset: next - now,
        retry_after: 0,
        state: Budget { start: next, ..Budget::default() },
        expires_at: next,
        delay: 0,
    }
}

/// The leaky bucket as a queue (nginx's `limit_req` without `nodelay`): requests leave
/// the bucket one `interval` apart, whatever their arrival; one that arrives while others
/// wait is admitted with a delay until its turn, and refused when `capacity` requests are
/// already in the bucket (waiting, or leaving now). Unlike the token bucket, a burst is
/// never served at once: what the service sees is a constant rate.
fn leaky(capacity: i64, interval: i64, state: Option<Budget>, now: i64) -> Verdict {
    // The turn of this request: now when the bucket is empty, else one interval after
    // the last request admitted.
    let turn = state.map_or(now, |s| s.start + interval).max(now);
    let delay = turn - now;
    // Requests in the bucket with this one: the waiting ahead of it (every interval
    // between now and its turn holds one), and itself.
    let depth = ceil_div(delay, interval) + 1;
    let empty_at = turn + interval;
    if depth > capacity {
        let last = state.map_or(now, |s| s.start);
        return Verdict {
            allowed: false,
            remaining: 0,
            reset: (last + interval - now).max(0),
            // Once the oldest waiting request has left, a place is free.
            retry_after: (turn - (capacity - 1) * interval - now).max(1),
            state: Budget { start: last, ..Budget::default() },
            expires_at: last + interval,
            delay: 0,
        };
    }
    Verdict {
        allowed: true,
        remaining: capacity - depth,
        reset: empty_at - now,
        retry_after: 0,
        state: Budget { start: turn, ..Budget::default() },
        expires_at: empty_at,
        delay,
    }
}

/// At most `limit` requests per window; windows start at multiples of `window` since
/// the epoch, so every instance agrees on them.
fn fixed(limit: i64, window: i64, state: Option<Budget>, now: i64) -> Verdict {
    let start = now - now.rem_euclid(window);
    let end = start + window;
    let count = state.filter(|s| s.start == start).map_or(0, |s| s.count);
    if count >= limit {
        return Verdict {
            allowed: false,
            remaining: 0,
            reset: end - now,
            retry_after: end - now,
            state: Budget { start, count, previous: 0 },
            expires_at: end,
            delay: 0,
        };
    }
    Verdict {
        allowed: true,
        remaining: limit - count - 1,
        reset: end - now,
        retry_after: 0,
        state: Budget { start, count: count + 1, previous: 0 },
        expires_at: end,
        delay: 0,
    }
}

/// The sliding window counter: the requests of the last window-long span are estimated
/// as the current window's count plus the previous window's, weighted by how much of
/// it the span still covers. Memory stays constant per budget, unlike a log of every
/// request, at the price of assuming the previous window's requests were evenly spread.
fn sliding(limit: i64, window: i64, state: Option<Budget>, now: i64) -> Verdict {
    let start = now - now.rem_euclid(window);
    let (previous, count) = match state {
        Some(s) if s.start == start => (s.previous, s.count),
        Some(s) if s.start == start - window => (s.count, 0),
        _ => (0, 0),
    };
    let elapsed = now - start;
    // The previous window's requests still inside the span, rounded up: never fewer
    // than the estimate.
    let carried = ceil_div(previous * (window - elapsed), window);
    let state = Budget { start, count, previous };
    if carried + count + 1 > limit {
        let pass_at = if count < limit {
            // In this window, once enough of the previous one has slid out.
            start + window - (limit - 1 - count) * window / previous.max(1)
        } else {
            // In the next, once enough of this one has.
            start + 2 * window - (limit - 1) * window / count.max(1)
        };
        let reset = if count > 0 { start + 2 * window - now } else { start + window - now };
        return Verdict {
            allowed: false,
            remaining: 0,
            reset,
            retry_after: (pass_at - now).max(1),
            state,
            expires_at: start + 2 * window,
            delay: 0,
        };
    }
    Verdict {
        allowed: true,
        remaining: limit - (carried + count + 1),
        reset: start + 2 * window - now,
        retry_after: 0,
        state: Budget { count: count + 1, ..state },
        expires_at: start + 2 * window,
        delay: 0,
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1).div_euclid(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_800_000_000 * SECOND;

    /// Runs `n` requests at `now` against `state`, returning how many passed.
    fn burst(quota: Quota, state: &mut Option<Budget>, now: i64, n: usize) -> (usize, Verdict) {
        let mut passed = 0;
        let mut last = None;
        for _ in 0..n {
            let v = decide(quota, *state, now);
            if v.allowed {
                passed += 1;
                *state = Some(v.state);
            }
            last = Some(v);
        }
        (passed, last.expect("n > 0"))
    }

    #[test]
    fn a_bucket_allows_its_capacity_at_once_then_refills_one_per_interval() {
        let quota = Quota::scaled(RateAlgorithm::TokenBucket { capacity: 5, refill_per_second: 1.0 }, 1.0);
        let mut state = None;
        let first = decide(quota, state, T0);
        assert_eq!((first.allowed, first.remaining), (true, 4));
        let (passed, refused) = burst(quota, &mut state, T0, 7);
        assert_eq!(passed, 5);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after, SECOND, "one token comes back after one second");
        assert_eq!(refused.reset, 5 * SECOND, "the whole bucket after five");
        // Half a second later still nothing; at one second exactly one.
        assert!(!decide(quota, state, T0 + SECOND / 2).allowed);
        let (passed, _) = burst(quota, &mut state, T0 + SECOND, 3);
        assert_eq!(passed, 1);
        // After the full refill time, the whole burst again, never more.
        let (passed, _) = burst(quota, &mut state, T0 + 60 * SECOND, 9);
        assert_eq!(passed, 5);
    }

    #[test]
    fn a_bucket_refilling_slower_than_once_a_second_says_so_in_its_retry_time() {
        let quota = Quota::scaled(RateAlgorithm::TokenBucket { capacity: 2, refill_per_second: 0.25 }, 1.0);
        let mut state = None;
        let (passed, refused) = burst(quota, &mut state, T0, 3);
        assert_eq!(passed, 2);
        assert_eq!(refused.retry_after, 4 * SECOND);
        assert_eq!(quota.window_seconds(), 8, "q/w is the sustained rate");
    }

    #[test]
    fn a_leaky_bucket_lets_requests_out_one_interval_apart_and_holds_at_most_its_capacity() {
        // Two a second, at most three in the bucket.
        let quota = Quota::scaled(RateAlgorithm::LeakyBucket { capacity: 3, leak_per_second: 2.0 }, 1.0);
        assert_eq!(quota, Quota::Leaky { capacity: 3, interval: SECOND / 2 });
        let mut state = None;
        // A burst of five: the first leaves now, the next two wait their turns, the rest
        // find the bucket full.
        let mut delays = Vec::new();
        for _ in 0..5 {
            let v = decide(quota, state, T0);
            if v.allowed {
                state = Some(v.state);
                delays.push((v.delay, v.remaining));
            } else {
                assert_eq!(v.retry_after, SECOND / 2, "a place is free when the first waiting one leaves");
                assert_eq!(v.state, state.unwrap(), "a refusal changes nothing");
            }
        }
        assert_eq!(delays, [(0, 2), (SECOND / 2, 1), (SECOND, 0)]);
        // Half a second on, one has left: one place, whose turn follows the last.
        let v = decide(quota, state, T0 + SECOND / 2);
        assert!(v.allowed);
        assert_eq!((v.delay, v.remaining), (SECOND, 0));
        state = Some(v.state);
        assert!(!decide(quota, state, T0 + SECOND / 2).allowed);
        // Once every turn has passed the bucket is empty again, and the state means nothing.
        let v = decide(quota, state, v.expires_at);
        assert!(v.allowed);
        assert_eq!((v.delay, v.remaining), (0, 2));
        assert_eq!(decide(quota, None, v.expires_at + 1), decide(quota, state.map(|_| v.state), v.expires_at + 1));
    }

    #[test]
    fn a_leaky_bucket_of_one_is_a_strict_rate() {
        let quota = Quota::scaled(RateAlgorithm::LeakyBucket { capacity: 1, leak_per_second: 1.0 }, 1.0);
        let v = decide(quota, None, T0);
        assert!(v.allowed && v.delay == 0);
        let refused = decide(quota, Some(v.state), T0 + SECOND / 2);
        assert!(!refused.allowed);
        assert_eq!(refused.retry_after, SECOND / 2);
        assert!(decide(quota, Some(v.state), T0 + SECOND).allowed);
    }

    #[test]
    fn a_fixed_window_counts_per_aligned_window() {
        let quota = Quota::scaled(
            RateAlgorithm::FixedWindow { limit: 3, window: std::time::Duration::from_millis(60_000) },
            1.0,
        );
        let mut state = None;
        let now = T0 + 50 * SECOND; // ten seconds before the window ends
        let (passed, refused) = burst(quota, &mut state, now, 5);
        assert_eq!(passed, 3);
        assert_eq!(refused.retry_after, 10 * SECOND);
        assert_eq!((refused.remaining, refused.reset), (0, 10 * SECOND));
        let (passed, _) = burst(quota, &mut state, T0 + 60 * SECOND, 5);
        assert_eq!(passed, 3, "a new window, a new count");
    }

    #[test]
    fn a_sliding_window_carries_the_previous_windows_share() {
        let quota = Quota::scaled(
            RateAlgorithm::SlidingWindow { limit: 10, window: std::time::Duration::from_millis(60_000) },
            1.0,
        );
        let mut state = None;
        let (passed, _) = burst(quota, &mut state, T0 + 30 * SECOND, 12);
        assert_eq!(passed, 10);
        // A quarter into the next window, three quarters of the previous ten still count.
        let (passed, refused) = burst(quota, &mut state, T0 + 75 * SECOND, 5);
        assert_eq!(passed, 2);
        assert!(!refused.allowed);
        // The next passes once the carried share drops to 7: at 0.3 of the window.
        let at = T0 + 75 * SECOND + refused.retry_after;
        assert!(decide(quota, state, at).allowed, "passes after its retry time");
        assert!(!decide(quota, state, at - SECOND).allowed, "and not a second before");
        // Two windows later nothing is carried.
        let (passed, _) = burst(quota, &mut state, T0 + 180 * SECOND, 12);
        assert_eq!(passed, 10);
    }

    #[test]
    fn a_full_sliding_window_waits_for_the_next_one() {
        let quota = Quota::scaled(
            RateAlgorithm::SlidingWindow { limit: 4, window: std::time::Duration::from_millis(10_000) },
            1.0,
        );
        let mut state = None;
        let (passed, refused) = burst(quota, &mut state, T0, 5);
        assert_eq!(passed, 4);
        let at = T0 + refused.retry_after;
        assert!(at >= T0 + 10 * SECOND, "not within the full window");
        assert!(decide(quota, state, at).allowed);
        assert!(!decide(quota, state, at - SECOND / 10).allowed);
    }

    #[test]
    fn a_refused_request_changes_nothing_and_the_state_expires_when_it_means_nothing() {
        for algorithm in [
            RateAlgorithm::TokenBucket { capacity: 1, refill_per_second: 1.0 },
            RateAlgorithm::FixedWindow { limit: 1, window: std::time::Duration::from_millis(1000) },
            RateAlgorithm::SlidingWindow { limit: 1, window: std::time::Duration::from_millis(1000) },
        ] {
            let quota = Quota::scaled(algorithm, 1.0);
            let allowed = decide(quota, None, T0);
            let refused = decide(quota, Some(allowed.state), T0);
            assert!(allowed.allowed && !refused.allowed, "{algorithm:?}");
            assert_eq!(decide(quota, Some(allowed.state), refused.expires_at), decide(quota, None, refused.expires_at));
        }
    }

    #[test]
    fn scale_multiplies_quotas_and_rates() {
        let quota = Quota::scaled(RateAlgorithm::TokenBucket { capacity: 60, refill_per_second: 1.0 }, 10.0);
        assert_eq!(quota, Quota::Bucket { capacity: 600, interval: SECOND / 10 });
        assert_eq!(quota.window_seconds(), 60);
        let tiny = Quota::scaled(
            RateAlgorithm::FixedWindow { limit: 3, window: std::time::Duration::from_millis(1000) },
            0.01,
        );
        assert_eq!(tiny.limit(), 1, "never below one request");
    }
}
