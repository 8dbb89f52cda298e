//! Random streams: the only place in dpclaims where a generator is built.
//!
//! Every random draw of the project comes from a [`ChaCha8Rng`] whose 32-byte seed is
//! derived from a *path*: the master seed and a list of labels (claim id, variant,
//! sweep point, replicate, purpose such as `"data"` or `"noise"`). The derivation is
//!
//! ```text
//! seed = SHA-256( "dpclaims/rng/v1" || 0x00
//!                 || master_seed as u64 little-endian
//!                 || for each label: (label length as u64 little-endian) || label bytes )
//! ```
//!
//! so it depends only on the path, never on execution order or thread count: any single
//! result can be reproduced alone. The length prefix makes the encoding injective
//! (`["ab", "c"]` and `["a", "bc"]` give different seeds). The version tag `v1` changes if
//! the derivation ever changes; `tests` pin the first outputs of a few streams so that a
//! dependency upgrade that changes the streams is caught.
//!
//! Consumers receive `&mut impl Rng` and never build their own generator (STYLE:
//! "seeded by default, RNG passed in").

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use std::fmt::Display;

/// The one generator type of the project (pinned: ChaCha8).
pub type StreamRng = ChaCha8Rng;

/// Domain-separation tag of the derivation; bump it if the derivation changes.
const TAG: &[u8] = b"dpclaims/rng/v1";

/// A stream's address: master seed plus labels. Cheap to clone and extend.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SeedPath {
    master: u64,
    labels: Vec<String>,
}

impl SeedPath {
    /// The root of every stream of a run.
    pub fn new(master: u64) -> Self {
        Self {
            master,
            labels: Vec::new(),
        }
    }

    /// A child path with one more label (e.g. `path.child("replicate").child(3)`).
    pub fn child(&self, label: impl Display) -> Self {
        let mut labels = self.labels.clone();
        labels.push(label.to_string());
        Self {
            master: self.master,
            labels,
        }
    }

    /// The master seed this path starts from.
    pub fn master(&self) -> u64 {
        self.master
    }

    /// The labels of this path, in order.
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The derived 32-byte ChaCha8 seed (see the module docs for the derivation).
    pub fn seed(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(TAG);
        h.update([0u8]);
        h.update(self.master.to_le_bytes());
        for l in &self.labels {
            h.update((l.len() as u64).to_le_bytes());
            h.update(l.as_bytes());
        }
        h.finalize().into()
    }

    /// A fresh generator at the start of this path's stream.
    pub fn rng(&self) -> StreamRng {
        StreamRng::from_seed(self.seed())
    }

    /// Shorthand for `self.child(label).rng()`.
    pub fn rng_for(&self, label: impl Display) -> StreamRng {
        self.child(label).rng()
    }
}

impl Display for SeedPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.master)?;
        for l in &self.labels {
            write!(f, "/{l}")?;
        }
        Ok(())
    }
}

/// The words of one stream, kept as they are drawn, so that several runs that read the
/// same stream share one generation of it (a tuned TP-TopK unit trains up to 18 runs,
/// every one on its `train` stream: N uniforms a step for the Poisson sample, about a
/// tenth of a step's time in ChaCha). Readers ([`TapeRng`]) get the same words in the
/// same order as [`SeedPath::rng`]: ChaCha8's output is a sequence of 32-bit words, of
/// which `next_u32` takes one, `next_u64` two (low word first) and `fill_bytes` as many
/// as it needs (little-endian, the last one whole even when only part of it is used);
/// the test `a_tape_reads_the_stream_word_for_word` holds the two to it.
#[derive(Debug)]
pub struct Tape {
    path: SeedPath,
    rng: StreamRng,
    /// The words drawn so far, in chunks of [`TAPE_CHUNK`] (shared with the readers, so
    /// a reader never copies them).
    chunks: Vec<std::rc::Rc<[u32]>>,
}

/// Words generated at a time when a reader passes the end of the tape.
const TAPE_CHUNK: usize = 1024;

impl Tape {
    /// An empty tape of `path`'s stream.
    pub fn new(path: SeedPath) -> Self {
        Self {
            rng: path.rng(),
            path,
            chunks: Vec::new(),
        }
    }

    /// The stream this tape holds.
    pub fn path(&self) -> &SeedPath {
        &self.path
    }

    /// Chunk `c` of the stream, drawn if no reader has reached it yet.
    fn chunk(&mut self, c: usize) -> std::rc::Rc<[u32]> {
        while self.chunks.len() <= c {
            let mut words = vec![0u32; TAPE_CHUNK];
            for w in &mut words {
                *w = rand::Rng::next_u32(&mut self.rng);
            }
            self.chunks.push(words.into());
        }
        self.chunks[c].clone()
    }
}

/// A generator reading a [`Tape`] from its start: the stream of the tape's path, word
/// for word, whoever else reads the tape before or after. It holds the chunk it reads
/// (shared, not copied), so a draw does not touch the tape itself.
#[derive(Debug)]
pub struct TapeRng<'a> {
    tape: &'a std::cell::RefCell<Tape>,
    /// The chunk being read, its index, and the next word in it.
    cur: std::rc::Rc<[u32]>,
    c: usize,
    i: usize,
}

impl<'a> TapeRng<'a> {
    pub fn new(tape: &'a std::cell::RefCell<Tape>) -> Self {
        let cur = tape.borrow_mut().chunk(0);
        Self {
            tape,
            cur,
            c: 0,
            i: 0,
        }
    }

    #[cold]
    fn next_chunk(&mut self) {
        self.c += 1;
        self.cur = self.tape.borrow_mut().chunk(self.c);
        self.i = 0;
    }

    #[inline]
    fn word(&mut self) -> u32 {
        if self.i == self.cur.len() {
            self.next_chunk();
        }
        let w = self.cur[self.i];
        self.i += 1;
        w
    }
}

impl rand::TryRng for TapeRng<'_> {
    type Error = std::convert::Infallible;

    #[inline]
    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok(self.word())
    }

    #[inline]
    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        let (lo, hi) = if self.i + 2 <= self.cur.len() {
            self.i += 2;
            (self.cur[self.i - 2], self.cur[self.i - 1])
        } else {
            (self.word(), self.word())
        };
        Ok((u64::from(hi) << 32) | u64::from(lo))
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        let mut whole = dst.chunks_exact_mut(4);
        for chunk in whole.by_ref() {
            if self.i == self.cur.len() {
                self.next_chunk();
            }
            chunk.copy_from_slice(&self.cur[self.i].to_le_bytes());
            self.i += 1;
        }
        let rest = whole.into_remainder();
        if !rest.is_empty() {
            let w = self.word();
            rest.copy_from_slice(&w.to_le_bytes()[..rest.len()]);
        }
        Ok(())
    }
}

/// A short hex fingerprint (first 16 hex digits of SHA-256) of the exact bits of a
/// sequence of floats: equal fingerprints mean bit-identical results.
pub fn digest_f64s(values: impl IntoIterator<Item = f64>) -> String {
    let mut h = Sha256::new();
    for v in values {
        h.update(v.to_bits().to_le_bytes());
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn encoding_is_injective_on_label_boundaries() {
        let a = SeedPath::new(0).child("ab").child("c").seed();
        let b = SeedPath::new(0).child("a").child("bc").seed();
        assert_ne!(a, b);
        assert_ne!(SeedPath::new(0).seed(), SeedPath::new(1).seed());
    }

    /// Any mix of `next_u32`, `next_u64` and `fill_bytes` of any length (across ChaCha's
    /// block boundaries) reads from a tape exactly what the stream gives, for a first
    /// reader and for a second one after it; a tape of another path does not.
    #[test]
    fn a_tape_reads_the_stream_word_for_word() {
        let path = SeedPath::new(5).child("tape");
        let tape = std::cell::RefCell::new(Tape::new(path.clone()));
        let mut ops = SeedPath::new(6).rng();
        let script: Vec<(u32, usize)> = (0..3000)
            .map(|_| (ops.next_u32() % 3, (ops.next_u32() % 23) as usize))
            .collect();
        let read = |r: &mut dyn FnMut(u32, usize) -> Vec<u8>| -> Vec<u8> {
            script.iter().flat_map(|&(op, len)| r(op, len)).collect()
        };
        fn step(r: &mut impl Rng, op: u32, len: usize) -> Vec<u8> {
            match op {
                0 => r.next_u32().to_le_bytes().to_vec(),
                1 => r.next_u64().to_le_bytes().to_vec(),
                _ => {
                    let mut b = vec![0u8; len];
                    r.fill_bytes(&mut b);
                    b
                }
            }
        }
        let mut direct = path.rng();
        let want = read(&mut |op, len| step(&mut direct, op, len));
        for reader in 0..2 {
            let mut r = TapeRng::new(&tape);
            let got = read(&mut |op, len| step(&mut r, op, len));
            assert!(got == want, "reader {reader} differs from the stream");
        }
        // A u64 across a chunk boundary: one word before it, one after.
        let mut direct = path.rng();
        let mut r = TapeRng::new(&tape);
        for _ in 0..TAPE_CHUNK - 1 {
            assert_eq!(r.next_u32(), direct.next_u32());
        }
        assert_eq!(r.next_u64(), direct.next_u64());
        let other = std::cell::RefCell::new(Tape::new(SeedPath::new(5).child("other")));
        let mut r = TapeRng::new(&other);
        assert!(read(&mut |op, len| step(&mut r, op, len)) != want);
    }

    #[test]
    fn same_path_same_stream() {
        let p = SeedPath::new(7).child("claim").child(3);
        let mut r1 = p.rng();
        let mut r2 = p.clone().rng();
        for _ in 0..100 {
            assert_eq!(r1.next_u64(), r2.next_u64());
        }
    }

    /// Pins the derivation and ChaCha8's output: a change of either (dependency
    /// upgrade, edit of the encoding) changes every number dpclaims produces.
    #[test]
    fn pinned_first_outputs() {
        let p = SeedPath::new(0).child("claim").child(1).child("noise");
        let mut r = p.rng();
        let got: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        assert_eq!(
            p.seed()[..8],
            [0x5c, 0x28, 0x91, 0x04, 0xd1, 0x17, 0xfc, 0x04],
            "seed derivation changed"
        );
        assert_eq!(
            got,
            [
                1670016562745860322,
                298823212166867440,
                12891342961373262143
            ],
            "ChaCha8 stream changed"
        );
        // The Gaussian sampler (rand_distr's ziggurat) is part of the contract too.
        let z: f64 = rand_distr::Distribution::sample(&rand_distr::StandardNormal, &mut r);
        assert_eq!(
            z.to_bits(),
            PINNED_NORMAL_BITS,
            "StandardNormal changed: {z:e}"
        );
    }
    const PINNED_NORMAL_BITS: u64 = 0x3fe1_5e92_0001_8ace;
}
