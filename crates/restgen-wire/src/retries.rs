//! When a webhook delivery is tried again: Standard Webhooks' example schedule. The
//! runtime waits these delays, and the OpenAPI document and docs/webhooks.md describe them
//! with [`described`], so the three cannot drift apart.

use std::time::Duration;

/// Delays before the second, third, ... attempt of a delivery; the last repeats.
pub const RETRY_SCHEDULE: [Duration; 9] = [
    Duration::from_secs(5),
    Duration::from_secs(5 * 60),
    Duration::from_secs(30 * 60),
    Duration::from_secs(2 * 3600),
    Duration::from_secs(5 * 3600),
    Duration::from_secs(10 * 3600),
    Duration::from_secs(14 * 3600),
    Duration::from_secs(20 * 3600),
    Duration::from_secs(24 * 3600),
];

/// The first `n` delays as a reader writes them: `5 s, 5 min, 30 min, 2 h`.
pub fn described(n: usize) -> String {
    let shown: Vec<String> = RETRY_SCHEDULE.iter().take(n).map(|d| short(*d)).collect();
    shown.join(", ")
}

/// A whole number of hours, minutes or seconds, in the largest unit that divides it.
fn short(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        _ if s.is_multiple_of(3600) => format!("{} h", s / 3600),
        _ if s.is_multiple_of(60) => format!("{} min", s / 60),
        _ => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_schedule_reads_in_its_largest_units() {
        assert_eq!(super::described(4), "5 s, 5 min, 30 min, 2 h");
        assert_eq!(super::described(99).matches(", ").count(), super::RETRY_SCHEDULE.len() - 1);
    }
}
