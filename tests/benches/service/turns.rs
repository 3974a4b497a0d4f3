//! Two things timed in turns, each first in every other round, so that a machine which
//! slows or speeds up during a run (other tenants, a CPU's boost) moves both alike.

use std::time::Duration;

/// The times of `a` and of `b`, a round each, in order.
pub struct Turns {
    pub a: Vec<Duration>,
    pub b: Vec<Duration>,
}

impl Turns {
    /// `rounds` (at least one) of `a` and `b`: `a` first in the even rounds, `b` in the odd.
    pub fn take(rounds: usize, mut a: impl FnMut() -> Duration, mut b: impl FnMut() -> Duration) -> Turns {
        let mut turns = Turns { a: Vec::new(), b: Vec::new() };
        for round in 0..rounds.max(1) {
            if round % 2 == 0 {
                turns.a.push(a());
                turns.b.push(b());
            } else {
                turns.b.push(b());
                turns.a.push(a());
            }
        }
        turns
    }

    /// Each round's `a / b`, in order: one round's pair is timed minutes apart, so its
    /// ratio is less moved by the machine than a ratio of medians.
    pub fn ratios(&self) -> Vec<f64> {
        self.a.iter().zip(&self.b).map(|(a, b)| a.as_secs_f64() / b.as_secs_f64()).collect()
    }
}

/// The middle one (the upper of the two middle ones of an even count).
pub fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}
