//! Probe behind the fates of `pld/loss.rs:270:51 replace + with * in StepLoss::discretise`
//! and `pld/loss.rs:278:27 replace || with && in StepLoss::discretise` (mutants/fates.json).
//! Not built by cargo: copy to examples/eq_probe.rs, run
//! `cargo run --release --locked --example eq_probe > a.txt`, apply one mutant, run again
//! into b.txt and compare the files: every step mass function's bits (a hash of every
//! mass, and the exact bits of its first index, length, mass beyond and below) over 480
//! (q, sigma, direction, spacing, tail) points, and the PLD bracket's bits on 8 compositions.
use dpclaims::privacy::pld::loss::{Direction, StepLoss};
use dpclaims::privacy::pld::pld_epsilon;
use dpclaims::privacy::Phase;

fn main() {
    let mut out = String::new();
    for q in [1e-4, 1e-3, 0.01, 0.1, 0.3, 1.0] {
        for sigma in [0.1, 0.3, 0.5, 1.0, 4.0, 30.0] {
            for direction in [Direction::Remove, Direction::Add] {
                let s = StepLoss { q, sigma, direction };
                for dl in [1e-4, 1e-2, 0.3, 5.0] {
                    for tail in [1e-14, 1e-6] {
                        let p = s.discretise(dl, tail);
                        let mut h: u64 = 0xcbf29ce484222325;
                        for m in &p.mass {
                            h = (h ^ m.to_bits()).wrapping_mul(0x100000001b3);
                        }
                        out.push_str(&format!(
                            "{q} {sigma} {direction:?} {dl} {tail}: {} {} {h:016x} {:016x} {:016x}\n",
                            p.first,
                            p.mass.len(),
                            p.beyond.to_bits(),
                            p.below.to_bits()
                        ));
                    }
                }
            }
        }
    }
    for (q, z, t) in [(1.0, 1.0, 10), (0.01, 1.1, 1000), (0.001, 0.6, 10_000), (0.2, 3.0, 50),
                      (1.0, 20.0, 1), (0.05, 0.5, 200), (0.5, 2.0, 100), (1e-4, 0.8, 100_000)] {
        match pld_epsilon(&[Phase::new(q, z, t)], 1e-5, 0.01) {
            Ok(b) => out.push_str(&format!("pld {q} {z} {t}: {b:?}\n")),
            Err(e) => out.push_str(&format!("pld {q} {z} {t}: err {e}\n")),
        }
    }
    print!("{out}");
}
