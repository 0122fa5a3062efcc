//! A sorted set with Redis semantics: unique members ordered by score, then by member bytes.

use crate::types::{Member, Score};
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ZSet {
    by_member: HashMap<Member, Score>,
    ordered: BTreeSet<(Score, Member)>,
}

impl ZSet {
    /// Adds or re-scores a member (ZADD).
    pub fn insert(&mut self, member: Member, score: Score) {
        if let Some(old) = self.by_member.insert(member.clone(), score) {
            self.ordered.remove(&(old, member.clone()));
        }
        self.ordered.insert((score, member));
    }

    /// Removes a member, returning its score (ZREM).
    pub fn remove(&mut self, member: &Member) -> Option<Score> {
        let score = self.by_member.remove(member)?;
        self.ordered.remove(&(score, member.clone()));
        Some(score)
    }

    pub fn score(&self, member: &Member) -> Option<Score> {
        self.by_member.get(member).copied()
    }

    pub fn len(&self) -> usize {
        self.by_member.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_member.is_empty()
    }

    /// Members in order from rank `offset` (ZRANGE .. WITHSCORES).
    pub fn range(&self, offset: usize, limit: usize) -> impl Iterator<Item = (Score, &Member)> {
        self.iter().skip(offset).take(limit)
    }

    /// Members with a score at most `max`, in order (ZRANGEBYSCORE -inf max).
    pub fn up_to(&self, max: Score) -> impl Iterator<Item = (Score, &Member)> {
        self.iter().take_while(move |(s, _)| *s <= max)
    }

    /// Members with a score greater than `min`, in order (ZRANGEBYSCORE (min +inf).
    pub fn after(&self, min: Score) -> impl Iterator<Item = (Score, &Member)> {
        self.iter().skip_while(move |(s, _)| *s <= min)
    }

    /// Every member in order.
    pub fn iter(&self) -> impl Iterator<Item = (Score, &Member)> {
        self.ordered.iter().map(|(s, m)| (*s, m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_order_by_score_then_bytes_and_rescore_in_place() {
        let mut z = ZSet::default();
        z.insert("b".into(), Score(1.0));
        z.insert("a".into(), Score(1.0));
        z.insert("c".into(), Score(0.5));
        let order: Vec<_> = z.range(0, 10).map(|(_, m)| m.clone()).collect();
        assert_eq!(
            order,
            vec!["c".into(), "a".into(), "b".into()] as Vec<Member>
        );
        z.insert("c".into(), Score(2.0));
        assert_eq!(z.len(), 3);
        assert_eq!(
            z.range(2, 1).next().map(|(_, m)| m.clone()),
            Some("c".into())
        );
        assert_eq!(z.up_to(Score(1.0)).count(), 2);
    }
}
