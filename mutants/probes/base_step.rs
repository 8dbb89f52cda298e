//! Probe behind the fate of `rdp_quadrature.rs:331:13 replace * with / in base_step`
//! (mutants/fates.json). Not built by cargo: copy to examples/eq_probe.rs, run
//! `cargo run --release --locked --example eq_probe > a.txt`, apply the mutant
//! (`z.min(z / z) / 4.0`), run again into b.txt and compare the numbers (2026-12-03:
//! max relative difference 3.9e-13 on divergences, 3.7e-14 on epsilons).
use dpclaims::privacy::rdp_quadrature::{epsilon_subsampled_gaussian_with_orders, quadrature_orders, subsampled_gaussian_divergences};
fn main() {
    let mut out = String::new();
    for &q in &[1e-4, 1e-3, 0.01, 0.05, 0.2, 0.5, 1.0] {
        for &z in &[0.3, 0.5, 0.7, 0.9, 1.0, 1.1, 1.5, 2.0, 4.0, 8.0] {
            for &a in &[1.01, 1.5, 2.0, 3.7, 8.0, 32.0, 128.0, 256.0] {
                match subsampled_gaussian_divergences(q, z, a) {
                    Ok((u, d)) => out.push_str(&format!("{q} {z} {a} {u:e} {d:e}\n")),
                    Err(e) => out.push_str(&format!("{q} {z} {a} err {e}\n")),
                }
            }
            let orders = quadrature_orders();
            match epsilon_subsampled_gaussian_with_orders(&[(q, z, 1000)], 1e-5, &orders) {
                Ok((e, o)) => out.push_str(&format!("eps {q} {z} {e:e} {o}\n")),
                Err(e) => out.push_str(&format!("eps {q} {z} err {e}\n")),
            }
        }
    }
    print!("{out}");
}
