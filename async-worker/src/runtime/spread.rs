//! Which window of a queue's head a consumer peeks, so racing replicas spread out instead of losing the same races.

/// The deepest window a replica moves to after losing races.
const MAX_SPREAD: usize = 8;

/// Loss-free polls after which the spread halves (back to the head, in
/// time, for a replica that is alone again).
const CALM_POLLS: usize = 16;

/// Which window of the queue's head this consumer peeks: window `slot`
/// among `width`. Alone, a consumer stays at slot 0 (strict earliest
/// deadline first); racing others, it spreads out.
#[derive(Debug)]
pub struct Spread {
    pub slot: usize,
    pub width: usize,
    calm: usize,
}

impl Spread {
    pub fn new() -> Self {
        Spread {
            slot: 0,
            width: 1,
            calm: 0,
        }
    }

    /// Learns from a poll that peeked `peeked` members and lost `lost` of
    /// them to other replicas.
    pub fn after(&mut self, peeked: usize, lost: usize) {
        if lost * 2 > peeked {
            // Lost most of it: the slot is contended. Widen, move elsewhere.
            self.width = (self.width * 2).clamp(2, MAX_SPREAD);
            let other = rand::random_range(0..self.width - 1);
            self.slot = if other >= self.slot { other + 1 } else { other };
            self.calm = 0;
        } else if lost == 0 {
            self.calm += 1;
            if self.calm >= CALM_POLLS && self.width > 1 {
                self.width /= 2;
                self.slot = self.slot.min(self.width - 1);
                self.calm = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_consumer_that_loses_no_races_stays_at_the_head() {
        let mut spread = Spread::new();
        for _ in 0..100 {
            spread.after(200, 0);
            spread.after(200, 10);
            assert_eq!((spread.slot, spread.width), (0, 1));
        }
    }

    #[test]
    fn a_consumer_that_lost_most_of_a_poll_moves_to_another_window_and_narrows_back_when_calm() {
        let mut spread = Spread::new();
        for _ in 0..10 {
            let before = spread.slot;
            spread.after(200, 150);
            assert_ne!(spread.slot, before, "never the contended window again");
            assert!(spread.slot < spread.width && spread.width <= MAX_SPREAD);
        }
        assert_eq!(spread.width, MAX_SPREAD);
        for _ in 0..CALM_POLLS * 3 {
            spread.after(200, 0);
        }
        assert_eq!((spread.slot, spread.width), (0, 1), "back at the head");
    }
}
