//! Shards: `squall run --shard K/N` runs the K-th of N disjoint parts of the cases, as WPT's
//! chunked runs do, so that N machines judge one implementation and `squall report merge`
//! joins their reports. A case's shard depends on its id alone (a stable hash), so it stays in
//! its shard when other cases are added, removed or filtered out.

use std::fmt;
use std::str::FromStr;

/// The K-th of N parts (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    index: u32,
    count: u32,
}

/// A `--shard` value that is not `K/N` with 1 ≤ K ≤ N.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a shard: write K/N, with 1 <= K <= N (`--shard 2/4` runs the second of four parts)")]
pub struct BadShard(pub String);

impl Shard {
    /// Shard `index` (1-based) of `count`.
    pub fn new(index: u32, count: u32) -> Result<Shard, BadShard> {
        if count == 0 || index == 0 || index > count {
            return Err(BadShard(format!("{index}/{count}")));
        }
        Ok(Shard { index, count })
    }

    /// Whether the case with `id` belongs to this shard.
    pub fn contains(&self, id: &str) -> bool {
        fnv1a(id.as_bytes()) % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// K.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// N.
    pub fn count(&self) -> u32 {
        self.count
    }
}

impl FromStr for Shard {
    type Err = BadShard;

    fn from_str(text: &str) -> Result<Shard, BadShard> {
        let bad = || BadShard(text.to_owned());
        let (index, count) = text.split_once('/').ok_or_else(bad)?;
        let number = |part: &str| part.trim().parse::<u32>().map_err(|_| bad());
        Shard::new(number(index)?, number(count)?).map_err(|_| bad())
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// FNV-1a, 64 bits: stable across platforms, releases and runs (std's hasher is not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_read_as_k_of_n_and_refuse_anything_else() {
        assert_eq!("2/4".parse::<Shard>().map(|s| (s.index(), s.count())), Ok((2, 4)));
        assert_eq!("1/1".parse::<Shard>().map(|s| s.to_string()), Ok("1/1".to_owned()));
        for bad in ["0/4", "5/4", "1/0", "2", "a/b", "", "1/2/3"] {
            let error = bad.parse::<Shard>().expect_err(bad);
            assert!(error.to_string().starts_with(&format!("`{bad}` is not a shard")), "{error}");
        }
    }

    #[test]
    fn every_id_is_in_exactly_one_shard_and_the_hash_is_stable() {
        let ids: Vec<String> = (0..500).map(|n| format!("feature-{}/case-{n}", n % 7)).collect();
        for count in 1..=6 {
            let shards: Vec<Shard> = (1..=count).map(|k| Shard::new(k, count).expect("a shard")).collect();
            for id in &ids {
                assert_eq!(shards.iter().filter(|s| s.contains(id)).count(), 1, "{id} in {count} shards");
            }
            // Each shard gets some of 500 ids.
            assert!(shards.iter().all(|s| ids.iter().any(|id| s.contains(id))));
        }
        // The published FNV-1a test vector: a changed hash would move cases between shards.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
