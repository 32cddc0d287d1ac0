//! Answers read once: a service answers many requests with the very same bytes (the first
//! page for every body that asks for it, one refusal for every body it turns away: of the
//! 2,003 answers of `fuzz --count 1000 --seed 1` against the reference server, 406 are
//! distinct, 0.7 MB of 14.5 MB). The typed fast path's read ([`wire::read`]) is a function of
//! the bytes alone, so the client reads an answer's bytes once and gives a later answer with
//! exactly the same bytes the digest of the first.
//!
//! A hash of the length and both ends of a body picks the candidates; the bytes are then
//! compared whole (outside the lock), so no collision (nor a service that crafts one) can hand
//! an answer another answer's digest. What is kept is bounded: a copy of each body of up to
//! [`MAX_BODY`] bytes (a copy, so that what is counted is what is held: an answer's own buffer
//! may be larger than its bytes), [`MAX_HELD`] bytes and [`MAX_ENTRIES`] bodies in all, the
//! oldest let go first, and at most [`MAX_ALIKE`] bodies of one hash (bodies made to look alike
//! cost a bounded comparison).

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;

use crate::service::lazy_json::LazyJson;
use crate::spec::wire::{self, Digest};

/// The largest body kept (a larger one is read every time: it is rarely repeated, and
/// keeping it would hold its memory).
const MAX_BODY: usize = 256 * 1024;
/// The bytes of all the bodies kept.
const MAX_HELD: usize = 8 * 1024 * 1024;
/// The bodies kept.
const MAX_ENTRIES: usize = 1024;
/// How much of each end of a body its hash covers.
const ENDS: usize = 256;
/// The bodies kept under one hash.
const MAX_ALIKE: usize = 4;

/// A body read, and what the fast path made of it (`None`: it was in doubt, and takes the
/// tree path).
struct Entry {
    bytes: Bytes,
    digest: Option<Arc<Digest>>,
}

#[derive(Default)]
struct Held {
    by_hash: HashMap<u64, Vec<Entry>>,
    /// Hashes in the order their bodies were kept (one per body).
    order: VecDeque<(u64, Bytes)>,
    bytes: usize,
}

/// The digests of the answers a client read, shared by its clones.
#[derive(Default)]
pub struct ReadMemo {
    held: Mutex<Held>,
    hasher: foldhash::fast::RandomState,
}

impl std::fmt::Debug for ReadMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("ReadMemo")
            .field("bodies", &held.order.len())
            .field("bytes", &held.bytes)
            .finish()
    }
}

impl ReadMemo {
    /// [`LazyJson::parse`] of `bytes`, reading them with the fast path only if the same bytes
    /// were not read before.
    pub fn parse(&self, bytes: Bytes) -> Result<LazyJson, serde_json::Error> {
        if bytes.len() > MAX_BODY {
            return LazyJson::parse(bytes);
        }
        let hash = self.hash(&bytes);
        let digest = match self.find(hash, &bytes) {
            Some(digest) => digest,
            None => {
                let digest = wire::read(&bytes).map(Arc::new);
                self.keep(hash, &bytes, digest.clone());
                digest
            }
        };
        match digest {
            Some(digest) => Ok(LazyJson::read_fast(bytes, digest)),
            None => LazyJson::parse_tree(bytes),
        }
    }

    fn hash(&self, bytes: &[u8]) -> u64 {
        let head = &bytes[..bytes.len().min(ENDS)];
        let tail = &bytes[bytes.len().saturating_sub(ENDS)..];
        self.hasher.hash_one((bytes.len(), head, tail))
    }

    /// What the fast path made of these very bytes, if they were read before.
    #[allow(clippy::option_option)] // not read, read and in doubt, read and conforming
    fn find(&self, hash: u64, bytes: &[u8]) -> Option<Option<Arc<Digest>>> {
        // The candidates are taken under the lock (their buffers shared, not copied) and
        // compared after it.
        let candidates: Vec<(Bytes, Option<Arc<Digest>>)> = {
            let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            held.by_hash
                .get(&hash)?
                .iter()
                .map(|e| (e.bytes.clone(), e.digest.clone()))
                .collect()
        };
        candidates
            .into_iter()
            .find(|(kept, _)| kept[..] == *bytes)
            .map(|(_, digest)| digest)
    }

    fn keep(&self, hash: u64, bytes: &[u8], digest: Option<Arc<Digest>>) {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        let held = &mut *held;
        let bucket = held.by_hash.entry(hash).or_default();
        // Another task may have read the same bytes meanwhile.
        if bucket.len() >= MAX_ALIKE || bucket.iter().any(|e| e.bytes[..] == *bytes) {
            return;
        }
        let bytes = Bytes::copy_from_slice(bytes);
        bucket.push(Entry {
            bytes: bytes.clone(),
            digest,
        });
        held.bytes += bytes.len();
        held.order.push_back((hash, bytes));
        while held.bytes > MAX_HELD || held.order.len() > MAX_ENTRIES {
            let Some((hash, oldest)) = held.order.pop_front() else {
                break;
            };
            held.bytes -= oldest.len();
            if let Some(bucket) = held.by_hash.get_mut(&hash) {
                // The very buffer kept (equal bytes are never kept twice).
                bucket.retain(|e| e.bytes.as_ptr() != oldest.as_ptr());
                if bucket.is_empty() {
                    held.by_hash.remove(&hash);
                }
            }
        }
    }

    /// How many bodies and bytes are kept.
    #[cfg(test)]
    fn held(&self) -> (usize, usize) {
        let held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        (held.order.len(), held.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// A conforming page of the reference server's first `malls` malls (the bench's sample).
    fn page(malls: usize) -> Value {
        serde_json::from_slice(&crate::bench::validation::mall_page(malls).bytes).unwrap()
    }

    fn bytes(v: &Value) -> Bytes {
        Bytes::from(serde_json::to_vec(v).unwrap())
    }

    #[test]
    fn the_same_bytes_are_read_once_and_as_the_plain_read_reads_them() {
        let memo = ReadMemo::default();
        let bodies = [
            serde_json::to_vec(&page(5)).unwrap(),
            br#"{"success":false,"code":"4001","msg":"bad","data":null}"#.to_vec(),
            br#"{"success":true,"code":"0000","msg":"","data":[],"data":[]}"#.to_vec(),
            b"[1, 2".to_vec(),
        ];
        for body in bodies {
            let first = memo.parse(Bytes::from(body.clone()));
            let again = memo.parse(Bytes::from(body.clone()));
            let plain = LazyJson::parse(Bytes::from(body.clone()));
            match (first, again, plain) {
                (Ok(first), Ok(again), Ok(plain)) => {
                    assert_eq!(first.digest(), plain.digest());
                    assert_eq!(again.digest(), plain.digest());
                    assert_eq!(again.value(), plain.value());
                    assert_eq!(
                        format!("{:?}", again.findings()),
                        format!("{:?}", plain.findings())
                    );
                    if let (Some(a), Some(b)) = (first.digest(), again.digest()) {
                        assert!(
                            std::ptr::eq(a, b),
                            "the second answer took the first's digest"
                        );
                    }
                }
                (Err(a), Err(b), Err(c)) => {
                    assert_eq!(a.to_string(), c.to_string());
                    assert_eq!(b.to_string(), c.to_string());
                }
                _ => panic!("the memo and the plain read disagree on {body:?}"),
            }
        }
        assert!(
            memo.parse(bytes(&page(5))).unwrap().digest().is_some(),
            "a reference page is read by the fast path"
        );
    }

    #[test]
    fn bodies_alike_at_both_ends_are_told_apart_by_their_bytes() {
        let memo = ReadMemo::default();
        // The same length and the same 256 bytes at each end; one mall number in the middle
        // differs.
        let a = page(40);
        let mut b = a.clone();
        let sn = b["data"][20]["mallSn"].as_str().unwrap().to_string();
        let other: String = sn.chars().rev().collect();
        assert_ne!(sn, other);
        b["data"][20]["mallSn"] = json!(other);
        let (a, b) = (bytes(&a), bytes(&b));
        assert_eq!(a.len(), b.len());
        assert_eq!(memo.hash(&a), memo.hash(&b));
        let sn_of = |json: &LazyJson| match json.digest() {
            Some(Digest::Envelope(e)) => e.malls.as_ref().unwrap()[20].sn.clone(),
            other => panic!("not a conforming page: {other:?}"),
        };
        assert_eq!(sn_of(&memo.parse(a).unwrap()), sn);
        assert_eq!(sn_of(&memo.parse(b).unwrap()), other);
        assert_eq!(memo.held().0, 2);
    }

    #[test]
    fn bodies_made_to_look_alike_are_kept_a_few_and_still_read_right() {
        let memo = ReadMemo::default();
        let base = page(40);
        let bodies: Vec<(Bytes, String)> = (0..10)
            .map(|i| {
                let mut v = base.clone();
                let sn = format!("{:0>10}", 1_000_000 + i);
                v["data"][20]["mallSn"] = json!(sn.clone());
                (bytes(&v), sn)
            })
            .collect();
        for round in 0..2 {
            for (body, sn) in &bodies {
                let read = memo.parse(body.clone()).unwrap();
                let Some(Digest::Envelope(e)) = read.digest() else {
                    panic!("round {round}: not read as a conforming page");
                };
                assert_eq!(&e.malls.as_ref().unwrap()[20].sn, sn, "round {round}");
            }
        }
        assert_eq!(memo.held().0, MAX_ALIKE);
    }

    #[test]
    fn what_is_kept_stays_within_its_bounds() {
        let memo = ReadMemo::default();
        for i in 0..3000 {
            let body = format!(r#"{{"success":false,"code":"{i}","msg":"no","data":null}}"#);
            memo.parse(Bytes::from(body)).unwrap();
        }
        assert_eq!(memo.held().0, MAX_ENTRIES);
        let mut big = page(5);
        big["msg"] = json!("x".repeat(MAX_BODY));
        let big = bytes(&big);
        assert!(big.len() > MAX_BODY);
        assert!(memo.parse(big).unwrap().digest().is_some());
        assert_eq!(
            memo.held().0,
            MAX_ENTRIES,
            "a body above the limit is not kept"
        );
        let half = |i: usize| {
            let mut v = page(5);
            // The number at both ends of `msg`, so that it falls in one end of the body
            // whatever the order of the members: the bodies do not share one hash.
            v["msg"] = json!(format!("{i:06}{}{i:06}", "m".repeat(MAX_BODY / 2)));
            bytes(&v)
        };
        let one = half(0).len();
        assert!(one <= MAX_BODY, "{one}");
        for i in 0..(2 * MAX_HELD / one) {
            memo.parse(half(i)).unwrap();
        }
        // Twice the room was read: the oldest were let go, and what is kept fills the room.
        let (bodies, held) = memo.held();
        assert!(held <= MAX_HELD && held > MAX_HELD - one, "{held}");
        assert!(bodies <= MAX_ENTRIES);
    }
}
